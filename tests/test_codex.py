"""Keeper under Codex CLI: shell-form hooks with no arguments, saves from Codex's shell tool, one store.

Codex runs a plugin's hook as ``/bin/bash -c COMMAND`` and ignores ``args``, so the launcher gets
no event; its shell tool is a login shell with no ``keeper`` on PATH and no CLAUDE_CODE_SESSION_ID.
The real Codex CLI runs these paths in tests/e2e/test_codex.py; here each is pinned down alone.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from keeper import __version__, cli
from keeper.capture.shell import is_save_command
from keeper.hooks import context, entry
from keeper.plugin import bootstrap, codex
from keeper.store import paths
from keeper.store.log import log_file
from tests.conftest import REPO

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="the POSIX launcher")
SYSTEM_PATH = "/usr/bin:/bin"


def codex_payload(event: str, cwd: Path, **fields: object) -> bytes:
    """A payload as Codex 0.169.0 sends it: compact, no trailing newline, its extra fields."""
    base = {"session_id": "01a215ee-7a46-7a20-8de5-e3ee63e23755", "transcript_path": None, "cwd": str(cwd)}
    extra = {"hook_event_name": event, "model": "gpt-5.5", "permission_mode": "bypassPermissions"}
    return json.dumps({**base, **extra, **fields}, separators=(",", ":")).encode()


def hook(argv: list[str], payload: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
    assert entry.run(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("event", "fields"),
    [("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {"prompt": "hi"}), ("Stop", {})],
)
def test_a_hook_without_an_event_takes_it_from_the_payload(
    event: str, fields: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    given = hook([], codex_payload(event, tmp_path, **fields), monkeypatch, capsys)
    named = hook([entry.BY_PAYLOAD_NAME[event]], codex_payload(event, tmp_path, **fields), monkeypatch, capsys)
    assert given.keys() == named.keys()
    if event == "SessionStart":
        assert given["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        assert "Keeper memory for project" in given["hookSpecificOutput"]["additionalContext"]


def test_every_event_of_hooks_json_is_known_by_its_payload_name() -> None:
    declared = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(declared) <= set(entry.BY_PAYLOAD_NAME)


def test_a_payload_naming_no_known_event_gets_an_empty_reply_and_one_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hook([], codex_payload("PermissionRequest", tmp_path), monkeypatch, capsys) == {}
    assert hook([], b"not json", monkeypatch, capsys) == {}
    log = Path(log_file()).read_text(encoding="utf-8")
    assert "names none Keeper answers ('PermissionRequest')" in log


def test_keeper_hook_with_no_event_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(codex_payload("SessionStart", tmp_path))))
    assert cli.main(["hook"]) == 0
    assert json.loads(capsys.readouterr().out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


# -- what Codex runs -----------------------------------------------------------------------------

CODEX_HOOKS = json.loads((REPO / "hooks" / "codex.json").read_text(encoding="utf-8"))["hooks"]


def test_codex_is_given_its_own_hooks_file_mirroring_claude_codes() -> None:
    manifest = json.loads((REPO / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "keeper" and manifest["version"] == __version__
    assert manifest["hooks"] == "./hooks/codex.json"
    claude = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(CODEX_HOOKS) == set(claude) & set(codex.EVENTS)  # every event Codex has
    for event, groups in CODEX_HOOKS.items():
        [group], theirs = groups, claude[event][0]  # SessionEnd's second group is Gemini CLI's (test_gemini)
        assert group.get("matcher") == {".*": None}.get(theirs.get("matcher"), theirs.get("matcher"))
        [handler], [exec_form] = group["hooks"], theirs["hooks"]
        assert handler["command"] == f'"$PLUGIN_ROOT/bin/keeper" {" ".join(exec_form["args"])}'
        assert handler["timeout"] == exec_form["timeout"]


@POSIX
@pytest.mark.parametrize("event", sorted(CODEX_HOOKS))
def test_codex_shell_command_reaches_the_launcher_from_any_folder(event: str, tmp_path: Path) -> None:
    """Codex runs ``bash -c COMMAND``; the plugin may sit under a path with spaces, quotes or ``$``."""
    root = tmp_path / 'Ann\'s "plugins" $HOME `x`'
    (root / "bin").mkdir(parents=True)
    launcher = root / "bin" / "keeper"
    launcher.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    launcher.chmod(0o755)
    command = CODEX_HOOKS[event][0]["hooks"][0]["command"]
    done = subprocess.run(
        ["/bin/bash", "-c", command],
        env={"PLUGIN_ROOT": str(root), "PATH": SYSTEM_PATH},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"hook|{entry.BY_PAYLOAD_NAME[event]}|"


# -- the launcher -------------------------------------------------------------------------------


def ready_bin(data: Path) -> Path:
    """The bin folder of the environment the set-up makes for this code, marked finished."""
    env = data / "env" / bootstrap.env_key(str(REPO))
    env.mkdir(parents=True, exist_ok=True)
    (env / bootstrap.READY).write_text("{}")
    return env / "bin"


def fake_python(folder: Path) -> Path:
    """A stand-in for the plugin environment's Python that records its arguments and stdin."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "python"
    path.write_text(f'#!/bin/sh\necho "$*" >> "{folder}/calls.log"\ncat >> "{folder}/stdin.log"\necho "{{}}"\n')
    path.chmod(0o755)
    return path


def launch(launcher: Path, args: list[str], env: dict[str, str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(launcher), *args], input=stdin, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@POSIX
def test_the_launcher_given_no_arguments_by_a_hook_runner_runs_the_hook(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env_bin = ready_bin(data)
    fake_python(env_bin)
    codex_env = {"PATH": SYSTEM_PATH, "CLAUDE_PLUGIN_ROOT": str(REPO), "PLUGIN_ROOT": str(REPO)}
    payload = codex_payload("SessionStart", tmp_path).decode()
    done = launch(REPO / "bin" / "keeper", [], {**codex_env, "CLAUDE_PLUGIN_DATA": str(data)}, payload)
    assert done.returncode == 0 and json.loads(done.stdout) == {}
    assert (env_bin / "calls.log").read_text().split()[-1] == "hook"  # `keeper hook`: the event from the payload
    # the payload reaches Keeper whole (the counting fast path may give it back with a newline: JSON allows it)
    assert (env_bin / "stdin.log").read_text().rstrip("\n") == payload


@POSIX
def test_the_launcher_with_no_arguments_outside_a_hook_still_shows_usage(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env_bin = ready_bin(data)
    fake_python(env_bin)
    launch(REPO / "bin" / "keeper", [], {"PATH": SYSTEM_PATH, "CLAUDE_PLUGIN_DATA": str(data)}, "")
    assert (env_bin / "calls.log").read_text().endswith("raise SystemExit(main())\n")  # no `hook`: usage, as before


@POSIX
def test_codex_shell_tool_finds_the_plugin_environment_beside_the_plugin(tmp_path: Path) -> None:
    """Codex's shell runs the launcher by its path, with no CLAUDE_PLUGIN_DATA and a reset PATH."""
    codex_home = tmp_path / "home" / ".codex"
    plugin = codex_home / "plugins" / "cache" / "keeper" / "keeper" / __version__
    (plugin / "bin").mkdir(parents=True)
    for name in ("keeper", "keeper.digest"):
        shutil.copy2(REPO / "bin" / name, plugin / "bin" / name)
    env_bin = ready_bin(codex_home / "plugins" / "data" / "keeper-keeper")
    fake_python(env_bin)
    env = {"PATH": SYSTEM_PATH, "HOME": str(tmp_path / "home"), "CODEX_SESSION_ID": "s1"}
    done = launch(plugin / "bin" / "keeper", ["save", "--summary", "x"], env, "")
    assert done.returncode == 0, done.stderr
    assert (env_bin / "calls.log").read_text().split()[-3:] == ["save", "--summary", "x"]


# -- the save request and the save ---------------------------------------------------------------


@pytest.mark.skipif(
    sys.platform == "win32", reason="Codex's shell on Windows was never observed: the request there is PowerShell's"
)
def test_under_codex_the_save_request_names_the_launcher_by_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    root = "/home/ann/.codex/plugins/cache/keeper/keeper/0.2.0"
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", root)
    assert "\nkeeper save <<'KEEPER_" in context.save_request(3)  # Claude Code: `keeper` is on its Bash tool's PATH
    monkeypatch.setenv("PLUGIN_ROOT", root)  # Codex sets both
    request = context.save_request(3)
    assert f"\n{root}/bin/keeper save <<'KEEPER_" in request
    monkeypatch.setenv("CLAUDECODE", "1")  # Claude Code, whatever else is set
    assert "\nkeeper save <<'KEEPER_" in context.save_request(3)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell quoting")
def test_a_launcher_path_with_spaces_is_quoted_and_still_counts_as_a_save(monkeypatch: pytest.MonkeyPatch) -> None:
    root = "/home/Ann Lee/.codex/plugins/cache/keeper/keeper/0.2.0"
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", root)
    monkeypatch.setenv("PLUGIN_ROOT", root)
    command = context.save_command(end="KEEPER_X")
    assert command.startswith(f"'{root}/bin/keeper' save <<'KEEPER_X'\n")
    assert is_save_command(command)
    assert is_save_command(f'"{root}/bin/keeper" save --summary x')


def test_a_save_from_codex_shell_lands_in_that_sessions_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEX_SESSION_ID", "01a215ee-7a46-7a20-8de5-e3ee63e23755")
    assert cli.main(["save", "--summary", "Codex did it", "--project-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    session_file = Path(out.split("Session file: ")[1].split()[0])
    assert "- Session id: 01a215ee-7a46-7a20-8de5-e3ee63e23755" in session_file.read_text(encoding="utf-8")


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_stop_asks_in_the_shape_each_agent_continues_on_and_never_twice(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "50")
    monkeypatch.setenv("KEEPER_FINAL_SAVE_MIN", "1")
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(REPO))
    if agent == "codex":
        monkeypatch.setenv("PLUGIN_ROOT", str(REPO))
    tool = {"tool_name": "Bash", "tool_input": {"command": "echo hi"}, "tool_response": "hi\n"}
    assert hook([], codex_payload("PostToolUse", tmp_path, **tool), monkeypatch, capsys) == {}
    asked = hook([], codex_payload("Stop", tmp_path, stop_hook_active=False), monkeypatch, capsys)
    if agent == "codex":  # Codex rejects additionalContext on Stop; a block's reason continues the turn
        assert asked["decision"] == "block" and "not yet in memory" in asked["reason"]
        assert asked["systemMessage"].startswith("Keeper: asked Codex to save before it finishes")
    else:
        assert "not yet in memory" in asked["hookSpecificOutput"]["additionalContext"]
        assert asked["systemMessage"].startswith("Keeper: asked Claude to save before it finishes")
    again = hook([], codex_payload("Stop", tmp_path, stop_hook_active=True), monkeypatch, capsys)
    assert "decision" not in again and "hookSpecificOutput" not in again


# -- doctor and status ---------------------------------------------------------------------------


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Codex home where ``codex plugin add keeper@keeper`` put its copy of the plugin."""
    home = tmp_path / "codex-home"
    plugin = home / "plugins" / "cache" / "keeper" / "keeper" / __version__
    for name in (".codex-plugin/plugin.json", "hooks/codex.json", "hooks/hooks.json"):
        (plugin / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, plugin / name)
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def doctor(capsys: pytest.CaptureFixture[str]) -> str:
    cli.main(["doctor"])
    return capsys.readouterr().out


def test_doctor_names_the_hooks_codex_was_not_told_to_trust_and_the_step(
    codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trusted = '[hooks.state."keeper@keeper:hooks/codex.json:session_start:0:0"]\ntrusted_hash = "sha256:1"\n'
    config = '[plugins."keeper@keeper"]\nenabled = true\n\n' + trusted
    (codex_home / "config.toml").write_text(config, encoding="utf-8")
    out = doctor(capsys)
    line = next(line for line in out.splitlines() if " codex " in line)
    assert line.lstrip().startswith("FAIL")
    assert "UserPromptSubmit, PostToolUse, PreCompact, Stop, SessionEnd" in line  # the events Codex runs, untrusted
    assert "SessionStart" not in line and "PostToolUseFailure" not in line
    assert "type /hooks and trust Keeper's hooks" in out
    cli.main(["status", "--json"])
    assert json.loads(capsys.readouterr().out)["codex"] == [
        {
            "plugin": "keeper@keeper",
            "version": __version__,
            "untrusted_hooks": line.split("for ")[1].split(":")[0].split(", "),
        }
    ]


def test_doctor_and_status_once_every_hook_is_trusted(codex_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = ["session_start", "user_prompt_submit", "post_tool_use", "pre_compact", "stop", "session_end"]
    trusted = "".join(f'[hooks.state."keeper@keeper:hooks/codex.json:{k}:0:0"]\ntrusted_hash = "x"\n' for k in keys)
    (codex_home / "config.toml").write_text('[plugins."keeper@keeper"]\nenabled = true\n' + trusted, encoding="utf-8")
    assert "ok    codex    keeper@keeper" in doctor(capsys)
    cli.main(["status"])
    assert f"codex         keeper@keeper {__version__}: hooks trusted" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("config", "blocked"),
    [
        ("", True),  # codex exec is read-only unless told otherwise
        ('sandbox_mode = "danger-full-access"\n', False),
        ('sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nwritable_roots = ["STORE"]\n', False),
        ('[sandbox_workspace_write]\nwritable_roots = ["/elsewhere"]\n', True),
        # the roots alone: codex exec stays read-only, and they apply to workspace-write only
        ('[sandbox_workspace_write]\nwritable_roots = ["STORE"]\n', True),
        # the docs' lines appended after a table Codex wrote: the mode is that table's key, not Codex's
        (
            '[marketplaces.keeper]\nsource = "x"\nsandbox_mode = "workspace-write"\n'
            '[sandbox_workspace_write]\nwritable_roots = ["STORE"]\n',
            True,
        ),
        # the same below a header with a comment: still that table's key, not a top-level one
        (
            '[marketplaces.keeper]  # added by codex\nsource = "x"\nsandbox_mode = "workspace-write"\n'
            '[sandbox_workspace_write]\nwritable_roots = ["STORE"]\n',
            True,
        ),
        # and below a table array's header
        ('[[skills]]\nsandbox_mode = "danger-full-access"\n', True),
        # TOML as people write it: comments, literal strings, an array over lines, CRLF
        (
            'sandbox_mode = "workspace-write"  # keeper saves\n'
            '[sandbox_workspace_write]  # where\nwritable_roots = ["STORE"] # the store\n',
            False,
        ),
        ("sandbox_mode = 'danger-full-access'\n", False),
        ('sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nwritable_roots = [\n  "STORE",\n]\n', False),
        ('sandbox_mode = "workspace-write"\r\n[sandbox_workspace_write]\r\nwritable_roots = ["STORE"]\r\n', False),
        ('sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nwritable_roots = ["/a[1", "STORE"]\n', False),
    ],
)
def test_doctor_says_when_codex_sandbox_keeps_saves_out_of_the_store(
    config: str, blocked: bool, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(paths.data_root())
    # a TOML basic string escapes as JSON does (a Windows path's backslashes); top-level keys first
    text = config.replace('"STORE"', json.dumps(store)) + '\n[plugins."keeper@keeper"]\nenabled = true\n'
    (codex_home / "config.toml").write_text(text, encoding="utf-8")
    out = doctor(capsys)
    assert ("writable_roots = " + json.dumps([store]) in out) is blocked
    assert ('sandbox_mode = "workspace-write" at the top, before any [table]' in out) is blocked


@POSIX
@pytest.mark.parametrize("codex_on_path", [False, True])
def test_without_keeper_in_codex_doctor_names_the_install_only_where_codex_is(
    codex_on_path: bool,
    codex_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    if codex_on_path:
        (tools / "codex").write_text("#!/bin/sh\n")
        (tools / "codex").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{SYSTEM_PATH}")
    out = doctor(capsys)
    hint = "Codex CLI is here without Keeper"
    assert (hint in out) is codex_on_path and (" codex " in out) is codex_on_path
    if codex_on_path:
        assert "`codex plugin add keeper@keeper`" in out


@pytest.mark.parametrize("in_codex", [False, True])
def test_a_save_codex_sandbox_keeps_out_of_the_store_says_where_to_let_it_in(
    in_codex: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In Codex's shell a store that cannot be written is its sandbox's doing (the store is not among the
    writable roots), which chmod or another KEEPER_HOME would not mend: the error says so."""
    store = paths.data_root()
    os.makedirs(store, exist_ok=True)
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: mode != os.W_OK and real_access(p, mode) if p == store else real_access(p, mode)
    )
    if in_codex:
        monkeypatch.setenv("CODEX_SESSION_ID", "01a221a6-e67c-7612-872a-4c39c1ede8d5")
    assert cli.main(["save", "--summary", "kept out"]) == 1
    said = capsys.readouterr().err
    assert "cannot write to its store" in said
    assert ("Codex's sandbox" in said and "writable_roots" in said) is in_codex
