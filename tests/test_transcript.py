"""Reading Claude Code transcripts: every record kind, bad lines, big files, and the session record."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

import pytest

from keeper import redact
from keeper.capture import saving, transcript
from keeper.memory.document import SaveInput
from keeper.store import config, identity, markers, paths, sessions
from tests.helpers import run_hook
from tests.transcripts import SESSION, Transcript, realistic


def digest(path: Path) -> transcript.Activity:
    activity = transcript.Activity(clean=redact.redact)
    transcript.update(activity, str(path), 0)
    return activity


def test_every_record_kind_is_read_or_skipped_safely(tmp_path: Path) -> None:
    activity = digest(realistic(tmp_path / "t.jsonl").path)
    assert activity.prompts == [
        "Fix the discount stacking bug in checkout",
        "Now add a changelog entry and bump the version",
        "/keeper:recall discount rounding",
        "Deploy key is [REDACTED:anthropic-key] do not commit it",
    ]
    assert activity.prompt_count == 4  # tool results, meta, sidechain and compaction summaries are not prompts
    assert activity.files == {
        "/work/shop/src/checkout/discounts.py": "edited",
        "/work/shop/tests/test_stacking.py": "written",
    }
    assert activity.commands == ["pytest -q tests/test_cart.py", "git diff --stat"]
    assert activity.tools == {"Read": 1, "Edit": 2, "Bash": 2, "Write": 1}
    assert activity.error_count == 1 and activity.errors == ["Bash: 1 failed"]
    assert activity.compactions == 1 and activity.branch == "feature/checkout"
    assert activity.skipped == 2
    assert activity.first_ts.startswith("2026-11-20T10:00") and activity.last_ts > activity.first_ts


def test_reading_in_pieces_equals_reading_at_once(tmp_path: Path) -> None:
    path = realistic(tmp_path / "t.jsonl").path
    whole = digest(path).as_dict()
    data = path.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    partial = tmp_path / "growing.jsonl"
    partial.write_bytes(data[:half] + data[half : half + 25])  # the writer is mid-line
    activity = transcript.Activity(clean=redact.redact)
    offset = transcript.update(activity, str(partial), 0)
    assert offset == half  # the unfinished line waits
    partial.write_bytes(data)
    resumed = transcript.Activity(activity.as_dict(), clean=redact.redact)  # as the next hook would, from state
    assert transcript.update(resumed, str(partial), offset) == len(data)
    assert resumed.as_dict() == whole


def test_old_style_split_messages_count_each_tool_once(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("go")
    t.tool("Bash", {"command": "ls"}, tool_id="toolu_same")
    t.tool("Bash", {"command": "ls"}, tool_id="toolu_same")  # the same block written twice
    assert digest(t.path).tools == {"Bash": 1}


def test_over_long_lines_are_skipped_without_being_held(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("before the image")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * (5 << 20)}}
    t.add(t._base("user", message={"role": "user", "content": [image]}))
    t.prompt("after the image")
    tracemalloc.start()
    activity = digest(t.path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert activity.prompts == ["before the image", "after the image"] and activity.skipped == 1
    assert peak < 4 << 20, peak


@pytest.mark.parametrize("filler", ["tools", "one huge line"])
def test_a_long_unread_transcript_is_read_from_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filler: str
) -> None:
    monkeypatch.setattr(transcript, "TAIL_BUDGET", 4000 if filler == "tools" else 1 << 20)
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("the very first prompt")
    if filler == "tools":
        for i in range(60):
            t.tool("Bash", {"command": f"echo step {i}"})
    else:  # the tail starts inside a 6 MiB line: finding the next line must not load it
        t.add(t._base("user", message={"role": "user", "content": "B" * (6 << 20)}))
        t.tool("Bash", {"command": "echo step 59"})
    t.prompt("the latest prompt")
    tracemalloc.start()
    activity = digest(t.path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert activity.prompts == ["the very first prompt", "the latest prompt"]
    assert activity.gap and "echo step 59" in activity.commands and "echo step 0" not in activity.commands
    assert peak < 4 << 20, peak


def test_missing_or_hostile_transcripts_are_ignored(tmp_path: Path) -> None:
    assert not transcript.readable("/dev/zero")
    assert not transcript.readable(str(tmp_path))
    assert not transcript.readable(str(tmp_path / "missing.jsonl"))
    assert not transcript.readable("/etc/passwd")
    assert transcript.update(transcript.Activity(), str(tmp_path / "missing.jsonl"), 7) == 7


# -- the session record, through the hooks ------------------------------------------------------


def project_of(project_dir: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(project_dir)))


def record_text(project_dir: Path, session: str = SESSION) -> str:
    found = sessions.existing_file(project_of(project_dir), session)
    assert found, "no session file"
    return Path(found).read_text(encoding="utf-8")


def test_a_session_that_never_saved_still_has_its_record(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    first = record_text(project_dir)
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    assert record_text(project_dir) == first  # the same Stop twice: byte-identical
    for expected in (
        "- Branch: feature/checkout",
        f"- Transcript: {t.path}",
        "## Activity",
        "  1. Fix the discount stacking bug in checkout",
        "  - /work/shop/tests/test_stacking.py (written)",
        "  - `pytest -q tests/test_cart.py`",
        "- Tools: Bash 2, Edit 2, Read 1, Write 1",
        "- Errors (1):",
        "- Compactions: 1",
    ):
        assert expected in first, expected
    assert "sk-ant-api03" not in first


def test_saves_come_before_the_activity_in_one_record(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("stop", {**base, "stop_hook_active": False}, monkeypatch, capsys)
    saving.save(project_of(project_dir), config.load(None), SaveInput(summary="Fixed stacking; tests pass."), SESSION)
    t.prompt("one more thing")
    run_hook("stop", {**base, "stop_hook_active": False}, monkeypatch, capsys)
    text = record_text(project_dir)
    assert text.index("## Saves") < text.index("Fixed stacking; tests pass.") < text.index("## Activity")
    assert "  5. one more thing" in text and text.count("## Activity") == 1


def test_a_killed_session_is_completed_at_the_next_session_start(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "killed.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)  # then the terminal was killed
    project = project_of(project_dir)
    assert sessions.existing_file(project, SESSION) is None
    hour_ago = time.time() - 3600
    os.utime(t.path, (hour_ago, hour_ago))
    other = {"session_id": "next-session", "cwd": str(project_dir), "transcript_path": str(tmp_path / "next.jsonl")}
    run_hook("session-start", {**other, "source": "startup"}, monkeypatch, capsys)
    text = record_text(project_dir)
    assert "(last activity; the session ended without SessionEnd)" in text
    assert "  1. Fix the discount stacking bug in checkout" in text
    assert SESSION not in markers.unended(project)


def test_a_live_session_is_not_taken_for_a_killed_one(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "live.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    run_hook(
        "session-start", {"session_id": "other", "cwd": str(project_dir), "source": "startup"}, monkeypatch, capsys
    )
    assert SESSION in markers.unended(project_of(project_dir))  # its transcript is fresh: left alone


def test_compaction_keeps_the_record_and_brings_it_back(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "t.jsonl")
    saving.save(project_of(project_dir), config.load(None), SaveInput(decisions=["Money is integer cents"]), "earlier")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("pre-compact", {**base, "trigger": "auto", "custom_instructions": None}, monkeypatch, capsys)
    assert "- Compacted: " in record_text(project_dir) and "(auto)" in record_text(project_dir)
    reply = run_hook("session-start", {**base, "source": "compact"}, monkeypatch, capsys)
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert "Money is integer cents" in context
    assert "This session so far" in context and "Fix the discount stacking bug" in context


def test_the_record_is_exact_saves_apart_and_the_real_last_reply_kept(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "t.jsonl")
    t.tool("Bash", {"command": "keeper save <<'KEEPER'\nsummary: Fixed stacking\nKEEPER", "description": "save"})
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    reply = "Discount stacking is fixed: percentage codes now apply after fixed ones; all 48 tests pass."
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": reply}, monkeypatch, capsys)
    run_hook("stop", {**base, "stop_hook_active": True, "last_assistant_message": "Saved."}, monkeypatch, capsys)
    text = record_text(project_dir)
    assert f"- Last reply: {reply}" in text and "Last reply: Saved." not in text
    assert "- Saves to memory: 1" in text
    assert "keeper save" not in text.split("## Activity", 1)[1]  # not listed among the commands
    assert "  - `pytest -q tests/test_cart.py`" in text


def test_recall_returns_content_not_record_bookkeeping(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.recall import search

    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    assert "- Tool uses: 6 (0 saves)" in record_text(project_dir)  # as its Activity lists them
    for result in search.search(project_of(project_dir), "tool uses saves session started transcript", limit=10):
        for line in result.snippet.splitlines():
            assert not line.startswith(("- Tool uses:", "- Session id:", "- Started:", "- Transcript:")), line


def test_what_keeper_puts_in_front_of_claude_from_files_it_did_not_write_is_redacted(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json as json_module

    from keeper.cli import main

    token = "ghp_" + "R" * 36
    t = realistic(tmp_path / "leaky.jsonl")
    t.prompt(f"use the token {token} to push")
    assert main(["transcript", str(t.path)]) == 0
    out = capsys.readouterr().out
    assert token not in out and "[REDACTED:github-token]" in out
    assert main(["transcript", str(t.path), "--json"]) == 0
    assert token not in capsys.readouterr().out
    project = project_of(project_dir)
    saving.save(project, config.load(None), SaveInput(decisions=["Deploys go through the release bot"]), "s1")
    with open(project.memory, "a", encoding="utf-8") as fh:  # a hand edit: Keeper never redacted it
        fh.write(f"\n## Notes\n\n- the release bot pushes with {token}\n")
    assert main(["recall", "release bot pushes"]) == 0
    shown = capsys.readouterr().out
    assert token not in shown and "release bot" in shown
    assert main(["recall", "release bot pushes", "--json"]) == 0
    listed = capsys.readouterr().out
    assert token not in listed
    found = json_module.loads(listed)
    assert main(["expand", found[0]["id"]]) == 0
    assert token not in capsys.readouterr().out


def test_the_help_and_the_readme_name_every_agent_whose_transcript_it_reads(tmp_path: Path) -> None:
    """`keeper transcript` reads Gemini CLI's chats and OpenCode's messages too; its help and the README
    said "a Claude Code transcript or Codex rollout", so a Gemini or OpenCode user took it for not theirs."""
    import subprocess
    import sys

    from tests.conftest import REPO

    shown = subprocess.run(
        [sys.executable, "-m", "keeper", "--help"], capture_output=True, text=True, check=True
    ).stdout
    line = " ".join(shown.split("transcript", 1)[1].split("status", 1)[0].split())
    readme = next(
        row for row in (REPO / "README.md").read_text(encoding="utf-8").splitlines() if "`keeper transcript" in row
    )
    for agent in ("Claude Code", "Codex", "Gemini", "OpenCode"):
        assert agent in line and agent in readme, agent


_OUT_OF_RANGE = [
    ('{"type": "user", "timestamp": "9999-12-31T23:59:59-14:00", "message": {"role": "user", "content": "%s"}}'),
    ('{"type": "user", "timestamp": "0001-01-01T00:00:00+14:00", "message": {"role": "user", "content": "%s"}}'),
    ('{"info": {"role": "user", "time": {"created": 1e20}}, "parts": [{"type": "text", "text": "%s"}]}'),
    ('{"info": {"role": "user", "time": {"created": Infinity}}, "parts": [{"type": "text", "text": "%s"}]}'),
    ('{"info": {"role": "user", "time": {"created": NaN}}, "parts": [{"type": "text", "text": "%s"}]}'),
]


@pytest.mark.parametrize("line", _OUT_OF_RANGE, ids=["year 10000", "year 0", "1e20 ms", "Infinity", "NaN"])
def test_a_time_no_date_can_hold_is_no_time_and_the_stop_still_records_the_session(
    line: str, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transcript's time moved past year 9999 (or before year 1) by its offset, or an OpenCode
    message created at 1e20 ms: the Stop, PreCompact and SessionEnd ended in OverflowError or
    OSError, so the session's file was never brought up to date and no receipt was taken."""
    path = tmp_path / "t.jsonl"
    path.write_text(line % "Fix the discount stacking bug" + "\n", encoding="utf-8")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(path)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    for event in ("stop", "pre-compact", "session-end"):
        run_hook(event, {**base, "stop_hook_active": False}, monkeypatch, capsys)
        assert "1. Fix the discount stacking bug" in record_text(project_dir), event


_DEEP = '{"a": ' * 900 + "1" + "}" * 900
_NAMED = [
    '{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", '
    '"name": %s, "input": {}}]}}',
    '{"id": "g1", "timestamp": "2026-11-28T10:00:01Z", "type": "gemini", "content": "x", "toolCalls": '
    '[{"id": "c1", "name": %s, "args": {}}]}',
    '{"info": {"role": "assistant"}, "parts": [{"type": "tool", "tool": %s, "state": {"input": {}}}]}',
]


@pytest.mark.parametrize("line", _NAMED, ids=["claude code", "gemini", "opencode"])
@pytest.mark.parametrize("name", [_DEEP, "12345", '"' + "x" * 5000 + '"', '"Bash\\nTools: fake"'])
def test_a_tool_name_that_is_no_name_is_counted_as_tool(line: str, name: str, tmp_path: Path) -> None:
    """A tool's name as an object nested 900 deep, a number, 5,000 characters or a line break: it went
    into the session file's Tools line as written (9 KB of braces from one call)."""
    path = tmp_path / "t.jsonl"
    path.write_text(line % name + "\n", encoding="utf-8")
    assert digest(path).tools == {"tool": 1}
