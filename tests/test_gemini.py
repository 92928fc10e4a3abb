"""Keeper under Gemini CLI: its extension's hooks, its payloads and chat files, saves from its shell tool.

Gemini runs an extension's hooks only from ``hooks/hooks.json`` (Claude Code's file), through a
shell, with ``GEMINI_SESSION_ID`` and ``GEMINI_PROJECT_DIR`` set; its shell tool has no session id
and no ``keeper`` on PATH. The real Gemini CLI runs these paths in tests/e2e/test_gemini.py; here
each is pinned down alone. Payloads are shaped as 0.61.0 sends them (research/more-agents).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from keeper import __version__, cli
from keeper.capture import chats, transcript
from keeper.capture.shell import is_save_command
from keeper.hooks import context, entry
from keeper.plugin import bootstrap, gemini
from tests.conftest import REPO

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="the POSIX launcher")
SESSION = "c75e33a0-de72-47bd-bb0e-1cb20c949e5e"
CHAT = REPO / "tests" / "fixtures" / "gemini" / "chat.jsonl"
SHARED = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
GEMINI = json.loads((REPO / "hooks" / "gemini.json").read_text(encoding="utf-8"))["hooks"]


def payload(event: str, cwd: Path, **fields: object) -> bytes:
    base = {"session_id": SESSION, "transcript_path": str(cwd / "chat.jsonl"), "cwd": str(cwd)}
    return json.dumps({**base, "hook_event_name": event, "timestamp": "2026-11-27T17:46:32.616Z", **fields}).encode()


def hook(argv: list[str], raw: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    assert entry.run(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def under_gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment Gemini gives a hook of Keeper's extension; the extension's folder."""
    root = tmp_path / "gemini home" / ".gemini" / "extensions" / "keeper"
    monkeypatch.setenv("GEMINI_SESSION_ID", SESSION)
    monkeypatch.setenv("GEMINI_PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(root))
    return root


# -- the hooks files ---------------------------------------------------------------------------


def test_gemini_runs_only_the_setup_entry_of_claude_codes_file_and_claude_code_never_does() -> None:
    """Gemini compares a lifecycle matcher with the source or reason exactly; Claude Code reads '.*' as
    a regular expression and has no SessionEnd reason 'exit'."""
    for event in ("SessionStart", "SessionEnd"):
        assert SHARED[event][0]["matcher"] == ".*"  # every source for Claude Code, none for Gemini
    [setup] = [g for g in SHARED["SessionEnd"] if g["matcher"] == "exit"]
    [handler] = setup["hooks"]
    assert handler["env"] == {"CLAUDE_PLUGIN_ROOT": "${extensionPath}"}  # Claude Code drops what it does not know
    assert handler["command"] == '"${CLAUDE_PLUGIN_ROOT}/bin/keeper" hook session-end'
    assert handler["timeout"] >= 1000  # milliseconds in Gemini


def test_gemini_hooks_file_runs_the_launcher_for_each_event_keeper_answers() -> None:
    expected = {
        "SessionStart": "session-start",
        "BeforeAgent": "user-prompt-submit",
        "AfterTool": "post-tool-use",
        "AfterAgent": "stop",
        "SessionEnd": "session-end",
    }
    assert {event: groups[0]["hooks"][0]["command"].split()[-1] for event, groups in GEMINI.items()} == expected
    for groups in GEMINI.values():
        [handler] = groups[0]["hooks"]
        assert handler["command"].startswith('"${extensionPath}/bin/keeper" hook ')
        assert handler["env"]["CLAUDE_PLUGIN_ROOT"] == "${extensionPath}" and handler["timeout"] >= 1000
        assert handler["env"]["CLAUDE_PLUGIN_DATA"] == "${extensionPath}/../../keeper"  # bin/keeper's choice too
    assert set(expected.values()) <= set(entry.HANDLERS)


def test_the_extension_manifest_carries_the_version() -> None:
    manifest = json.loads((REPO / "gemini-extension.json").read_text(encoding="utf-8"))
    assert manifest["name"] == gemini.NAME and manifest["version"] == __version__


def extension_copy(root: Path, how: dict[str, str]) -> Path:
    (root / "hooks").mkdir(parents=True)
    for name in ("hooks/hooks.json", "hooks/gemini.json", "gemini-extension.json"):
        shutil.copy2(REPO / name, root / name)
    (root / bootstrap.GEMINI_INSTALL).write_text(json.dumps(how), encoding="utf-8")
    return root


def test_the_set_up_completes_the_hooks_of_geminis_copy_once(tmp_path: Path) -> None:
    root = extension_copy(tmp_path / "keeper", {"source": "/src/keeper", "type": "local"})
    assert bootstrap.complete_gemini_hooks(str(root))
    assert json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"] == GEMINI
    assert not bootstrap.complete_gemini_hooks(str(root))  # already complete: nothing written


@pytest.mark.parametrize("how", [{"source": "/src/keeper", "type": "link"}, None])
def test_a_linked_checkout_or_any_other_folder_is_never_rewritten(how: dict[str, str] | None, tmp_path: Path) -> None:
    root = extension_copy(tmp_path / "keeper", how or {})
    if how is None:
        (root / bootstrap.GEMINI_INSTALL).unlink()  # Claude Code's or Codex's copy, or a clone
    assert not bootstrap.complete_gemini_hooks(str(root))
    assert (root / "hooks" / "hooks.json").read_bytes() == (REPO / "hooks" / "hooks.json").read_bytes()


def test_the_first_session_end_completes_the_hooks_when_keeper_runs_from_path(
    under_gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    extension_copy(under_gemini, {"source": "/src/keeper", "type": "local"})
    hook(["session-start"], payload("SessionStart", tmp_path, source="startup"), monkeypatch, capsys)
    assert hook([], payload("SessionEnd", tmp_path, reason="exit"), monkeypatch, capsys) == {}
    assert json.loads((under_gemini / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"] == GEMINI


# -- payloads ----------------------------------------------------------------------------------


def test_a_prompt_is_read_without_the_session_start_context_gemini_puts_in_front() -> None:
    raw = json.loads(payload("BeforeAgent", Path("/p"), prompt="<hook_context>memory</hook_context>\n\nfix the bug"))
    assert entry.Event("user-prompt-submit", raw).prompt == "fix the bug"
    assert chats.without_hook_context("<hook_context>a</hook_context>\n\n<hook_context>b</hook_context> x") == "x"


def test_a_recall_command_expands_to_its_line_then_the_instructions(
    under_gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["save", "--decision", "Prices round half to even", "--project-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    prompt = "/keeper:recall rounding\n\nKeeper already ran that search before this message"
    reply = hook(["user-prompt-submit"], payload("BeforeAgent", tmp_path, prompt=prompt), monkeypatch, capsys)
    found = reply["hookSpecificOutput"]["additionalContext"]
    assert "Keeper recall for" in found and "Prices round half to even" in found


def test_keepers_own_request_sent_back_as_a_prompt_is_not_a_turn_of_the_user(
    under_gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = context.final_save_request(3, SESSION)
    assert hook(["user-prompt-submit"], payload("BeforeAgent", tmp_path, prompt=prompt), monkeypatch, capsys) == {}


# -- the save request --------------------------------------------------------------------------


@POSIX
def test_the_save_request_names_the_launcher_and_the_session(under_gemini: Path) -> None:
    request = context.save_request(3, SESSION)
    command = f"'{under_gemini}/bin/keeper' save --session {SESSION} <<'KEEPER_"
    assert f"\n{command}" in request
    assert is_save_command(command)
    assert " --session " not in context.save_request(3, "a session; rm -rf ~")  # never an id a shell would read


def test_outside_gemini_the_save_request_names_no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "\nkeeper save <<'KEEPER_" in context.save_request(3, SESSION)


def test_stop_asks_with_a_deny_gemini_sends_as_a_user_turn_and_never_twice(
    under_gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``stop_hook_active`` is false again after a retry turn that used a tool: the tally decides."""
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "50")
    monkeypatch.setenv("KEEPER_FINAL_SAVE_MIN", "1")
    hook(["user-prompt-submit"], payload("BeforeAgent", tmp_path, prompt="do it"), monkeypatch, capsys)
    tool = {"tool_name": "run_shell_command", "tool_input": {"command": "echo hi"}}
    assert hook(["post-tool-use"], payload("AfterTool", tmp_path, **tool), monkeypatch, capsys) == {}
    stop = payload("AfterAgent", tmp_path, prompt="do it", prompt_response="Done.", stop_hook_active=False)
    asked = hook(["stop"], stop, monkeypatch, capsys)
    assert asked["decision"] == "deny" and asked["reason"].startswith("Keeper memory: 1 tool uses")
    assert f"save --session {SESSION} <<'KEEPER_" in asked["reason"]
    assert asked["systemMessage"].startswith("Keeper: asked Gemini to save before it finishes")
    hook(["user-prompt-submit"], payload("BeforeAgent", tmp_path, prompt=asked["reason"]), monkeypatch, capsys)
    other = {"tool_name": "run_shell_command", "tool_input": {"command": "ls"}}
    hook(["post-tool-use"], payload("AfterTool", tmp_path, **other), monkeypatch, capsys)  # not the save
    assert hook(["stop"], stop, monkeypatch, capsys) == {}  # asked once; not acted on: not again yet


def test_the_periodic_request_answers_with_gemini_event_name(
    under_gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "1")
    tool = {"tool_name": "run_shell_command", "tool_input": {"command": "echo hi"}}
    reply = hook(["post-tool-use"], payload("AfterTool", tmp_path, **tool), monkeypatch, capsys)
    assert reply["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert f"save --session {SESSION}" in reply["hookSpecificOutput"]["additionalContext"]


# -- Gemini's chat file ------------------------------------------------------------------------


def test_a_gemini_chat_is_read_into_the_session_digest_once_per_record() -> None:
    activity = transcript.Activity()
    transcript.update(activity, str(CHAT), 0)
    assert activity.prompts == ["run echo hi please"]  # not the session context Gemini opens with
    assert activity.commands == ["echo hi"]
    assert activity.tools == {"run_shell_command": 1, "write_file": 1}  # each call once, though written twice
    assert list(activity.files.values()) == ["written"] and next(iter(activity.files)).endswith("/x.txt")
    turns = transcript.turns(str(CHAT))
    assert [t.prompt for t in turns] == ["run echo hi please"]
    assert "  -> run_shell_command: echo hi" in turns[0].items and "Gemini: done" in turns[0].items


def test_a_chat_prompt_without_hook_contexts_and_keepers_own_request() -> None:
    content = [
        {"text": "<hook_context>memory</hook_context>\n\nreal words"},
        {"text": "<hook_context>x</hook_context>"},
    ]
    assert chats.prompt_of(content) == "real words"
    assert chats.prompt_of([{"text": context.final_save_request(2)}]) == ""
    assert not chats.is_record({"type": "user", "message": {"content": "hi"}, "content": "x"})  # Claude Code's


# -- the launcher, doctor and status -----------------------------------------------------------


@POSIX
def test_the_launcher_keeps_its_environment_beside_geminis_extensions(tmp_path: Path) -> None:
    """Gemini replaces the extension's folder on update: the environment lives in ~/.gemini/keeper."""
    gemini_dir = tmp_path / "home" / ".gemini"
    root = gemini_dir / "extensions" / "keeper"
    (root / "bin").mkdir(parents=True)
    for name in ("keeper", "keeper.digest"):
        shutil.copy2(REPO / "bin" / name, root / "bin" / name)
    env = gemini_dir / "keeper" / "env" / bootstrap.env_key(str(REPO))
    (env / "bin").mkdir(parents=True)
    (env / bootstrap.READY).write_text("{}")
    python = env / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> "{env}/calls.log"\n')
    python.chmod(0o755)
    done = subprocess.run(
        [str(root / "bin" / "keeper"), "save", "--session", SESSION, "--summary", "x"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "GEMINI_CLI": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (env / "calls.log").read_text().split()[-5:] == ["save", "--session", SESSION, "--summary", "x"]


@pytest.fixture
def gemini_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    return tmp_path / "g" / ".gemini"


def test_doctor_and_status_name_the_extension_and_whether_its_hooks_run(
    gemini_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = extension_copy(gemini_home / "extensions" / "keeper", {"source": "/src", "type": "local"})
    cli.main(["doctor"])
    said = capsys.readouterr().out
    line = next(line for line in said.splitlines() if " gemini " in line)
    assert "its hooks so far only finish its set-up" in line and gemini.COMPLETE_STEP in said
    bootstrap.complete_gemini_hooks(str(root))
    cli.main(["doctor"])
    assert "its hooks complete (no trust step needed)" in capsys.readouterr().out
    cli.main(["status", "--json"])
    [found] = json.loads(capsys.readouterr().out)["gemini"]
    assert found["hooks_complete"] and found["version"] == __version__ and not found["hooks_off"]
    (gemini_home / "settings.json").write_text(json.dumps({"hooksConfig": {"enabled": False}}), encoding="utf-8")
    cli.main(["status"])
    assert "hooksConfig.enabled is false" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["save", "recall", "status", "clear", "hub"])
def test_each_gemini_command_is_a_toml_file_whose_prompt_keeper_recognises(name: str) -> None:
    """/keeper:NAME from commands/keeper/NAME.toml; the ones Keeper answers at BeforeAgent open with their
    own line, so the expanded prompt is recognised as the command (arguments up to the blank line)."""
    tomllib = pytest.importorskip("tomllib")
    from keeper.hooks import prompts

    command = tomllib.loads((REPO / "commands" / "keeper" / f"{name}.toml").read_text(encoding="utf-8"))
    assert command["description"] and command["prompt"]
    expanded = command["prompt"].replace("{{args}}", "old cache")
    if name in ("save", "recall", "clear"):
        assert prompts.slash_command(expanded) == (f"keeper:{name}", "" if name == "save" else "old cache")
    else:
        assert '!{"${GEMINI_CLI_HOME:-$HOME}/.gemini/extensions/keeper/bin/keeper" ' in command["prompt"]
