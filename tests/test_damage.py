"""Damaged, hostile or foreign-encoded files: derived state is rebuilt, hand-written bytes are kept,
and the work done on any input file is bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from keeper.capture import saving, transcript
from keeper.memory.document import SaveInput
from keeper.store import config, identity, paths
from tests.helpers import run_hook

SESSION = "s-damaged"


def project_of(folder: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(folder)))


@pytest.mark.parametrize(
    "state",
    [
        {"offset": -5},
        {"offset": "12"},
        {"offset": True},
        {"file": ".."},
        {"file": "/etc/passwd"},
        {"file": "../../memory.md"},
        {"file": 42},
        {"activity": {"prompts": 5, "tools": [1, 2], "files": "x", "prompt_count": -3, "gap": "yes"}},
        {"activity": "not a digest"},
        {"facts": {"Tool uses": 5, "Branch": ["x"]}},
        [1, 2, 3],
        "garbage that is no JSON at all {",
    ],
    ids=repr,
)
def test_damaged_session_state_reads_as_empty_and_the_record_is_rebuilt(
    state: Any, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.transcripts import realistic

    t = realistic(tmp_path / "t.jsonl")
    project = project_of(project_dir)
    Path(project.session_state).mkdir(parents=True)
    raw = state if isinstance(state, str) else json.dumps(state)
    Path(project.session_file(SESSION, "json")).write_text(raw, encoding="utf-8")
    payload = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("stop", {**payload, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    run_hook("session-end", {**payload, "reason": "other"}, monkeypatch, capsys)
    records = list(Path(project.sessions).glob("*.md"))
    assert len(records) == 1 and "Fix the discount stacking bug" in records[0].read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "provenance", [{"state": "abc"}, {"recent": {"line": "x"}}, {"state": [1, None]}, [1, 2], "garbage {"], ids=repr
)
def test_damaged_provenance_keeps_every_hand_line(provenance: Any, project_dir: Path) -> None:
    project, cfg = project_of(project_dir), config.load(None)
    saving.save(project, cfg, SaveInput(state=["first"]), "s1")
    hand = "\n- a\n- b\n- my own note\n"
    Path(project.memory).write_text(Path(project.memory).read_text(encoding="utf-8") + hand, encoding="utf-8")
    raw = provenance if isinstance(provenance, str) else json.dumps(provenance)
    Path(project.state, "memory.json").write_text(raw, encoding="utf-8")
    saving.save(project, cfg, SaveInput(state=["second"], summary="again"), "s2")
    text = Path(project.memory).read_text(encoding="utf-8")
    assert "- a\n- b\n- my own note\n" in text and "- second" in text


def test_a_damaged_config_cache_entry_is_parsed_again(project_dir: Path, store: Path) -> None:
    yaml_file = project_dir / ".claude" / "keeper.yaml"
    yaml_file.parent.mkdir()
    yaml_file.write_text("save_every: 4\n", encoding="utf-8")
    assert config.load(str(project_dir)).save_every == 4
    cache = next((store / "cache").glob("config-*.json"))
    entry = json.loads(cache.read_text())
    for bad in ({"save_every": "x"}, {"save_every": -1}, {"unknown": 1}, "values"):
        entry["values"] = bad
        cache.write_text(json.dumps(entry))
        cfg = config.load(str(project_dir))
        assert cfg.save_every == 4 and cfg.warnings == []


def test_a_hand_edit_in_latin_1_keeps_its_bytes_through_saves(project_dir: Path) -> None:
    project, cfg = project_of(project_dir), config.load(None)
    saving.save(project, cfg, SaveInput(decisions=["First"]), "s1")
    hand = "- Caf\xe9 au lait, na\xefve r\xe9sum\xe9 (my own line)\n".encode("latin-1")
    Path(project.memory).write_bytes(Path(project.memory).read_bytes() + hand)
    saving.save(project, cfg, SaveInput(decisions=["Second"], state=["now"], summary="sum"), "s2")
    data = Path(project.memory).read_bytes()
    assert hand in data and b"- Second (" in data


def test_a_huge_transcript_without_newlines_is_read_within_a_byte_budget(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as fh:
        fh.truncate(10 << 30)  # 10 GiB, sparse: no newline anywhere
    read = [0]
    real_open = open

    class Counting:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def __getattr__(self, name: str) -> Any:
            attr = getattr(self.fh, name)
            if name not in ("read", "readline"):
                return attr

            def counted(*args: Any) -> bytes:
                data: bytes = attr(*args)
                read[0] += len(data)
                return data

            return counted

    monkeypatch.setattr(transcript, "open", lambda *a, **k: Counting(real_open(*a, **k)), raising=False)
    payload = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(huge)}
    run_hook("stop", {**payload, "stop_hook_active": False, "last_assistant_message": "x"}, monkeypatch, capsys)
    assert read[0] <= transcript.TAIL_BUDGET + (4 << 20)  # the tail and the head's first prompt, never the file


@pytest.mark.parametrize(
    "garbage", ["a\x00b\n", "\n\n", "../../etc/passwd\n", "/etc/passwd\n", "x\\y.md\n", "sessions\n"]
)
def test_a_damaged_newest_sessions_list_still_gives_the_briefing(
    garbage: str, project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, cfg = project_of(project_dir), config.load(None)
    saving.save(project, cfg, SaveInput(decisions=["Money is integer cents"]), "s1")
    Path(project.state, paths.NEWEST_SESSIONS).write_text(garbage, encoding="utf-8")
    reply = run_hook(
        "session-start", {"session_id": "s2", "cwd": str(project_dir), "source": "startup"}, monkeypatch, capsys
    )
    assert "Money is integer cents" in reply["hookSpecificOutput"]["additionalContext"]
    saving.save(project, cfg, SaveInput(summary="again"), "s3")
    kept = Path(project.state, paths.NEWEST_SESSIONS).read_text(encoding="utf-8").split("\n")
    assert all(name.endswith(".md") and "/" not in name and "\x00" not in name for name in kept if name)
