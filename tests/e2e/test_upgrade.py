"""Upgrading from 0.2.0 as a user does, in the real Claude Code and with pip.

Plugin route: 0.2.0's tree (from this repository's history) as a local marketplace, installed,
a session that saves; the marketplace moved to this commit, `claude plugin marketplace update` and
`claude plugin update keeper@keeper`; the next session's hooks answer JSON, its context carries
what 0.2.0 saved, a save lands, and nothing of 0.2.0's environment is left. Pip route: 0.2.0 and
then this commit installed into one virtualenv, a save between, the memory still read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from keeper.plugin import bootstrap
from tests.e2e.fakeapi import bash, text
from tests.e2e.test_plugin_install import SAVE, Machine, clean_clone
from tests.releases import built_wheel, environment_with_dependencies, release_tree, working_tree

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths in this test")]
SECOND_SAVE = """keeper save <<'KEEPER'
summary: PDF export after the update
decisions:
  - PDF export uses the CSV's ISO dates too
KEEPER"""


def machine_path(tmp_path: Path) -> str:
    """Node for Claude Code, a python3 (the test's own interpreter) and the system, no keeper."""
    node = os.path.dirname(os.path.realpath(shutil.which("node") or "/usr/bin/node"))
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "python3").symlink_to(sys.executable)
    return os.pathsep.join(dict.fromkeys([str(tools), node, "/usr/bin", "/bin"]))


def test_a_plugin_update_from_0_2_0_answers_every_hook_and_keeps_the_memory(claude_bin: str, tmp_path: Path) -> None:
    machine = Machine(claude_bin, tmp_path / "machine", machine_path(tmp_path))
    marketplace = release_tree("0.2.0", tmp_path / "marketplace")
    for args in (("marketplace", "add", str(marketplace)), ("install", "keeper@keeper")):
        done = machine.claude_cmd("plugin", *args)
        assert done.returncode == 0, done.stdout + done.stderr
    project = tmp_path / "work" / "invoices"
    (project / ".git").mkdir(parents=True)
    seen, _ = machine.session("set up the invoice exporter", project, [bash(SAVE), text("Saved.")])
    assert "Saved to" in seen[1], seen[1][-2000:]  # 0.2.0 set itself up and saved
    data = machine.home / ".claude" / "plugins" / "data" / "keeper-keeper"
    assert os.listdir(data / "env") == ["0.2.0"]

    shutil.rmtree(marketplace)  # the marketplace moves to this commit
    shutil.move(str(clean_clone(tmp_path / "new")), str(marketplace))
    for args in (("marketplace", "update", "keeper"), ("update", "keeper@keeper")):
        done = machine.claude_cmd("plugin", *args)
        assert done.returncode == 0, done.stdout + done.stderr

    seen, events = machine.session("what did we decide?", project, [bash(SECOND_SAVE), text("Noted.")])
    hooks = [e for e in events if e.get("subtype") == "hook_response"]
    failed = [e for e in hooks if e.get("outcome") == "error" or "Traceback" in json.dumps(e)]
    assert hooks and not failed, failed  # before 0.3.0: ModuleNotFoundError: No module named 'keeper.hooks.entry'
    assert "ModuleNotFoundError" not in json.dumps(events)
    assert "Export invoices as CSV with ISO dates: finance imports them as is" in seen[0]  # what 0.2.0 saved
    assert "Saved to" in seen[1], seen[1][-2000:]
    assert os.listdir(data / "env") == [bootstrap.env_key(str(marketplace))]  # nothing of 0.2.0's left
    memory = next((tmp_path / "machine" / "store" / "projects").glob("invoices-*/memory.md")).read_text()
    assert "PDF export uses the CSV's ISO dates too" in memory and "Export invoices as CSV" in memory


def test_a_pip_upgrade_from_0_2_0_keeps_the_memory(tmp_path: Path) -> None:
    """pip installs each tree's wheel (built once into the tests' cache) into a virtualenv that holds
    the dependencies already: the upgrade pip makes of a 0.2.0 install is what is tested here, not how
    pip builds a wheel or resolves dependencies (tests/test_packaging.py, the README's own set-up)."""
    venv = tmp_path / "venv"
    environment_with_dependencies(venv)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps"]
    pip += ["--quiet", "--disable-pip-version-check"]
    env = {**os.environ, "KEEPER_HOME": str(tmp_path / "store")}
    project = tmp_path / "work" / "invoices"
    (project / ".git").mkdir(parents=True)
    keeper = [str(venv / "bin" / "keeper")]

    subprocess.run([*pip, str(built_wheel(release_tree("0.2.0", tmp_path / "k020")))], check=True, env=env)
    assert subprocess.run([*keeper, "--version"], capture_output=True, text=True).stdout == "keeper 0.2.0\n"
    saved = subprocess.run(
        [*keeper, "save", "--decision", "Amounts round half-even"], cwd=project, env=env, capture_output=True
    )
    assert saved.returncode == 0, saved.stderr

    subprocess.run([*pip, str(built_wheel(working_tree(tmp_path / "new")))], check=True, env=env)
    version = subprocess.run([*keeper, "--version"], capture_output=True, text=True).stdout
    assert version == f"keeper {bootstrap.plugin_version(str(tmp_path / 'new'))}\n"
    recalled = subprocess.run(
        [*keeper, "recall", "rounding", "--json"], cwd=project, env=env, capture_output=True, text=True
    )
    assert recalled.returncode == 0 and "Amounts round half-even" in recalled.stdout, recalled.stderr
    assert json.loads((tmp_path / "store" / "format.json").read_text())["format"] >= 1  # brought up to date
