"""Keeper's prompt record on Windows, read by bin/keeper.exe: Keeper writes it there too (its paths in
Windows form, UTF-8), and keeper.exe answers from it a prompt Keeper would answer with nothing, and
only such a prompt, with what Keeper would reply and append.

Runs where Windows runs (the Windows lane, .ci/windows-lane, and Windows CI); tests/test_windows_launcher.py
tests keeper.exe's own rules under Wine from Linux, tests/test_launcher_prompt.py bash's. keeper.exe runs
Keeper as the plugin's own environment: this interpreter's program and libraries copied into one, its path
file naming this worktree and this interpreter's sys.path. Whether Python ran is told by the record, which
Keeper rewrites (redated) on every prompt it handles.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from keeper.plugin import bootstrap
from tests.conftest import REPO
from tests.test_launcher_counter import reply_of

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="keeper.exe runs on Windows (and under Wine)")
LAUNCHER = REPO / "bin" / "keeper.exe"
SESSION = "s-1"
NOTE = "Fixed the flaky checkout test by freezing the clock; the invoice exporter keeps its retries."
QUIET = "rename the parser module please"  # none of NOTE's terms
RECALLS = "the flaky checkout test is back, freezing the clock again?"


def plugin_data(folder: Path) -> Path:
    """A plugin data folder holding a ready environment of this worktree's Keeper, for keeper.exe."""
    env = folder / "env" / bootstrap.env_key(str(REPO))
    scripts = env / "Scripts"
    scripts.mkdir(parents=True)
    (env / "Lib" / "site-packages" / "keeper").mkdir(parents=True)  # keeper.exe's sign of a package folder
    home = Path(getattr(sys, "_base_executable", sys.executable)).parent
    for name in ["python.exe", *(Path(p).name for p in glob.glob(str(home / "*.dll")))]:
        shutil.copyfile(home / name, scripts / name)
    found = [str(REPO), *(p for p in sys.path if p and (os.path.isdir(p) or p.endswith(".zip")))]
    pth = f"python{sys.version_info[0]}{sys.version_info[1]}._pth"
    (scripts / pth).write_text("\r\n".join(dict.fromkeys(found)) + "\r\n", encoding="utf-8")
    (env / bootstrap.READY).write_text("{}", encoding="utf-8")
    return folder


class Sessions:
    """One project's session, its prompts through keeper.exe and through Keeper alone."""

    def __init__(self, base: Path, project: Path) -> None:
        self.project = project
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE_"))}
        self.data = plugin_data(base / "plugin data \u00fc")
        self.stores = {side: base / side / "store" for side in ("launcher", "alone")}
        self.envs = {side: {**clean, "KEEPER_HOME": str(store)} for side, store in self.stores.items()}
        self.envs["launcher"].update(CLAUDE_PLUGIN_DATA=str(self.data), CLAUDE_PLUGIN_ROOT=str(REPO))
        for env in self.envs.values():
            env["CLAUDE_PROJECT_DIR"] = str(project)
            done = subprocess.run(
                [sys.executable, "-m", "keeper", "save", "--summary", NOTE],
                env={**env, "CLAUDE_CODE_SESSION_ID": "s-0"},
                capture_output=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stderr

    @property
    def record(self) -> Path:
        return self.data / "counter" / f"{SESSION}.prompt"

    def hook(self, side: str, text: str) -> dict[str, Any]:
        head = {"session_id": SESSION, "transcript_path": "", "cwd": str(self.project), "permission_mode": "default"}
        body = json.dumps({**head, "hook_event_name": "UserPromptSubmit", "prompt": text}, separators=(",", ":"))
        command = [str(LAUNCHER)] if side == "launcher" else [sys.executable, "-m", "keeper"]
        done = subprocess.run(
            [*command, "hook", "user-prompt-submit"],
            input=body.encode(),
            env=self.envs[side],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return reply_of(done.stdout)

    def prompt(self, text: str) -> tuple[dict[str, Any], bool]:
        """The same prompt through both; the replies agree. Returns the reply and whether keeper.exe
        answered it alone (the record untouched)."""
        before = self.record.stat().st_mtime_ns if self.record.exists() else None
        through = self.hook("launcher", text)
        assert through == self.hook("alone", text)
        return through, self.record.exists() and self.record.stat().st_mtime_ns == before

    def kept(self, side: str) -> dict[str, Any]:
        """The session's tally and the hook log's events."""
        state = next(self.stores[side].glob("projects/*/state"))
        calls = (state / "hooks.stats").read_text(encoding="utf-8").splitlines()
        return {
            "tally": (state / "sessions" / f"{SESSION}.tally").read_bytes(),
            "calls": [c.split("\t")[0] for c in calls],
        }


@pytest.fixture
def sessions(tmp_path: Path, project_dir: Path) -> Sessions:
    return Sessions(tmp_path, project_dir)


def test_keeper_writes_the_prompt_record_on_windows_and_keeper_exe_answers_from_it(sessions: Sessions) -> None:
    assert sessions.prompt("yes")[0] == {}  # the session's first call: its tally and the hook log
    for _ in range(2):  # the first searches and keeps the gate; the second finds it and vouches
        assert sessions.prompt(QUIET) == ({}, False)
        time.sleep(0.1)  # past the record's clock slack
    lines = sessions.record.read_bytes().split(b"\n")
    assert lines[0] == b"keeper-prompt 1" and lines[6] == b"gate"
    state = next(sessions.stores["launcher"].glob("projects/*/state"))
    assert lines[2:4] == [os.fsencode(state / "sessions" / f"{SESSION}.tally"), os.fsencode(state / "hooks.stats")]
    assert lines[13] == os.fsencode(state.parent / "sessions")  # C:\...: keeper.exe lists it with FindFirstFileW
    for text in (QUIET, "yes", "Please add a parser for the CLI flags"):
        assert sessions.prompt(text) == ({}, True)
    reply, alone = sessions.prompt(RECALLS)
    assert "hookSpecificOutput" in reply and not alone
    assert sessions.kept("launcher") == sessions.kept("alone")
    assert sessions.kept("launcher")["calls"] == ["user-prompt-submit"] * 7


def test_a_session_saved_since_reaches_keeper(sessions: Sessions) -> None:
    for _ in range(3):
        sessions.prompt("Renamed parser module yet again please")
        time.sleep(0.1)
    assert sessions.prompt("Renamed parser module yet again please")[1]
    for env in sessions.envs.values():
        subprocess.run(
            [sys.executable, "-m", "keeper", "save", "--summary", "Renamed the parser module yet again."],
            env={**env, "CLAUDE_CODE_SESSION_ID": "s-9"},
            capture_output=True,
            timeout=120,
            check=True,
        )
    time.sleep(0.1)
    reply, alone = sessions.prompt("Renamed parser module yet again please")
    assert not alone and "hookSpecificOutput" in reply
    assert sessions.kept("launcher") == sessions.kept("alone")
