"""Reading Codex rollouts: a recorded real one (tests/fixtures/codex/record.py), in pieces, hostile lines.

The rollout was written by Codex CLI 0.169.0 with Keeper installed: a prompt, shell commands (two
failing), two ``apply_patch`` edits of one new file, Keeper's save and, resumed, a second prompt
whose Stop request Codex recorded as a ``HookPrompt``, compacted after its command.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keeper import redact
from keeper.capture import transcript
from keeper.store import identity, sessions
from tests.conftest import REPO
from tests.helpers import run_hook

ROLLOUT = REPO / "tests" / "fixtures" / "codex" / "rollout-edit-save-resume.jsonl"
SESSION = "01a2163e-49b4-7d21-ac46-3aba8b6f43b7"  # the recorded session's id


def digest(path: Path) -> transcript.Activity:
    activity = transcript.Activity(clean=redact.redact)
    transcript.update(activity, str(path), 0)
    return activity


def test_a_recorded_rollout_gives_prompts_files_commands_saves_and_errors() -> None:
    activity = digest(ROLLOUT)
    assert activity.prompts == ["add a greeting helper", "now say it twice"]  # hook prompts and context are not
    assert activity.files == {"/home/ann/work/greeter/greet.py": "written"}  # added, then updated
    assert activity.commands == ["ls -a", "cat missing.txt", "python3 -c 'import sys; sys.exit(3)'", "echo second turn"]
    assert activity.saves == 1  # Keeper's own save, by the launcher's path, is not among the commands
    assert activity.tools == {"Bash": 5, "apply_patch": 2}
    assert activity.errors == ["Bash: exit 1: cat: missing.txt: No such file or directory", "Bash: exit 3:"]
    assert activity.compactions == 1  # the resumed turn was compacted
    assert activity.first_ts.startswith("2026-11-26T05:05") and activity.last_ts > activity.first_ts
    assert activity.skipped == 0


def test_reading_a_rollout_in_pieces_equals_reading_it_at_once(tmp_path: Path) -> None:
    whole = digest(ROLLOUT).as_dict()
    data = ROLLOUT.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    growing = tmp_path / "rollout-growing.jsonl"
    growing.write_bytes(data[: half + 40])  # Codex is mid-line
    activity = transcript.Activity(clean=redact.redact)
    offset = transcript.update(activity, str(growing), 0)
    assert offset == half
    growing.write_bytes(data)
    resumed = transcript.Activity(activity.as_dict(), clean=redact.redact)
    assert transcript.update(resumed, str(growing), offset) == len(data)
    assert resumed.as_dict() == whole


def test_a_long_rollout_is_read_as_its_first_prompt_and_its_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript, "TAIL_BUDGET", 4096)
    activity = digest(ROLLOUT)
    assert activity.prompts[0] == "add a greeting helper" and activity.gap


def item(kind: str, **fields: object) -> dict:
    return {
        "timestamp": "2026-11-26T04:51:00.000Z",
        "type": "event_msg",
        "payload": {"type": "item_completed", "item": {"type": kind, **fields}},
    }


@pytest.mark.parametrize(
    "entry",
    [
        {"type": "event_msg", "payload": None},
        {"type": "event_msg", "payload": {"type": "item_completed", "item": [1]}},
        item("UserMessage", content="not a list"),
        item("CommandExecution", command={"a": 1}, exit_code="1", aggregated_output=None),
        item("CommandExecution", command=["bash", "-lc"], status="failed"),
        item("FileChange", changes=["x"]),
        item("FileChange", changes={"/a": "add", "/b": {"type": "rename"}, "/c": {"type": "add", "move_path": 3}}),
        {"type": "compacted", "payload": 7},
        {"type": "response_item", "payload": {"type": "function_call", "arguments": "{"}},
    ],
)
def test_odd_rollout_lines_never_break_the_reader(entry: dict, tmp_path: Path) -> None:
    path = tmp_path / "rollout-odd.jsonl"
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    activity = digest(path)
    assert transcript.render(activity, str(tmp_path)) is not None
    assert all(how in ("written", "edited", "deleted") for how in activity.files.values())


def test_moved_and_deleted_files_and_a_failed_patch() -> None:
    activity = transcript.Activity()
    changes = {"/w/a.py": {"type": "update", "move_path": "/w/b.py"}, "/w/c.py": {"type": "delete"}}
    activity.add(item("FileChange", changes=changes, status="failed", stderr="patch did not apply\n"))
    assert activity.files == {"/w/a.py": "deleted", "/w/b.py": "written", "/w/c.py": "deleted"}
    assert activity.errors == ["apply_patch: patch did not apply"]


def test_a_codex_session_record_shows_what_the_rollout_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project_dir = tmp_path / "greeter"
    (project_dir / ".git").mkdir(parents=True)
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(ROLLOUT)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    found = sessions.existing_file(identity.make_project(identity.find_project_root(str(project_dir))), SESSION)
    assert found
    text = Path(found).read_text(encoding="utf-8")
    for expected in (
        "## Activity",
        "  1. add a greeting helper",
        "  - /home/ann/work/greeter/greet.py (written)",
        "  - `cat missing.txt`",
        "- Saves to memory: 1",
        "- Tools: Bash 5, apply_patch 2",
        "- Errors (2):",
        "- Compactions: 1",
    ):
        assert expected in text, expected


def test_keeper_transcript_reads_a_rollout_turn_by_turn(capsys: pytest.CaptureFixture[str]) -> None:
    from keeper import cli

    assert cli.main(["transcript", str(ROLLOUT), "--json"]) == 0
    turns = json.loads(capsys.readouterr().out)
    assert [t["prompt"] for t in turns] == ["add a greeting helper", "now say it twice"]
    first, second = turns[0]["items"], turns[1]["items"]
    assert "  -> apply_patch: /home/ann/work/greeter/greet.py" in first
    assert "  !! Bash failed: exit 1: cat: missing.txt: No such file or directory" in first
    assert first[-1] == "Codex: Added greet.py."
    assert second == [
        "  -> Bash: echo second turn",
        "(the conversation was compacted here)",
        "Codex: Done again.",
        "Codex: Done.",
    ]
    assert cli.main(["transcript", str(ROLLOUT), "--turn", turns[1]["uuid"], "--context", "0"]) == 0
    assert "-- turn 2 of 2" in capsys.readouterr().out
