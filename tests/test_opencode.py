"""Keeper under OpenCode: its plugin's mapping, the sessions it writes for Keeper, saves from its shell.

OpenCode runs plugins in its own process; Keeper's (``opencode/keeper.js``) runs ``keeper hook
EVENT`` with Keeper's hook JSON and applies the reply. Here the plugin runs in Node against a
stand-in ``keeper`` that records what it was given, and Keeper's side of each call runs alone. The
real OpenCode runs both in tests/e2e/test_opencode.py.
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
from keeper.capture import messages, transcript
from keeper.hooks import entry
from keeper.store import paths
from tests.conftest import REPO

MESSAGES = REPO / "tests" / "fixtures" / "opencode" / "messages.jsonl"
SESSION = "ses_de18d6b16ffeSX6AXAuLbF4Wm4"


def hook(argv: list[str], raw: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(raw).encode())))
    assert entry.run(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_the_plugin_package_carries_the_version() -> None:
    package = json.loads((REPO / "opencode" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == __version__ and package["main"] == "keeper.js"


def test_an_opencode_session_is_read_into_the_session_digest() -> None:
    activity = transcript.Activity()
    transcript.update(activity, str(MESSAGES), 0)
    assert activity.prompts == ['"run echo hi please"'] and activity.commands == ["echo hi"]
    assert activity.tools == {"bash": 1, "write": 1} and list(activity.files.values()) == ["written"]
    assert activity.first_ts.startswith("2026-11-27T") and activity.first_ts.endswith("Z")
    [turn] = transcript.turns(str(MESSAGES))
    assert turn.items == ["  -> bash: echo hi", "  -> write: /tmp/i41-o1/work/x.txt", "OpenCode: done"]


def test_a_plugin_added_part_is_not_the_users_prompt() -> None:
    entry_ = {
        "info": {"role": "user"},
        "parts": [{"type": "text", "text": "mine"}, {"type": "text", "text": "recall", "synthetic": True}],
    }
    assert messages.prompt_of(entry_) == "mine"
    assert messages.stamp({"info": {"time": {"created": "soon"}}, "parts": []}) == ""


def test_stop_records_the_session_and_asks_nothing_opencode_could_not_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_AGENT", "opencode")
    monkeypatch.setenv("KEEPER_FINAL_SAVE_MIN", "1")
    base = {"session_id": SESSION, "cwd": str(tmp_path)}
    tool = {"tool_name": "Bash", "tool_input": {"command": "echo hi"}}
    assert hook(["post-tool-use"], {**base, **tool}, monkeypatch, capsys) == {}
    assert hook(["stop"], {**base, "transcript_path": str(MESSAGES)}, monkeypatch, capsys) == {}
    [session_file] = Path(paths.data_root()).glob("projects/*/sessions/*.md")
    record = session_file.read_text(encoding="utf-8")
    assert "`echo hi`" in record and '"run echo hi please"' in record


def test_a_save_from_opencodes_shell_lands_in_that_sessions_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KEEPER_SESSION_ID", SESSION)  # what the plugin's shell.env gives the bash tool
    assert cli.main(["save", "--summary", "OpenCode did it", "--project-dir", str(tmp_path)]) == 0
    session_file = Path(capsys.readouterr().out.split("Session file: ")[1].split()[0])
    assert f"- Session id: {SESSION}" in session_file.read_text(encoding="utf-8")


NODE_DRIVER = """
import { Keeper } from %(plugin)s
const client = { session: { messages: async () => ({ data: [{ info: { role: "user" }, parts: [{ type: "text", text: "hi" }] }] }) } }
const hooks = await Keeper({ client, directory: "/elsewhere" })
await hooks.event({ event: { type: "session.created", properties: { info: { id: "s1", directory: %(project)s } } } })
const system = { system: [] }
await hooks["experimental.chat.system.transform"]({ sessionID: "s1" }, system)
await hooks["experimental.chat.system.transform"]({ sessionID: "s1" }, system)
const chat = { message: { id: "m1" }, parts: [{ type: "text", text: "fix the bug" }] }
await hooks["chat.message"]({ sessionID: "s1" }, chat)
const tool = { output: "hi\\n" }
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s1", args: { command: "echo hi" } }, tool)
const shell = { env: {} }
await hooks["shell.env"]({ sessionID: "s1" }, shell)
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } })
console.log(JSON.stringify({ system: system.system, parts: chat.parts, tool: tool.output, env: shell.env }))
"""

FAKE_KEEPER = """#!/bin/sh
cat >> "%(log)s"; echo >> "%(log)s"
echo '{"hookSpecificOutput": {"additionalContext": "KEEPER '"$2"'"}}'
"""


@pytest.mark.skipif(shutil.which("node") is None or sys.platform == "win32", reason="needs Node.js and sh")
def test_the_plugin_maps_each_opencode_call_onto_a_keeper_hook(tmp_path: Path) -> None:
    log, fake = tmp_path / "calls.jsonl", tmp_path / "keeper"
    fake.write_text(FAKE_KEEPER % {"log": log})
    fake.chmod(0o755)
    driver = tmp_path / "driver.mjs"
    values = {"plugin": json.dumps(str(REPO / "opencode" / "keeper.js")), "project": json.dumps(str(tmp_path))}
    driver.write_text(NODE_DRIVER % values)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KEEPER_BIN": str(fake), "XDG_DATA_HOME": str(tmp_path)}
    done = subprocess.run(["node", str(driver)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["system"] == ["KEEPER session-start"] * 2  # asked once per session, given to each request
    assert out["parts"][-1]["text"] == "KEEPER user-prompt-submit" and out["parts"][-1]["synthetic"]
    assert out["tool"] == "hi\n\n\nKEEPER post-tool-use" and out["env"]["KEEPER_SESSION_ID"] == "s1"
    # the shell's `keeper save` runs the launcher with this environment: without its data folder it set
    # Keeper up a second time, in Claude Code's folder, in the foreground (a minute at the first save)
    assert out["env"]["CLAUDE_PLUGIN_DATA"] == str(tmp_path / "opencode" / "keeper")
    calls = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [c["hook_event_name"] for c in calls] == ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"]
    assert {c["cwd"] for c in calls} == {str(tmp_path)}  # the session's folder, not the plugin's `directory`
    assert calls[1]["prompt"] == "fix the bug" and calls[2]["tool_name"] == "Bash"
    chat = Path(calls[3]["transcript_path"])
    assert chat.parent == tmp_path / "opencode" / "keeper" / "chats" and "fix the bug" not in chat.read_text()


@pytest.mark.skipif(shutil.which("node") is None or sys.platform == "win32", reason="needs Node.js and sh")
@pytest.mark.parametrize("installed", ["this version", "another version", "one that cannot import Keeper"])
def test_a_copied_plugin_runs_a_pip_installed_keepers_hooks_on_its_python_as_the_launcher_does(
    tmp_path: Path, installed: str
) -> None:
    """keeper.js copied alone runs `keeper` from PATH: where its script names a Python whose site-packages
    holds this version of Keeper and its dependencies, a hook runs on that Python as bin/keeper runs it
    (-I -S, the folder given), sparing the script's ``site`` and ``import re``; else the script."""
    from tests.releases import PACKAGES
    from tests.test_launcher import ADD_SITE, HOOK, installed_keeper

    version = "0.0.1" if installed == "another version" else __version__
    layout = ("keeper", f"claude_keeper-{version}.dist-info", *PACKAGES)
    reply = '{"hookSpecificOutput": {"additionalContext": "KEEPER"}}'
    cannot = "case $1 in -I) exit 75 ;; esac; " if "cannot" in installed else ""  # 75: as `import keeper` failing
    script = installed_keeper(tmp_path / "venv", f"{cannot}cat > /dev/null; echo '{reply}'", layout)
    plugin = tmp_path / "config" / "plugin" / "keeper.js"  # `cp opencode/keeper.js ~/.config/opencode/plugin/`
    plugin.parent.mkdir(parents=True)
    shutil.copyfile(REPO / "opencode" / "keeper.js", plugin)
    driver = tmp_path / "driver.mjs"
    driver.write_text(NODE_DRIVER % {"plugin": json.dumps(str(plugin)), "project": json.dumps(str(tmp_path))})
    env = {"PATH": f"{script.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    done = subprocess.run(["node", str(driver)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["system"] == ["KEEPER"] * 2
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    direct, as_script = f"python -I -S -c {ADD_SITE + HOOK} {site}", f"python {script}"
    ran = {"this version": [direct], "another version": [as_script]}.get(installed, [direct, as_script])
    calls = (script.parent / "calls.log").read_text()
    events = ["session-start", "user-prompt-submit", "post-tool-use", "stop"]
    assert calls == "".join(f"{how} hook {event}\n" for event in events for how in ran)


def test_doctor_and_status_name_the_plugin_opencode_loads_and_whether_it_runs_keeper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `keeper` on it
    config = tmp_path / "config" / "opencode"
    config.mkdir(parents=True)
    gone = tmp_path / "old-keeper" / "opencode"
    listed = {"plugin": [str(REPO / "opencode"), str(gone), "some-other-plugin"]}
    (config / "opencode.jsonc").write_text(json.dumps(listed), encoding="utf-8")
    cli.main(["doctor"])
    said = [line for line in capsys.readouterr().out.splitlines() if " opencode " in line]
    assert len(said) == 2 and f"from {REPO / 'opencode'} (no trust step)" in said[0]  # the clone's launcher
    assert "which is gone" in said[1]
    (config / "plugin").mkdir()
    shutil.copy2(REPO / "opencode" / "keeper.js", config / "plugin" / "keeper.js")
    cli.main(["status", "--json"])
    found = json.loads(capsys.readouterr().out)["opencode"]
    assert [f["present"] for f in found] == [True, False, True]
    assert found[2]["runs_keeper"] is False  # a copied file needs `keeper` on PATH


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX stand-in for the opencode binary")
@pytest.mark.parametrize("opencode_on_path", [False, True])
def test_without_keeper_in_opencode_doctor_names_the_install_only_where_opencode_is(
    opencode_on_path: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As for Codex and Gemini CLI: an agent that is here without Keeper gets the one line that installs it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    tools = tmp_path / "tools"
    tools.mkdir()
    if opencode_on_path:
        (tools / "opencode").write_text("#!/bin/sh\n")
        (tools / "opencode").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    cli.main(["doctor"])
    out = capsys.readouterr().out
    said = [line for line in out.splitlines() if " opencode " in line]
    assert bool(said) is opencode_on_path
    if opencode_on_path:
        assert "OpenCode is here without Keeper" in said[0]
        assert f"fix: run `opencode plugin {REPO / 'opencode'} -g`" in out  # this checkout's plugin folder
