"""The small things a newcomer trips on in the first hour, each held by a test (issue 32)."""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from keeper.cli import main
from keeper.store import identity
from tests.helpers import run_hook


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def project_of(folder: Path) -> identity.Project:
    return identity.make_project(identity.find_project_root(str(folder)))


def test_status_says_when_memory_was_updated_after_a_save_that_set_no_state(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(["save", "--decision", "Use Redis for the job queue"], capsys)
    assert "Last updated" not in Path(project_of(project_dir).memory).read_text(encoding="utf-8")
    code, out, _ = cli(["status"], capsys)
    assert code == 0 and "last updated never" not in out
    assert f"last updated {date.today().isoformat()} " in out
    _, out, _ = cli(["status", "--json"], capsys)
    assert json.loads(out)["memory"]["last_updated"].startswith(date.today().isoformat())


def test_session_start_leaves_out_keepers_empty_sections_but_keeps_a_persons(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(["save", "--decision", "Use Redis for the job queue"], capsys)
    memory = Path(project_of(project_dir).memory)
    memory.write_text(memory.read_text(encoding="utf-8") + "\n## Ideas for later\n", encoding="utf-8")
    payload = {"session_id": "s1", "cwd": str(project_dir), "source": "startup", "hook_event_name": "SessionStart"}
    context = run_hook("session-start", payload, monkeypatch, capsys)["hookSpecificOutput"]["additionalContext"]
    assert "Use Redis for the job queue" in context and "## Ideas for later" in context
    for empty in ("## Current State", "## Known Issues", "## Recent Context"):
        assert empty not in context


def test_a_bare_clear_clears_old_sessions_as_the_slash_command_does(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(["save", "--decision", "Keep me"], capsys)
    old = Path(project_of(project_dir).sessions) / f"{(date.today() - timedelta(days=90)).isoformat()}_0900.md"
    old.write_text("# Session\n\nold work\n", encoding="utf-8")
    code, out, _ = cli(["clear", "--yes"], capsys)
    assert code == 0 and not old.exists() and "Moved 1 session file to " in out
    assert Path(project_of(project_dir).memory).exists()


def test_nothing_to_clear_says_why(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["clear", "old", "--older-than", "0", "--yes"], capsys)
    assert code == 0 and out.strip() == "Nothing to clear: project 'api' has no session files yet."
    cli(["save", "--decision", "Keep me", "--summary", "did things"], capsys)
    code, out, _ = cli(["clear", "old", "--older-than", "0", "--yes"], capsys)
    assert out.strip() == "Nothing to clear: no session file of 'api' started before today (of 1 session file)."
    code, out, _ = cli(["clear", "old", "--older-than", "3", "--yes"], capsys)
    cutoff = (date.today() - timedelta(days=3)).isoformat()
    assert f"started before {cutoff} (3 days ago)" in out
    _, out, _ = cli(["clear", "old", "--older-than", "0", "--yes", "--json"], capsys)
    assert json.loads(out)["reason"].startswith("no session file of 'api'")


def test_the_confirmation_counts_what_the_user_knows_not_keepers_state_files(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(["save", "--decision", "Keep me", "--summary", "one session"], capsys)
    state = Path(project_of(project_dir).state)
    assert len(list(state.iterdir())) > 1  # records, counters: files the user never made

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    asked: list[str] = []
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "n")
    code, out, _ = cli(["clear", "all"], capsys)
    assert code == 0 and "Nothing was removed." in out
    assert asked == [
        "Move memory.md, 1 session file and Keeper's own state for them of 'api' to a restorable backup? [y/N] "
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    code, _, err = cli(["clear", "all"], capsys)
    assert code == 1 and "would move memory.md, 1 session file and Keeper's own state for them; add --yes" in err


def test_restore_list_shows_when_what_and_how_much(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli(["save", "--decision", "Keep me", "--summary", "one session"], capsys)
    _, out, _ = cli(["clear", "all", "--yes"], capsys)
    backup = out.split("Undo with: keeper restore ")[1].split()[0]
    code, out, _ = cli(["restore", "--list"], capsys)
    name, day, clock, rest = out.strip().split(maxsplit=3)
    assert code == 0 and name == backup
    assert (day, clock) == (f"{backup[:4]}-{backup[4:6]}-{backup[6:8]}", f"{backup[9:11]}:{backup[11:13]}")
    assert rest == "keeper clear all: memory.md, 1 session file and Keeper's own state for them"
    code, out, _ = cli(["restore", backup], capsys)
    assert code == 0 and os.path.exists(project_of(project_dir).memory)
