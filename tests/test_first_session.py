"""The first session: the work done while Keeper set itself up is counted and saved like the rest (issue 40,
item 5), and a session file gives one count of tool uses, the one its Activity lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from keeper.capture.transcript import local_time
from keeper.cli import main
from keeper.store import counters, identity, provenance
from tests.helpers import run_hook
from tests.transcripts import SESSION, Transcript, realistic


def project_of(folder: Path) -> identity.Project:
    return identity.make_project(identity.find_project_root(str(folder)))


def record_text(project_dir: Path) -> str:
    files = list(Path(project_of(project_dir).sessions).glob("*.md"))
    assert len(files) == 1, files
    return files[0].read_text(encoding="utf-8")


def setup_minute(project_dir: Path, tmp_path: Path) -> Transcript:
    """A first session's transcript: three tool uses while the launcher answered every hook with {} (no
    SessionStart, no PostToolUse reached Keeper), then the one whose PostToolUse is Keeper's first."""
    t = Transcript(tmp_path / "first.jsonl", cwd=str(project_dir))
    t.prompt("Add a price formatter")
    t.tool("Read", {"file_path": str(project_dir / "README.md")})
    t.tool(
        "Write", {"file_path": str(project_dir / "price.py"), "content": "def cents(x):\n    return f'{x / 100:.2f}'\n"}
    )
    t.tool("Bash", {"command": "python -c 'import price'"})
    t.tool(
        "Edit",
        {"file_path": str(project_dir / "price.py"), "old_string": "x", "new_string": "amount"},
        tool_id="toolu_now",
    )
    return t


def use(project_dir: Path, t: Transcript, tool_id: str) -> dict:
    return {
        "session_id": SESSION,
        "cwd": str(project_dir),
        "transcript_path": str(t.path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {},
        "tool_use_id": tool_id,
    }


def test_the_tool_uses_made_while_keeper_set_itself_up_are_counted(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "4")
    t = setup_minute(project_dir, tmp_path)
    reply = run_hook("post-tool-use", use(project_dir, t, "toolu_now"), monkeypatch, capsys)
    # three uses before Keeper was ready and this one: the fourth asks for a save, as in any session
    assert "4 tool uses since" in reply["hookSpecificOutput"]["additionalContext"]
    log = counters.read(counters.tally_path(project_of(project_dir), SESSION))
    assert counters.total_uses(log) == 4
    run_hook("post-tool-use", use(project_dir, t, "toolu_next"), monkeypatch, capsys)  # taken in once, not again
    assert counters.total_uses(counters.read(counters.tally_path(project_of(project_dir), SESSION))) == 5


def test_a_first_sessions_items_name_the_files_it_changed(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = setup_minute(project_dir, tmp_path)
    run_hook("post-tool-use", use(project_dir, t, "toolu_now"), monkeypatch, capsys)
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
    assert main(["save", "--decision", "Prices are formatted by price.cents"]) == 0  # before any Stop
    told = [e for e in provenance.read(project_of(project_dir).dir) if e.kind == provenance.SESSION]
    assert told and told[-1].files == ("price.py",) and told[-1].wrote["price.py"]
    started = local_time("2026-11-20T10:00:01.000Z")  # the transcript's first line, not when Keeper was ready
    assert started and told[-1].record == f"{started:%Y-%m-%d_%H%M}.md"
    assert f"- Started: {started:%Y-%m-%d %H:%M}" in record_text(project_dir)


def test_a_session_file_counts_the_tool_uses_its_activity_lists(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    run_hook("post-tool-use", {**base, "tool_name": "Read", "tool_input": {}}, monkeypatch, capsys)  # one counted
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    text = record_text(project_dir)
    listed = sum(int(n) for n in re.findall(r" (\d+)", text.split("- Tools: ", 1)[1].split("\n", 1)[0]))
    assert listed == 6 and f"- Tool uses: {listed} (0 saves)" in text


def test_a_save_before_any_hook_reached_keeper_finds_the_sessions_transcript_by_its_id(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README walk: Claude saved while every hook so far had met the launcher's set-up; the save
    knew its session from CLAUDE_CODE_SESSION_ID and nothing else, and recorded no file."""
    folder = (
        Path.home() / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project_dir))
    )  # as Claude Code names it, on every OS
    t = setup_minute(project_dir, folder.parent / "elsewhere")
    t.tool("Bash", {"command": "keeper save --decision 'Prices are formatted by price.cents'"})
    folder.mkdir(parents=True)
    t.path.rename(folder / f"{SESSION}.jsonl")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
    assert main(["save", "--decision", "Prices are formatted by price.cents"]) == 0
    told = [e for e in provenance.read(project_of(project_dir).dir) if e.kind == provenance.SESSION]
    assert told and told[-1].files == ("price.py",)
    log = counters.read(counters.tally_path(project_of(project_dir), SESSION))
    assert counters.total_uses(log) == 4  # the four before it; the save's own use is the tally's to mark
