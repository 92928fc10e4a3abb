"""Keeper's one-time set-up in the plugin's data folder: atomic, locked, repaired, and per version."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from keeper.plugin import bootstrap
from keeper.store import identity
from tests.conftest import REPO
from tests.transcripts import SESSION, realistic

KEY = bootstrap.env_key(str(REPO))  # <version>-<digest>: the environment of exactly this code


def fake_build(calls: list[str], delay: float = 0.0, fail: str = ""):  # type: ignore[no-untyped-def]
    """Stands in for the venv + pip step: makes a finished environment (or fails), counting calls."""

    def build(root: str, target: str, deps: list[str], log: bootstrap.Log, start_from: str | None = None) -> None:
        calls.append(target)
        time.sleep(delay)
        if fail:
            raise RuntimeError(fail)
        (Path(target) / "bin").mkdir(parents=True)
        (Path(target) / "bin" / "python").write_text("")
        facts = {"version": bootstrap.plugin_version(root), "key": bootstrap.env_key(root), "dependencies": deps}
        (Path(target) / bootstrap.READY).write_text(json.dumps(facts))

    return build


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "plugin-data"


def test_setup_builds_once_and_then_is_a_no_op(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert calls == [str(data / "env" / KEY)]
    assert not (data / "setup.lock").exists() and "setting up keeper" in (data / "setup.log").read_text()


def test_a_second_start_while_one_runs_builds_nothing(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls, delay=1.0))
    first = threading.Thread(target=bootstrap.setup, args=(str(REPO), str(data)))
    first.start()
    time.sleep(0.3)
    assert bootstrap.setup(str(REPO), str(data)) == 0  # a hook's background run: the lock is taken, it leaves
    first.join()
    assert len(calls) == 1
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 0 and len(calls) == 1


def test_a_foreground_run_waits_for_the_running_setup(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls, delay=1.0))
    first = threading.Thread(target=bootstrap.setup, args=(str(REPO), str(data)))
    first.start()
    time.sleep(0.3)
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 0  # `keeper save` waits, then runs
    assert bootstrap.is_ready(str(data / "env" / KEY), KEY)
    first.join()
    assert len(calls) == 1


def read_only_lock(data: Path, monkeypatch: pytest.MonkeyPatch, within: Path | None = None) -> None:
    """The data folder as a sandboxed shell sees it (Codex's read-only or workspace-write sandbox, whose
    writable roots hold the store and not the agent's plugin data): no lock can be made there, nor any
    folder within ``within`` (the data folder itself, where it is not there yet)."""
    real_mkdir = os.mkdir
    refused = str(within if within is not None else data / bootstrap.SETUP_LOCK)

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        if str(path).startswith(refused):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", refuse)


def test_a_foreground_run_that_cannot_write_the_data_folder_says_what_to_do(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model's `keeper save` in a sandbox before Keeper is set up: one line, no traceback, no wait."""
    data.mkdir()
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    read_only_lock(data, monkeypatch)
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 1
    said = capsys.readouterr().err
    assert "cannot set itself up" in said and "Start a new session" in said and "Traceback" not in said
    assert calls == []


def test_a_foreground_run_that_cannot_write_waits_for_the_running_setup(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same save while the session's own set-up runs outside the sandbox: it waits, then runs."""
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls, delay=1.0))
    first = threading.Thread(target=bootstrap.setup, args=(str(REPO), str(data)))
    first.start()
    time.sleep(0.3)
    read_only_lock(data, monkeypatch)
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 0
    first.join()
    assert len(calls) == 1 and bootstrap.is_ready(str(data / "env" / KEY), KEY)


def test_a_foreground_run_that_cannot_make_the_data_folder_says_what_to_do(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model's `keeper save` in Codex's sandbox before any hook ran: the launcher names a data folder
    that is not there (Claude Code's, for want of Codex's), and making it is refused. One line, as when
    it is there but cannot be written; it raised from bootstrap.main's makedirs."""
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    monkeypatch.chdir(REPO)
    read_only_lock(data, monkeypatch, within=data)
    assert bootstrap.main(["--root", str(REPO), "--data", str(data), "--foreground"]) == 1
    said = capsys.readouterr().err
    assert "cannot set itself up" in said and "Start a new session" in said
    assert calls == [] and not data.exists()


def test_a_foreground_run_that_cannot_write_does_not_wait_on_a_dead_setups_lock(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A set-up killed half-way left its lock, older than any set-up runs: a run that can write breaks
    it at once, and one that cannot (a sandboxed shell) says what to do at once too; it waited
    STEP_TIMEOUT (10 minutes) for a lock nobody would let go of. By its age, not its owner's process,
    which a sandbox with process ids of its own would show dead while it runs."""
    lock = data / bootstrap.SETUP_LOCK
    lock.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    owner = {**bootstrap._owner(), "pid": int(dead.stdout), "start": None}
    (lock / bootstrap.SetupLock.OWNER).write_text(json.dumps(owner), encoding="utf-8")
    assert bootstrap.owner_gone(owner) is True
    long_ago = time.time() - bootstrap.LOCK_STALE_SECONDS - 60
    os.utime(lock, (long_ago, long_ago))
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    read_only_lock(data, monkeypatch)
    pauses: list[float] = []
    monkeypatch.setattr(time, "sleep", pauses.append)
    monkeypatch.setattr(bootstrap, "STEP_TIMEOUT", 5)  # before the fix: ten pauses, then the same line
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 1
    assert "cannot set itself up" in capsys.readouterr().err
    assert pauses == [] and calls == []


def test_a_setup_killed_midway_is_repaired_by_the_next(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = data / "env" / KEY
    (target / "bin").mkdir(parents=True)  # a half-built environment, without its ready marker
    (data / "env" / ".build-999-1").mkdir()
    (data / "setup.lock").mkdir()
    old = time.time() - bootstrap.LOCK_STALE_SECONDS - 60
    os.utime(data / "setup.lock", (old, old))
    assert not bootstrap.is_ready(str(target), KEY)
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert calls == [str(target)] and bootstrap.is_ready(str(target), KEY)
    assert sorted(os.listdir(data / "env")) == [KEY]  # the killed build's leftovers are gone


def test_a_new_plugin_version_sets_up_again_and_drops_the_old(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = data / "env" / "0.0.9"
    (old / "bin").mkdir(parents=True)
    (old / bootstrap.READY).write_text(json.dumps({"version": "0.0.9"}))
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert sorted(os.listdir(data / "env")) == [KEY]


def test_a_failure_is_kept_for_the_next_session_start_and_cleared_by_success(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bootstrap, "build", fake_build([], fail="pip failed: no network"))
    assert bootstrap.setup(str(REPO), str(data)) == 1
    reply = json.loads((data / "setup-failed.json").read_text())
    assert reply["systemMessage"].startswith("Keeper could not set itself up: pip failed: no network.")
    assert "tries again at the next session start" in reply["systemMessage"]
    assert not (data / "setup.lock").exists()
    monkeypatch.setattr(bootstrap, "build", fake_build([]))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert not (data / "setup-failed.json").exists()


def test_the_set_up_writes_nothing_into_the_plugin_folder(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    root = tmp_path / "checkout"
    shutil.copytree(REPO / "keeper", root / "keeper", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    bootstrap.write_digest(str(root))
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    monkeypatch.setattr(bootstrap, "build", fake_build([]))
    assert bootstrap.main(["--root", str(root), "--data", str(data)]) == 0
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before


def dead_pid() -> int:
    """The id of a process that has just ended."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def write_lock(data: Path, owner: dict[str, object] | None, age: float = 0.0) -> Path:
    lock = data / "setup.lock"
    lock.mkdir(parents=True)
    if owner is not None:
        (lock / bootstrap.SetupLock.OWNER).write_text(json.dumps(owner))
    stamp = time.time() - age
    os.utime(lock, (stamp, stamp))
    return lock


def this_host() -> str:
    import socket

    return socket.gethostname()


@pytest.mark.parametrize(
    "owner",
    ["dead pid"]
    + (["pid of another boot"] if bootstrap._boot_id() else [])  # Linux tells boots and process starts
    + (["pid reused by another process"] if bootstrap._process_start(os.getpid()) else []),
)
def test_a_lock_whose_owner_is_gone_is_broken_at_once(data: Path, monkeypatch: pytest.MonkeyPatch, owner: str) -> None:
    record: dict[str, object] = {"pid": dead_pid(), "host": this_host(), "boot": bootstrap._boot_id(), "start": ""}
    if owner == "pid of another boot":
        record.update(pid=os.getpid(), boot="another-boot")
    elif owner == "pid reused by another process":
        record.update(pid=os.getpid(), start="1")
    write_lock(data, record)
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0  # a hook's run: it does not wait, and it builds
    assert len(calls) == 1 and not (data / "setup.lock").exists()


def test_a_lock_held_by_a_running_setup_is_respected(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    me = {
        "pid": os.getpid(),
        "host": this_host(),
        "boot": bootstrap._boot_id(),
        "start": bootstrap._process_start(os.getpid()),
    }
    write_lock(data, me, age=bootstrap.LOCK_STALE_SECONDS * 4)  # old, but its owner runs: never broken
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert calls == [] and (data / "setup.lock").is_dir()
    assert "another set-up is running" in (data / "setup.log").read_text()


@pytest.mark.parametrize(
    ("owner", "age", "broken"),
    [
        (None, 60.0, False),  # an older Keeper's lock, recent: its run may go on
        (None, bootstrap.LOCK_STALE_SECONDS + 60, True),
        (None, -3600.0, True),  # dated an hour ahead: the clock was wrong when it was made
        ({"pid": 1, "host": "another-machine"}, 60.0, False),  # a shared folder: that host's run may go on
        ({"pid": 1, "host": "another-machine"}, -3600.0, True),
    ],
)
def test_a_lock_this_machine_cannot_check_goes_stale_by_age_either_way(
    data: Path, monkeypatch: pytest.MonkeyPatch, owner: dict[str, object] | None, age: float, broken: bool
) -> None:
    write_lock(data, owner, age=age)
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert (len(calls) == 1) is broken


HANGING_SETUP = """
import sys, time
sys.path.insert(0, sys.argv[1])
from keeper.plugin import bootstrap
def build(root, target, deps, log):
    open(sys.argv[3], "w").close()
    time.sleep(60)
bootstrap.build = build
bootstrap.setup(sys.argv[1], sys.argv[2])
"""


def test_a_setup_killed_half_way_does_not_block_the_next(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set-up stopped dead (SIGKILL; TerminateProcess on Windows) while it builds: the next run,
    as `keeper save` makes it, takes over at once instead of waiting for the lock to age."""
    import subprocess
    import sys

    started = tmp_path / "build-started"
    setup = subprocess.Popen([sys.executable, "-c", HANGING_SETUP, str(REPO), str(data), str(started)])
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (data / "setup.lock").is_dir()  # it holds the lock, half-way through
    finally:
        setup.kill()
        setup.wait()
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", fake_build(calls))
    monkeypatch.setattr(bootstrap, "STEP_TIMEOUT", 0.5)  # were the dead owner waited for, it would give up
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 0
    assert len(calls) == 1 and bootstrap.is_ready(str(data / "env" / KEY), KEY)


# -- nothing from the project folder runs during the set-up ----------------------------------------


def hostile_repo(folder: Path, marker: Path) -> Path:
    """A repository holding everything the set-up could be tricked into running or honouring;
    each of them, run, leaves ``marker`` behind."""
    folder.mkdir(parents=True, exist_ok=True)
    for module in ("venv", "pip", "ensurepip", "sitecustomize", "keeper"):
        (folder / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write('{module}.py ran\\n')\n")
    for program in ("python3", "python", "uv", "keeper", "nohup"):
        for where in (folder, folder / "bin"):
            where.mkdir(exist_ok=True)
            (where / program).write_text(f'#!/bin/sh\necho "{program} ran" >> "{marker}"\n')
            (where / program).chmod(0o755)
    (folder / "uv.toml").write_text('index-url = "https://evil.example/simple"\n')
    (folder / "pyproject.toml").write_text('[tool.uv]\nindex-url = "https://evil.example/simple"\n')
    return folder


def plugin_copy(base: Path, deps: str = "") -> Path:
    """The plugin's own files, with a chosen dependency list (none: pip fails at once, offline)."""
    import shutil

    root = base / "plugin"
    shutil.copytree(REPO / "keeper", root / "keeper", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text(f"[project]\ndependencies = [\n{deps}]\n")
    bootstrap.write_digest(str(root))
    return root


def run_script(root: Path, data: Path, cwd: Path, path: str) -> subprocess.CompletedProcess[str]:
    """bootstrap.py as bin/keeper used to start it: from the session's folder, PATH as the user has it."""
    return subprocess.run(
        [
            sys.executable,
            "-B",
            "-I",
            str(root / "keeper" / "plugin" / "bootstrap.py"),
            "--root",
            str(root),
            "--data",
            str(data),
            "--foreground",
        ],
        cwd=cwd,
        env={"PATH": path, "HOME": str(cwd.parent), "PYTHONPATH": str(cwd), "PIP_REQUIRE_VIRTUALENV": "0"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="the planted programs are sh scripts")
def test_the_set_up_runs_no_code_of_the_project_folder_with_uv(tmp_path: Path, data: Path) -> None:
    marker = tmp_path / "ran-from-the-repository"
    repo = hostile_repo(tmp_path / "repo", marker)
    tools = tmp_path / "tools"
    tools.mkdir()
    # a stand-in uv that records where it ran and whether configuration files were off, and makes
    # a real (pip-less) environment, so the set-up goes on to its later steps
    (tools / "uv").write_text(
        "#!/bin/sh\n"
        f'echo "$PWD|$UV_NO_CONFIG|$*" >> "{tools}/calls.log"\n'
        f'[ -f uv.toml ] && [ -z "$UV_NO_CONFIG" ] && echo "uv.toml honoured" >> "{marker}"\n'
        f'if [ "$1" = venv ]; then for a; do last=$a; done; exec "{sys.executable}" -I -m venv --without-pip "$last"; fi\n'
    )
    (tools / "uv").chmod(0o755)
    done = run_script(plugin_copy(tmp_path), data, repo, f":.:bin:{tools}:")
    assert not marker.exists(), marker.read_text()
    calls = (tools / "calls.log").read_text().splitlines()
    assert [c.split("|")[0] for c in calls] == [str(data)] * 2  # both steps ran in the data folder
    assert all(c.split("|")[1] == "1" and "--no-config" in c for c in calls)
    assert "import keeper.cli" in (data / "setup.log").read_text()  # it got as far as the import check
    assert done.returncode == 1  # that check fails: the stand-in installed nothing


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in uv is an sh script")
def test_dependencies_that_cannot_be_installed_say_what_to_check(tmp_path: Path, data: Path) -> None:
    """Offline or behind a proxy, the installer's last line ("No matching distribution found") is all
    a user used to see at session start, with nothing to do about it."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "uv").write_text(  # makes a real environment, then fails to install as uv does offline
        "#!/bin/sh\n"
        f'if [ "$1" = venv ]; then for a; do last=$a; done; exec "{sys.executable}" -I -m venv --without-pip "$last"; fi\n'
        'echo "error: Failed to fetch: https://pypi.org/simple/pyyaml/" >&2; exit 2\n'
    )
    (tools / "uv").chmod(0o755)
    (tmp_path / "work").mkdir(exist_ok=True)  # the folder a session starts in
    done = run_script(plugin_copy(tmp_path, '"pyyaml>=5.4",\n'), data, tmp_path / "work", f"{tools}:/usr/bin:/bin")
    assert done.returncode == 1
    message = json.loads((data / bootstrap.SETUP_FAILED).read_text())["systemMessage"]
    assert "Failed to fetch: https://pypi.org/simple/pyyaml/" in message  # what happened
    assert "dependencies (pyyaml>=5.4) failed: check that pip reaches PyPI" in message  # what to do
    assert "(network, proxy, PIP_INDEX_URL). It tries again at the next session start" in message


@pytest.mark.slow  # a real virtual environment and pip
@pytest.mark.skipif(sys.platform == "win32", reason="the planted programs are sh scripts")
def test_the_set_up_runs_no_code_of_the_project_folder_with_venv_and_pip(tmp_path: Path, data: Path) -> None:
    marker = tmp_path / "ran-from-the-repository"
    repo = hostile_repo(tmp_path / "repo", marker)
    done = run_script(plugin_copy(tmp_path), data, repo, ":.:bin")  # no uv anywhere: venv and pip
    assert not marker.exists(), marker.read_text()
    log = (data / "setup.log").read_text()
    assert " -I -m venv " in log and " -I -m pip " in log  # both real steps ran, isolated
    assert done.returncode == 1  # pip, given no requirement, fails: that is all this plugin copy asks


def ready_with_this_python(calls: list[str]):  # type: ignore[no-untyped-def]
    """Stands in for the venv + pip step: a finished environment whose python is the one running the tests."""

    def build(root: str, target: str, deps: list[str], log: bootstrap.Log, start_from: str | None = None) -> None:
        fake_build(calls)(root, target, deps, log, start_from)
        (Path(target) / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (Path(target) / "bin" / "python").chmod(0o755)

    return build


def kept_hook(data: Path, event: str, payload: dict[str, object], cwd: Path) -> None:
    """A hook as the launcher runs it while the set-up runs (its lock held): answered at once with {}."""
    (data / "setup.lock").mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(REPO), "CLAUDE_PLUGIN_DATA": str(data), "PATH": path}
    done = subprocess.run(
        [str(REPO / "bin" / "keeper"), "hook", event],
        input=json.dumps(payload),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == {}


@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX launcher")
def test_a_session_that_ends_while_keeper_sets_itself_up_gets_its_session_file(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short first session (OpenCode's went idle nine seconds before Keeper was ready): its Stop is
    kept and run once the set-up is done, so its session file is written from its transcript."""
    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    kept_hook(data, "post-tool-use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Read"}, project_dir)
    stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Done."}
    kept_hook(data, "stop", stop, project_dir)
    assert len(list((data / bootstrap.PENDING).glob("*.json"))) == 1  # the Stop, which writes a session's file
    (data / "setup.lock").rmdir()
    sessions = Path(identity.make_project(identity.find_project_root(str(project_dir))).sessions)
    assert not list(sessions.glob("*.md"))
    calls: list[str] = []
    monkeypatch.setattr(bootstrap, "build", ready_with_this_python(calls))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    files = list(sessions.glob("*.md"))
    assert len(files) == 1 and "Done." in files[0].read_text(encoding="utf-8")
    assert not list((data / bootstrap.PENDING).iterdir())  # run once, then gone
    assert "came while Keeper set itself up" in (data / "setup.log").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="the replay's python is a POSIX stand-in")
def test_a_hook_kept_after_the_set_up_looked_runs_at_once(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set-up finished between the launcher's look for an environment and the hook being kept:
    keeping it runs it (in a process of its own), since no set-up will look again."""
    monkeypatch.setattr(bootstrap, "build", ready_with_this_python([]))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    t = realistic(tmp_path / "t.jsonl")
    payload = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path), "reason": "exit"}
    bootstrap.keep(str(REPO), str(data), "session-end", str(project_dir), json.dumps(payload).encode())
    sessions = Path(identity.make_project(identity.find_project_root(str(project_dir))).sessions)
    for _ in range(600):  # the replay runs apart: wait for it (at most a minute)
        if list(sessions.glob("*.md")) and not list((data / bootstrap.PENDING).iterdir()):
            break
        time.sleep(0.1)
    assert len(list(sessions.glob("*.md"))) == 1 and not list((data / bootstrap.PENDING).iterdir())


def test_only_the_hooks_that_write_a_session_file_are_kept(data: Path) -> None:
    for event, named in [("", "Stop"), ("", "SessionEnd"), ("", "PostToolUse"), ("post-tool-use", ""), ("stop", "")]:
        bootstrap.keep(str(REPO), str(data), event, "/", json.dumps({"hook_event_name": named}).encode())
    kept = [json.loads(p.read_text()) for p in sorted((data / bootstrap.PENDING).glob("*.json"))]
    assert [(k["event"], json.loads(k["payload"])["hook_event_name"]) for k in kept] == [
        ("", "Stop"),
        ("", "SessionEnd"),
        ("stop", ""),
    ]


def recording_python(record: Path):  # type: ignore[no-untyped-def]
    """As ``ready_with_this_python``, its python writing the environment each replay gets to ``record``."""

    def build(root: str, target: str, deps: list[str], log: bootstrap.Log, start_from: str | None = None) -> None:
        fake_build([])(root, target, deps, log, start_from)
        script = f'#!/bin/sh\nenv >> "{record}"\nexec "{sys.executable}" "$@"\n'
        (Path(target) / "bin" / "python").write_text(script)
        (Path(target) / "bin" / "python").chmod(0o755)

    return build


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_a_kept_hook_is_readable_by_its_owner_only(data: Path, project_dir: Path) -> None:
    """A kept payload holds the session's last message and its variables: 0600, as the session files."""
    bootstrap.keep(str(REPO), str(data), "stop", str(project_dir), b'{"last_assistant_message": "secret"}')
    (kept,) = (data / bootstrap.PENDING).glob("*.json")
    assert kept.stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell stands in for the environment's python")
def test_a_pending_file_written_by_someone_else_sets_only_the_variables_a_hook_is_kept_with(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a replay takes from a kept file is what ``keep`` would have kept: never LD_PRELOAD or BASH_ENV."""
    record = tmp_path / "env.txt"
    folder = data / bootstrap.PENDING
    folder.mkdir(parents=True)
    hostile = {"LD_PRELOAD": "/nowhere/evil.so", "BASH_ENV": "/nowhere/evil.sh", "KEEPER_HOME": str(tmp_path / "store")}
    facts = {"event": "stop", "payload": "{}", "cwd": str(project_dir), "env": hostile}
    (folder / "1-1.json").write_text(json.dumps(facts))
    monkeypatch.setattr(bootstrap, "build", recording_python(record))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    seen = record.read_text()
    assert "KEEPER_HOME=" in seen and "LD_PRELOAD" not in seen and "BASH_ENV" not in seen


@pytest.mark.skipif(sys.platform == "win32", reason="the replay's python is a POSIX stand-in")
def test_hostile_pending_files_are_skipped_and_the_good_one_still_runs(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files in pending/ of the wrong shape (a number for the payload, a list for the variables, JSON
    nested past recursion, not JSON at all, a link to a kept hook outside) neither stop the set-up
    nor the good hook beside them, and nothing outside the folder is read."""
    folder = data / bootstrap.PENDING
    folder.mkdir(parents=True)
    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    kept_env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH") or k.startswith("KEEPER_")}
    good = {"event": "stop", "cwd": str(project_dir), "env": kept_env}
    good["payload"] = json.dumps({**base, "hook_event_name": "Stop", "last_assistant_message": "Done."})
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({**good, "event": "session-end"}))
    (folder / "1-1.json").write_text(json.dumps({**good, "payload": 5}))
    (folder / "1-2.json").write_text(json.dumps({**good, "env": ["PATH"]}))
    (folder / "1-3.json").write_text("[" * 100_000)
    (folder / "1-4.json").write_text("not json")
    (folder / "1-5.json").symlink_to(outside)
    (folder / "1-6.json").write_text(json.dumps({**good, "event": "--help"}))
    (folder / "2-1.json").write_text(json.dumps(good))
    monkeypatch.setattr(bootstrap, "build", ready_with_this_python([]))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    sessions = Path(identity.make_project(identity.find_project_root(str(project_dir))).sessions)
    files = list(sessions.glob("*.md"))
    assert len(files) == 1 and "Done." in files[0].read_text(encoding="utf-8")
    assert not list(folder.iterdir()) and outside.exists()
    assert "running the session-end hook" not in (data / "setup.log").read_text()  # the link's target never ran


@pytest.mark.skipif(sys.platform == "win32", reason="the replay's python is a POSIX stand-in")
def test_a_kept_hook_whose_folder_is_gone_writes_into_no_other_project(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its project folder removed before the set-up finished: the replay must not take the folder it
    runs in (the plugin's data) for the project, as the live hook never could."""
    t = realistic(tmp_path / "t.jsonl")
    gone = tmp_path / "gone"
    gone.mkdir()
    payload = {"session_id": SESSION, "cwd": str(gone), "transcript_path": str(t.path), "hook_event_name": "Stop"}
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    bootstrap.keep(str(REPO), str(data), "stop", str(gone), json.dumps(payload).encode())
    gone.rmdir()
    monkeypatch.setattr(bootstrap, "build", ready_with_this_python([]))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    assert not list((tmp_path / "store").rglob("*.md"))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX sessions")
def test_a_replay_started_by_a_kept_hook_outlives_the_hooks_call(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook kept just after the set-up finished runs the kept hooks (each up to a minute) in a
    process of its own session: run inside the hook's call, an agent ending the hook at its limit
    (SessionEnd: 2 s) or ending its process group ended them half done, a '.taken' file never run."""
    record = tmp_path / "sid.txt"

    def build(root: str, target: str, deps: list[str], log: bootstrap.Log, start_from: str | None = None) -> None:
        fake_build([])(root, target, deps, log, start_from)
        sid = f'"{sys.executable}" -c \'import os; print(os.getsid(0))\' >> "{record}"'
        (Path(target) / "bin" / "python").write_text(f'#!/bin/sh\n{sid}\nexec "{sys.executable}" "$@"\n')
        (Path(target) / "bin" / "python").chmod(0o755)

    monkeypatch.setattr(bootstrap, "build", build)
    assert bootstrap.setup(str(REPO), str(data)) == 0
    bootstrap.keep(str(REPO), str(data), "session-end", str(project_dir), b"{}")
    for _ in range(600):  # the replay may run detached: wait for it to start (at most a minute)
        if record.exists() and record.read_text().strip():
            break
        time.sleep(0.1)
    assert int(record.read_text().split()[0]) != os.getsid(0)


@pytest.mark.skipif(sys.platform == "win32", reason="the replay's python is a POSIX stand-in")
def test_a_stop_then_a_session_end_kept_are_replayed_in_order_each_once(
    data: Path, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's file as the live hooks would have left it: the Stop's reply, then its end; a second
    set-up runs neither again."""
    t = realistic(tmp_path / "t.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Done."}
    end = {**base, "hook_event_name": "SessionEnd", "reason": "exit"}
    for event, payload in (("stop", stop), ("session-end", end)):
        bootstrap.keep(str(REPO), str(data), event, str(project_dir), json.dumps(payload).encode())
    monkeypatch.setattr(bootstrap, "build", ready_with_this_python([]))
    assert bootstrap.setup(str(REPO), str(data)) == 0
    (session,) = Path(identity.make_project(identity.find_project_root(str(project_dir))).sessions).glob("*.md")
    text = session.read_text(encoding="utf-8")
    assert "Done." in text and "Ended" in text
    log = (data / "setup.log").read_text()
    assert log.index("running the stop hook") < log.index("running the session-end hook")
    bootstrap.replay(str(data), str(data / bootstrap.ENV_DIR / KEY), bootstrap.Log(str(data), echo=False))
    assert (data / "setup.log").read_text().count("running the") == 2


def test_a_foreground_set_up_starts_no_replay_with_nothing_kept_and_is_ready_when_one_cannot_start(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's set-up (``--foreground``) runs the kept hooks apart: with none kept it starts no
    process, and a process that cannot start (no memory, too many processes) leaves them kept and
    logged, never the ready set-up failed."""
    started: list[list[str]] = []

    def popen(args: list[str], **kwargs: object) -> None:
        started.append(args)
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(bootstrap.subprocess, "Popen", popen)
    monkeypatch.setattr(bootstrap, "build", fake_build([]))
    assert bootstrap.setup(str(REPO), str(data), foreground=True) == 0
    assert started == []  # nothing kept: no process
    (data / bootstrap.PENDING).mkdir()
    kept = data / bootstrap.PENDING / "1-1.json"
    kept.write_text(json.dumps({"event": "stop", "payload": "{}", "cwd": str(data), "env": {}}), encoding="utf-8")
    bootstrap.keep(str(REPO), str(data), "post-tool-use", str(data), b"{}")  # not kept, but ready: runs the rest
    assert len(started) == 1 and started[0][-1] == "--replay"
    assert kept.exists() and not (data / bootstrap.SETUP_FAILED).exists()
    assert "could not start the hooks kept" in (data / bootstrap.SETUP_LOG).read_text(encoding="utf-8")
