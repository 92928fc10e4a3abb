"""Upgrading from an earlier release: the first session after a plugin update runs the new code in
an environment built for it, reads what the old release saved, and leaves nothing of the old one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from keeper.plugin import bootstrap
from tests.conftest import REPO
from tests.releases import plugin_environment, release_tree

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bin/keeper; keeper.exe has its own tests under Wine")
LAUNCHER = REPO / "bin" / "keeper"
SYSTEM_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))
OLD_CLI = "from keeper.cli import main; raise SystemExit(main())"


def python_only(folder: Path) -> str:
    """A PATH folder holding a python3 and nothing else (no keeper of the test's own)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "python3").symlink_to(sys.executable)
    return f"{folder}{os.pathsep}{SYSTEM_PATH}"


def hook(event: str, payload: dict[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAUNCHER), "hook", event], input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def project(isolated: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(isolated)], check=True)
    return isolated


def test_the_first_session_after_an_update_from_0_2_0_runs_the_new_code_with_the_old_memory(
    tmp_path: Path, project: Path
) -> None:
    data = tmp_path / "plugin-data"
    old_env = plugin_environment(release_tree("0.2.0", tmp_path / "k020"), data / "env" / "0.2.0", "0.2.0")
    saved = subprocess.run(
        [str(old_env / "bin" / "python"), "-I", "-c", OLD_CLI, "save", "--decision", "Invoices round half-even"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert saved.returncode == 0, saved.stderr
    env = {
        "HOME": os.environ["HOME"],
        "KEEPER_HOME": os.environ["KEEPER_HOME"],
        "PATH": python_only(tmp_path / "tools"),
        "CLAUDE_PLUGIN_ROOT": str(REPO),
        "CLAUDE_PLUGIN_DATA": str(data),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    start = {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s-1", "cwd": str(project)}
    done = hook("session-start", start, env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    reply = json.loads(done.stdout)
    assert "Invoices round half-even" in reply["hookSpecificOutput"]["additionalContext"]
    key = bootstrap.env_key(str(REPO))
    assert sorted(os.listdir(data / "env")) == [key]  # nothing of 0.2.0's environment is left
    assert "starting from a copy of" in (data / "setup.log").read_text()
    stop = {"hook_event_name": "Stop", "session_id": "s-1", "cwd": str(project), "stop_hook_active": False}
    assert json.loads(hook("stop", stop, env).stdout) is not None
