"""Installed as a newcomer installs it: marketplace add + plugin install, and nothing else.

A fresh HOME, no `keeper` anywhere on PATH, the real Claude Code CLI. Keeper must set itself up
from the plugin's own files (and the package index for its dependencies), tell the user so, and
have the model's `keeper save` land, so that the next session starts with that memory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from keeper import __version__
from keeper.plugin import bootstrap
from tests.conftest import REPO
from tests.e2e.fakeapi import FakeAPI, bash, text, texts_of

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths in this test")]

# the user's pip cache (read before the test fixtures point HOME elsewhere), so set-up runs offline when it can
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or os.path.expanduser(os.path.join("~", ".cache", "pip"))
SAVE = """keeper save <<'KEEPER'
summary: Set up the invoice exporter: CSV first, PDF later
decisions:
  - Export invoices as CSV with ISO dates: finance imports them as is
KEEPER"""


def clean_clone(base: Path) -> Path:
    """The repository as a fresh clone has it: tracked files only (no .venv, caches or build output)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    target = base / "keeper-src"
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


class Machine:
    """One user's machine: a HOME, a PATH with Node, git and a system Python, and no Keeper."""

    def __init__(self, claude_bin: str, base: Path, path: str) -> None:
        self.claude, self.base = claude_bin, base
        self.home = base / "home"
        self.home.mkdir(parents=True)  # base is new: one machine per test
        self.path = path
        self.env = {
            "HOME": str(self.home),
            "USERPROFILE": str(self.home),
            "PATH": path,
            "KEEPER_HOME": str(base / "store"),
            "ANTHROPIC_API_KEY": "sk-ant-test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
            # Claude Code's plugin commands ask api.anthropic.com something first and, where that host does not
            # resolve, retry for ~18 s; with another API they ask nothing (a session gets its fake API's URL)
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "PIP_CACHE_DIR": PIP_CACHE,
            **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "UV_")) or k in ("LANG", "TMPDIR")},
        }

    def claude_cmd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.claude, *args], env=self.env, capture_output=True, text=True, timeout=120, check=False
        )

    def session(self, prompt: str, cwd: Path, script: list) -> tuple[list[str], list[dict]]:
        """One `claude -p` run: the text of each request the model got, and the stream-json events."""
        with FakeAPI(script) as api:
            done = subprocess.run(
                [self.claude, "-p", prompt, "--allowedTools", "Bash", "--output-format", "stream-json", "--verbose"],
                cwd=cwd,
                env={**self.env, "ANTHROPIC_BASE_URL": api.url},
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return [texts_of(r) for r in api.requests], events


def test_marketplace_add_and_install_is_the_whole_install(claude_bin: str, tmp_path: Path) -> None:
    node = os.path.dirname(os.path.realpath(shutil.which("node") or "/usr/bin/node"))
    path = os.pathsep.join(dict.fromkeys([node, "/usr/local/bin", "/usr/bin", "/bin"]))
    keeper_on_path = [d for d in path.split(os.pathsep) if os.path.exists(os.path.join(d, "keeper"))]
    if keeper_on_path or not shutil.which("python3", path=path):
        pytest.skip(f"needs a machine whose system PATH has python3 and no keeper (keeper in {keeper_on_path})")
    source = clean_clone(tmp_path)
    before = sorted(str(p) for p in source.rglob("*"))
    machine = Machine(claude_bin, tmp_path / "machine", path)
    added = machine.claude_cmd("plugin", "marketplace", "add", str(source))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = machine.claude_cmd("plugin", "install", "keeper@keeper")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    cache = machine.home / ".claude" / "plugins" / "cache" / "keeper" / "keeper" / __version__
    copied = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
    assert not [name for name in copied if name.split(os.sep)[0] in (".venv", ".cache", "build", "node_modules")]
    assert copied == sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file())  # the plugin only

    project = tmp_path / "work" / "invoices"
    (project / ".git").mkdir(parents=True)
    seen, events = machine.session("set up the invoice exporter", project, [bash(SAVE), text("Saved.")])
    shown = json.dumps(events)
    assert "Keeper is setting itself up" in shown  # the user is told, in one line
    assert "Saved to" in seen[1], seen[1][-2000:]  # the model's save landed, during the set-up
    data = machine.home / ".claude" / "plugins" / "data" / "keeper-keeper"
    assert (data / "env" / bootstrap.env_key(str(source)) / bootstrap.READY).exists()

    first = machine.session("what did we decide about invoices?", project, [text("CSV.")])[0][0]
    assert "SessionStart hook additional context: Keeper memory for project 'invoices'" in first
    assert "Export invoices as CSV with ISO dates: finance imports them as is" in first
    assert sorted(str(p) for p in source.rglob("*")) == before  # nothing written into the plugin's folder


def test_doctor_passes_right_after_the_readme_set_up_and_its_plugin_install(claude_bin: str, tmp_path: Path) -> None:
    """The README's own virtualenv and the build/ folder its `pip install .` leaves in the clone (which
    Claude Code then copies) are no problems, and no fix names a placeholder."""
    node = os.path.dirname(os.path.realpath(shutil.which("node") or "/usr/bin/node"))
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "python3").symlink_to(sys.executable)  # the machine's Python 3.9+
    path = os.pathsep.join(dict.fromkeys([str(tools), node, "/usr/bin", "/bin"]))
    source = clean_clone(tmp_path)
    machine = Machine(claude_bin, tmp_path / "machine", path)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set-up")[1].split("```bash\n")[1].split("```")[0].strip()
    done = subprocess.run(["sh", "-c", setup], cwd=source, env=machine.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"claude plugin marketplace add {source}" in done.stdout.split("── Done")[1]  # the demo's last word
    venv_bin = machine.home / ".venvs" / "keeper" / "bin"
    shell = {**machine.env, "PATH": f"{venv_bin}{os.pathsep}{path}", "VIRTUAL_ENV": str(venv_bin.parent)}
    project = tmp_path / "work" / "invoices"
    (project / ".git").mkdir(parents=True)

    def doctor() -> dict[str, dict[str, object]]:
        run = subprocess.run(
            [str(venv_bin / "keeper"), "doctor", "--json"], cwd=project, env=shell, capture_output=True, text=True
        )
        assert "OWNER" not in run.stdout and "REPO" not in run.stdout, run.stdout
        checks = {c["check"]: c for c in json.loads(run.stdout)}
        assert run.returncode == 0 and not [c for c in checks.values() if c["ok"] is False], run.stdout
        return checks

    first = doctor()
    assert f"claude plugin marketplace add {source}" in str(first["plugin"]["fix"])  # the clone pip installed from
    assert machine.claude_cmd("plugin", "marketplace", "add", str(source)).returncode == 0
    assert machine.claude_cmd("plugin", "install", "keeper@keeper").returncode == 0
    checks = doctor()
    assert checks["plugin"]["ok"] is True and "copy" not in checks


def test_a_marketplace_clone_moved_away_leaves_keeper_quiet_and_doctor_names_it(
    claude_bin: str, tmp_path: Path
) -> None:
    """Claude Code drops a plugin whose local marketplace folder is gone without a word: no hook runs,
    nothing is reported (docs/troubleshooting.md said the hooks report errors); doctor names the folder."""
    node = os.path.dirname(os.path.realpath(shutil.which("node") or "/usr/bin/node"))
    path = os.pathsep.join(dict.fromkeys([node, "/usr/bin", "/bin"]))
    source = clean_clone(tmp_path)
    machine = Machine(claude_bin, tmp_path / "machine", path)
    assert machine.claude_cmd("plugin", "marketplace", "add", str(source)).returncode == 0
    assert machine.claude_cmd("plugin", "install", "keeper@keeper").returncode == 0
    source.rename(source.with_name("keeper-moved"))
    project = tmp_path / "work" / "invoices"
    (project / ".git").mkdir(parents=True)
    events = machine.session("hello", project, [text("Hi.")])[1]
    assert not [e for e in events if e.get("subtype") in ("hook_started", "hook_response")]  # silently
    doctor = subprocess.run(
        [sys.executable, "-m", "keeper", "doctor", "--json"],
        cwd=project,
        env=machine.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    checks = {c["check"]: c for c in json.loads(doctor.stdout)}
    assert checks["source"]["ok"] is False and str(source) in checks["source"]["detail"]
    page = " ".join((REPO / "docs" / "troubleshooting.md").read_text(encoding="utf-8").split())
    assert "Keeper went quiet after you moved or deleted a local clone" in page, "the page says what the user sees"
    install = " ".join((REPO / "docs" / "install.md").read_text(encoding="utf-8").split())
    assert "Claude Code runs the hooks from it" not in install  # it runs them from its own copy, until this
