"""One line for the user when Keeper does something on its own, never noise; and a debug trail."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from keeper.capture import saving
from keeper.memory.document import SaveInput
from keeper.store import config, identity
from tests.helpers import run_hook

SESSION = "s-notice"


def base(project: Path) -> dict:
    return {"session_id": SESSION, "cwd": str(project), "transcript_path": ""}


def seeded(project_dir: Path) -> None:
    project, cfg = identity.make_project(identity.find_project_root(str(project_dir))), config.load(None)
    for day, text in (
        (18, "Moved session storage to Redis with a 24h TTL"),
        (20, "Redis TTL raised to 48h for checkout"),
    ):
        save = SaveInput(summary=text, decisions=[text])
        saving.save(project, cfg, save, f"old-{day}", now=datetime(2026, 11, day, 10, 0))


def test_automatic_recall_and_slash_recall_tell_the_user_in_one_line(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeded(project_dir)
    auto = run_hook(
        "user-prompt-submit", {**base(project_dir), "prompt": "why is the redis ttl 48h now?"}, monkeypatch, capsys
    )
    assert auto["hookSpecificOutput"]["additionalContext"]
    assert auto["systemMessage"].startswith("Keeper: recalled ") and "2026-11-20" in auto["systemMessage"]
    asked = run_hook(
        "user-prompt-submit", {**base(project_dir), "prompt": "/keeper:recall redis ttl"}, monkeypatch, capsys
    )
    assert (
        asked["systemMessage"].startswith("Keeper: ")
        and "match" in asked["systemMessage"]
        and "'redis ttl'" in asked["systemMessage"]
    )
    missing = run_hook(
        "user-prompt-submit", {**base(project_dir), "prompt": "/keeper:recall zebra"}, monkeypatch, capsys
    )
    assert missing["systemMessage"] == "Keeper: nothing found for 'zebra'"
    for reply in (auto, asked, missing):
        assert "\n" not in reply["systemMessage"] and len(reply["systemMessage"]) < 200


def test_nothing_happened_means_no_notice(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeded(project_dir)
    assert (
        run_hook(
            "user-prompt-submit",
            {**base(project_dir), "prompt": "write a haiku about autumn leaves"},
            monkeypatch,
            capsys,
        )
        == {}
    )
    assert run_hook("post-tool-use", {**base(project_dir), "tool_name": "Read"}, monkeypatch, capsys) == {}


def test_save_requests_tell_the_user_and_notices_can_be_turned_off(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "2")
    monkeypatch.setenv("KEEPER_FINAL_SAVE_MIN", "3")
    run_hook("post-tool-use", {**base(project_dir), "tool_name": "Read"}, monkeypatch, capsys)
    reminder = run_hook("post-tool-use", {**base(project_dir), "tool_name": "Read"}, monkeypatch, capsys)
    assert reminder["systemMessage"] == "Keeper: asked Claude to save (2 tool uses since the last save)"
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "50")
    other = {**base(project_dir), "session_id": "s-final"}
    for _ in range(3):
        run_hook("post-tool-use", {**other, "tool_name": "Read"}, monkeypatch, capsys)
    final = run_hook("stop", {**other, "stop_hook_active": False}, monkeypatch, capsys)
    assert final["systemMessage"] == "Keeper: asked Claude to save before it finishes (3 unsaved tool uses)"
    monkeypatch.setenv("KEEPER_NOTICES", "false")
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "1")
    quiet = run_hook("post-tool-use", {**base(project_dir), "tool_name": "Read"}, monkeypatch, capsys)
    assert "systemMessage" not in quiet and quiet["hookSpecificOutput"]["additionalContext"]


def test_debug_logs_one_line_per_hook_call_and_status_shows_the_slowest(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.cli import main

    monkeypatch.setenv("KEEPER_DEBUG", "1")
    for event, extra in (("session-start", {"source": "startup"}), ("post-tool-use", {"tool_name": "Read"})):
        run_hook(event, {**base(project_dir), **extra}, monkeypatch, capsys)
    lines = [ln for ln in (store / "logs" / "keeper.log").read_text().splitlines() if " INFO debug: " in ln]
    assert len(lines) == 2 and " session-start INFO debug: " in lines[0] and " ms in Keeper, " in lines[0]
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "  slowest       " in out and " ms (recent calls, time in Keeper)" in out
    assert main(["status", "--json"]) == 0
    hooks = json.loads(capsys.readouterr().out)["hooks"]
    assert hooks["post-tool-use"]["slowest_recent_ms"] >= 0
