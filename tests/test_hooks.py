"""The hooks, called as Claude Code calls them: JSON in, exactly one JSON object out, exit 0."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from keeper.capture import saving
from keeper.capture.shell import is_save_command
from keeper.hooks import entry, prompts
from keeper.memory.document import SaveInput
from keeper.store import config, counters, fsutil, identity, log, paths
from tests.helpers import run_hook

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
EVENTS = sorted(entry.HANDLERS)
SESSION = "e1801971-0299-4ceb-8b30-65fa1eb9e90d"


def payload(project: Path, **fields: Any) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": "", "cwd": str(project), **fields}


def context_of(reply: dict) -> str:
    return reply.get("hookSpecificOutput", {}).get("additionalContext", "")


def current_project(project: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(project)))


def log_text(store_dir: Path) -> str:
    log = store_dir / "logs" / "keeper.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


# -- recorded payloads ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "event"),
    [
        ("SessionStart-startup", "session-start"),
        ("SessionStart-resume", "session-start"),
        ("SessionStart-compact", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PostToolUse", "post-tool-use"),
        ("Stop", "stop"),
        ("PreCompact", "pre-compact"),
        ("SessionEnd", "session-end"),
    ],
)
def test_recorded_payloads_get_valid_replies(
    fixture: str, event: str, project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((FIXTURES / f"{fixture}.json").read_text())
    data["cwd"] = str(project_dir)
    reply = run_hook(event, data, monkeypatch, capsys)
    specific = reply.get("hookSpecificOutput")
    if specific is not None:
        assert specific["hookEventName"] == data["hook_event_name"]
    assert "continue" not in reply


# -- hostile input -------------------------------------------------------------------------

HOSTILE = {
    "empty": b"",
    "not json": b"this is not json",
    "json list": b"[1, 2, 3]",
    "json string": b'"hello"',
    "json null": b"null",
    "invalid utf-8": b'{"session_id": "\xff\xfe", "cwd": "\xc3("}',
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "huge string": json.dumps(
        {"session_id": "s", "prompt": "x" * 5_000_000, "tool_input": {"command": "y" * 1000}}
    ).encode(),
    "wrong types": json.dumps(
        {
            "session_id": 5,
            "cwd": ["x"],
            "tool_name": {},
            "tool_input": "str",
            "prompt": 7,
            "stop_hook_active": "yes",
            "source": 3,
        }
    ).encode(),
    "odd paths": json.dumps(
        {"session_id": "s1", "cwd": "/nonexistent/\u0000/..\\..\\C:", "transcript_path": "\\\\?\\C:\\x"}
    ).encode(),
    "hostile session id": json.dumps({"session_id": "../../../etc/passwd", "cwd": "."}).encode(),
}


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_bad_input_gets_exit_0_and_one_json_object(
    event: str, name: str, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = run_hook(event, HOSTILE[name], monkeypatch, capsys)
    assert "continue" not in reply and "decision" not in reply
    if name in ("empty", "not json", "json list", "json string", "json null", "deep nesting", "invalid utf-8"):
        assert f" {event} WARN stdin" in log_text(store)


def test_an_unknown_event_is_logged_and_answered(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_hook("post-tool-uses", b"{}", monkeypatch, capsys) == {}
    assert "unknown hook event 'post-tool-uses'" in log_text(store)


@pytest.mark.fails_open("ZeroDivisionError: boom")
def test_an_internal_error_fails_open_with_a_log_line(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(event: entry.Event, at: object) -> dict:
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(entry.HANDLERS, "stop", broken)
    assert run_hook("stop", payload(project_dir), monkeypatch, capsys) == {}
    assert "stop ERROR ZeroDivisionError: boom at test_hooks.py" in log_text(store)


@pytest.mark.fails_open("ZeroDivisionError: boom")
def test_a_failed_hook_logs_its_error_within_the_hooks_sharing_budget(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error line a failed hook writes (an append, retried on Windows while the log is refused)
    is still the hook's: 2 s, not a command's 15 s (the budget was put back before the log was written)."""

    def broken(event: entry.Event, at: object) -> dict:
        raise ZeroDivisionError("boom")

    budgets: list[float] = []
    real = log.write

    def noted(event: str, level: str, message: str) -> None:
        budgets.append(fsutil._sharing_wait[0])
        real(event, level, message)

    monkeypatch.setitem(entry.HANDLERS, "stop", broken)
    monkeypatch.setattr(log, "write", noted)
    assert run_hook("stop", payload(project_dir), monkeypatch, capsys) == {}
    assert budgets == [fsutil.HOOK_SHARING_WAIT]
    assert fsutil._sharing_wait[0] == fsutil.CLI_LOCK_TIMEOUT  # put back after the hook


@pytest.mark.fails_open("OSError: [Errno 28] No space left on device")
def test_a_full_disk_never_breaks_a_hook(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_space(*args: Any, **kwargs: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(counters.os, "open", no_space)
    assert run_hook("post-tool-use", payload(project_dir, tool_name="Bash"), monkeypatch, capsys) == {}


def test_disabled_hooks_do_nothing(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_ENABLED", "false")
    assert run_hook("session-start", payload(project_dir, source="startup"), monkeypatch, capsys) == {}
    assert not os.path.exists(current_project(project_dir).dir)


# -- PostToolUse -----------------------------------------------------------------------------


def tool_use(project: Path, command: str = "ls", **extra: Any) -> dict[str, Any]:
    return payload(project, hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": command}, **extra)


def test_post_tool_use_asks_to_save_every_n_uses(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "3")
    asked = [bool(context_of(run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys))) for _ in range(7)]
    assert asked == [False, False, True, False, False, True, False]
    text = context_of(run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys))
    assert text == ""
    reply = run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert "9 tool uses since this session's memory was last saved" in context_of(reply)
    assert re.search(r"keeper save <<'(KEEPER_[0-9A-F]{12})'\nsummary:(?s:.*)\n\1\n", context_of(reply))


def test_a_save_restarts_the_count(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "2")
    run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    save = "cd sub && keeper save <<'KEEPER'\nsummary: x\nKEEPER"
    assert run_hook("post-tool-use", tool_use(project_dir, save), monkeypatch, capsys) == {}
    assert run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys) == {}
    assert context_of(run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys))


@pytest.mark.parametrize(
    ("command", "is_save"),
    [
        ("keeper save <<'KEEPER'\nsummary: a\nKEEPER", True),
        ("python -m keeper save --summary done", True),
        ("cd /x; keeper.exe save --summary y", True),
        ("keeper status", False),
        ("echo saving the keeper file", False),
        ("grep -r keepersave .", False),
        ("$(keeper save<<'K'\nsummary: x\nK\n)", True),
        ("/home/ann/.local/bin/keeper save --summary x", True),
        ("C:\\Users\\ann\\Scripts\\keeper.exe save --summary x", True),
        ("echo keeper; save", False),
    ],
)
def test_save_commands_are_recognised(command: str, is_save: bool) -> None:
    assert is_save_command(command) is is_save


def test_subagent_tool_uses_count_but_never_ask(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "2")
    for _ in range(3):
        assert run_hook("post-tool-use", tool_use(project_dir, agent_id="a1"), monkeypatch, capsys) == {}
    reply = run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert "4 tool uses since" in context_of(reply)


# -- Stop --------------------------------------------------------------------------------------


def stop(project: Path, active: bool = False, message: str = "Done.") -> dict[str, Any]:
    return payload(project, hook_event_name="Stop", stop_hook_active=active, last_assistant_message=message)


def test_stop_asks_once_for_unsaved_work_and_never_loops(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "50")
    for _ in range(3):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    first = run_hook("stop", stop(project_dir), monkeypatch, capsys)
    assert first["hookSpecificOutput"]["hookEventName"] == "Stop"
    assert "3 tool uses in this session are not yet in memory" in context_of(first)
    assert run_hook("stop", stop(project_dir, active=True), monkeypatch, capsys) == {}
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}  # same work: not asked twice
    for _ in range(3):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}  # not acted on: no nagging
    for _ in range(46):  # save_every tool uses after the unanswered request
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}
    reminder = run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)  # 50 since the request
    assert "53 tool uses since" in context_of(reminder)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}  # just asked: not again


def test_six_unsaved_turns_are_asked_about_twice_not_six_times(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = []
    for turn in range(6):
        run_hook("user-prompt-submit", prompt(project_dir, f"step {turn}"), monkeypatch, capsys)
        for _ in range(4):
            reply = run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
            asked += ["reminder"] if context_of(reply) else []
        asked += ["final"] if context_of(run_hook("stop", stop(project_dir), monkeypatch, capsys)) else []
    assert asked == ["final", "reminder"]  # turn 1's Stop at 4, PostToolUse 15 uses later; Stop not again by 24


def test_stop_never_asks_in_a_turn_that_saved(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_hook("user-prompt-submit", prompt(project_dir, "fix the cart"), monkeypatch, capsys)
    for _ in range(3):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    saving.save(current_project(project_dir), config.load(None), SaveInput(summary="cart fixed"), SESSION)
    run_hook("post-tool-use", tool_use(project_dir, "keeper save <<'KEEPER'"), monkeypatch, capsys)
    for _ in range(5):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}  # this turn saved
    run_hook("user-prompt-submit", prompt(project_dir, "and the refunds"), monkeypatch, capsys)
    assert "5 tool uses" in context_of(run_hook("stop", stop(project_dir), monkeypatch, capsys))


def test_failed_tool_uses_count_too(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "3")
    failed = {**tool_use(project_dir, "pytest"), "hook_event_name": "PostToolUseFailure", "error": "exit 1"}
    replies = [run_hook("post-tool-use-failure", failed, monkeypatch, capsys) for _ in range(3)]
    assert replies[:2] == [{}, {}]
    assert replies[2]["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert "3 tool uses since" in context_of(replies[2])


def test_a_save_is_counted_once_and_its_command_restarts_the_count(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = current_project(project_dir)
    for _ in range(4):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    saving.save(project, config.load(None), SaveInput(summary="saved once"), SESSION)
    run_hook("post-tool-use", tool_use(project_dir, "keeper save <<'KEEPER'"), monkeypatch, capsys)
    run_hook("stop", stop(project_dir), monkeypatch, capsys)
    log = counters.read(counters.tally_path(project, SESSION))
    assert (counters.total_uses(log), counters.saves(log), counters.unsaved(log)) == (5, 1, 0)
    record = next(Path(project.sessions).glob("*.md")).read_text(encoding="utf-8")
    assert "- Tool uses: 5 (1 save)" in record  # in the right number, as every count Keeper writes


def test_a_continuation_someone_else_caused_is_never_answered_with_a_save_request(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(5):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert (
        run_hook("stop", stop(project_dir, active=True), monkeypatch, capsys) == {}
    )  # another hook continued the turn
    assert "5 tool uses" in context_of(run_hook("stop", stop(project_dir), monkeypatch, capsys))


def test_stop_after_a_save_or_below_the_minimum_asks_nothing(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}
    run_hook("post-tool-use", tool_use(project_dir, "keeper save --summary x"), monkeypatch, capsys)
    run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}
    monkeypatch.setenv("KEEPER_FINAL_SAVE_MIN", "0")
    for _ in range(5):
        run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    assert run_hook("stop", stop(project_dir), monkeypatch, capsys) == {}


def test_the_same_stop_twice_leaves_the_session_file_byte_identical(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_hook("post-tool-use", tool_use(project_dir), monkeypatch, capsys)
    run_hook("stop", stop(project_dir, message="Fixed it; token=s3cr3tvalue99"), monkeypatch, capsys)
    files = list((Path(current_project(project_dir).sessions)).glob("*.md"))
    assert len(files) == 1
    before = files[0].read_bytes()
    run_hook("stop", stop(project_dir, message="Fixed it; token=s3cr3tvalue99"), monkeypatch, capsys)
    assert files[0].read_bytes() == before
    text = before.decode()
    assert "- Tool uses: 1 (0 saves)" in text and "token=[REDACTED:secret]" in text and "s3cr3t" not in text


def test_session_end_and_pre_compact_stamp_the_session_file(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_hook("pre-compact", payload(project_dir, trigger="auto"), monkeypatch, capsys)
    run_hook("session-end", payload(project_dir, reason="prompt_input_exit"), monkeypatch, capsys)
    text = next(Path(current_project(project_dir).sessions).glob("*.md")).read_text()
    assert "(auto)" in text and "- Ended: " in text and "(prompt_input_exit)" in text


# -- SessionStart ------------------------------------------------------------------------------


def test_session_start_without_memory_says_so(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = run_hook("session-start", payload(project_dir, source="startup"), monkeypatch, capsys)
    assert reply["systemMessage"] == "Keeper: no memory yet for api; it saves as you work"
    assert "is empty so far" in context_of(reply)


def test_session_start_loads_memory_and_shows_one_status_line(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = current_project(project_dir)
    saving.save(project, config.load(None), SaveInput(decisions=["Use Redis", "Use FTS5"], issues=["Slow CI"]), "s0")
    reply = run_hook("session-start", payload(project_dir, source="resume"), monkeypatch, capsys)
    assert reply["systemMessage"] == "Keeper: 2 decisions, 1 open issue, last saved just now"
    assert "- Use Redis (" in context_of(reply) and "## Known Issues" in context_of(reply)


def test_a_large_memory_is_bounded_and_what_is_left_out_is_named(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = current_project(project_dir)
    cfg = config.load(None)
    saving.save(project, cfg, SaveInput(state=["refactoring the parser"], summary="latest work"), "s0")
    saving.save(
        project,
        cfg,
        SaveInput(decisions=[f"Decision number {i} about module_{i} and its reasons" for i in range(400)]),
        "s0",
    )
    assert os.path.getsize(project.memory) > 20_000
    reply = run_hook("session-start", payload(project_dir, source="startup"), monkeypatch, capsys)
    text = context_of(reply)
    assert len(text) <= 6000
    assert "- refactoring the parser" in text and "latest work" in text  # recent state goes in first
    assert "Left out for size:" in text and "older items of 'Core Decisions'" in text and "keeper recall" in text
    monkeypatch.setenv("KEEPER_CONTEXT_CHARS", "2000")
    assert (
        len(context_of(run_hook("session-start", payload(project_dir, source="startup"), monkeypatch, capsys))) <= 2000
    )


def test_after_compaction_the_session_so_far_comes_back_too(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saving.save(
        current_project(project_dir), config.load(None), SaveInput(summary="Halfway through the migration"), SESSION
    )
    reply = run_hook("session-start", payload(project_dir, source="compact"), monkeypatch, capsys)
    assert "This session so far" in context_of(reply) and "Halfway through the migration" in context_of(reply)


def test_config_problems_reach_the_user(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("save_every: lots\n")
    reply = run_hook("session-start", payload(project_dir, source="startup"), monkeypatch, capsys)
    assert (
        "config problem" in reply["systemMessage"]
        and "save_every must be a positive whole number" in reply["systemMessage"]
    )


# -- UserPromptSubmit --------------------------------------------------------------------------


def prompt(project: Path, text: str) -> dict[str, Any]:
    return payload(project, hook_event_name="UserPromptSubmit", prompt=text)


@pytest.mark.parametrize(
    ("prompt", "parsed"),
    [
        ("/keeper:recall redis  ttl ", ("keeper:recall", "redis  ttl")),
        ("  /recall\n multi\nline", ("recall", "multi\nline")),
        ("/keeper:clear", ("keeper:clear", "")),
        ("/clear", None),
        ("please /keeper:recall x", None),
        ("", None),
    ],
)
def test_slash_commands_are_recognised(prompt: str, parsed: tuple[str, str] | None) -> None:
    assert prompts.slash_command(prompt) == parsed


def test_ordinary_prompts_and_builtin_commands_get_nothing(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in ("fix the login bug", "/clear", "/compact keep decisions", "/recallx foo"):
        assert run_hook("user-prompt-submit", prompt(project_dir, text), monkeypatch, capsys) == {}


def test_recall_answers_in_the_prompt_hook(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saving.save(
        current_project(project_dir),
        config.load(None),
        SaveInput(decisions=["Sessions live in Redis with a 24h TTL"]),
        "s0",
    )
    reply = run_hook("user-prompt-submit", prompt(project_dir, "/keeper:recall redis ttl"), monkeypatch, capsys)
    assert reply["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "Sessions live in Redis with a 24h TTL" in context_of(reply)
    empty = run_hook("user-prompt-submit", prompt(project_dir, "/keeper:recall"), monkeypatch, capsys)
    assert "no query was given" in context_of(empty)


def test_clear_from_the_prompt_is_restorable(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = current_project(project_dir)
    saving.save(project, config.load(None), SaveInput(decisions=["Keep me"]), "s0")
    odd = run_hook("user-prompt-submit", prompt(project_dir, "/keeper:clear everything now"), monkeypatch, capsys)
    assert "nothing was removed" in context_of(odd) and os.path.exists(project.memory)
    reply = run_hook("user-prompt-submit", prompt(project_dir, "/keeper:clear all"), monkeypatch, capsys)
    assert "keeper restore" in context_of(reply) and not os.path.exists(project.memory)


# -- as a real process -------------------------------------------------------------------------


def test_console_script_reads_utf8_stdin_and_writes_ascii_json(project_dir: Path) -> None:
    data = json.dumps(payload(project_dir, prompt="/keeper:recall café 日本"), ensure_ascii=False).encode("utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "hook", "user-prompt-submit"], input=data, capture_output=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.isascii()
    assert "café 日本" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_log_lines_are_redacted(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "ghp_" + "Q" * 36
    run_hook(f"no-such-event-{secret}", b"{}", monkeypatch, capsys)
    text = log_text(store)
    assert secret not in text and "[REDACTED:github-token]" in text
