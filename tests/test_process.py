"""The one subprocess runner: nothing from the environment steers the child, and failures are one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from keeper import process

SHOW_ENV = (
    "import os, sys; sys.stdout.write(repr(sorted(k for k in os.environ if k.startswith(('GIT_', 'PYTHON', 'PIP_')))))"
)


def test_variables_that_steer_git_or_python_never_reach_the_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("GIT_DIR", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "PYTHONPATH", "PYTHONSTARTUP", "PIP_INDEX_URL"):
        monkeypatch.setenv(name, str(tmp_path))
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i key")
    done = process.run([sys.executable, "-c", SHOW_ENV], cwd=str(tmp_path), timeout=30)
    assert done.stdout.decode() == repr(["GIT_SSH_COMMAND"])


@pytest.mark.skipif(sys.platform == "win32", reason="the planted program is a sh script")
def test_a_program_is_never_found_through_an_empty_or_relative_path_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "bin").mkdir()
    for where in (tmp_path, tmp_path / "bin"):
        (where / "git").write_text(f"#!/bin/sh\necho planted >> {tmp_path}/ran\n")
        (where / "git").chmod(0o755)
    monkeypatch.setenv("PATH", ":.:bin:" + str(tmp_path / "nothing-here"))
    with pytest.raises(process.ProcessFailed, match="cannot run git"):
        process.run(["git", "--version"], cwd=str(tmp_path), timeout=30)
    assert not (tmp_path / "ran").exists()


def test_the_child_starts_in_the_folder_given_with_stdin_closed(tmp_path: Path) -> None:
    code = "import os, sys; sys.stdout.write(os.getcwd() + '|' + repr(sys.stdin.read()))"
    done = process.run([sys.executable, "-c", code], cwd=str(tmp_path), timeout=30)
    assert done.stdout.decode() == f"{tmp_path.resolve()}|''"


def test_a_failure_is_one_line_with_the_programs_last_words(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('warming up\\nfatal: repository not found\\n'); sys.exit(128)"
    with pytest.raises(process.ProcessFailed) as caught:
        process.run([sys.executable, "-c", code], cwd=str(tmp_path), timeout=30)
    assert str(caught.value).endswith("failed: fatal: repository not found") and "\n" not in str(caught.value)
    assert process.run([sys.executable, "-c", code], cwd=str(tmp_path), timeout=30, check=False).returncode == 128


def test_a_program_that_hangs_is_killed_at_its_time_limit(tmp_path: Path) -> None:
    with pytest.raises(process.ProcessFailed, match=r"did not finish within 0\.5 s"):
        process.run([sys.executable, "-c", "import time; time.sleep(60)"], cwd=str(tmp_path), timeout=0.5)


def test_a_program_that_does_not_exist_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(process.ProcessFailed, match="cannot run no-such-program"):
        process.run([str(tmp_path / "no-such-program")], cwd=str(tmp_path), timeout=5)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its reaper does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_group_that_hangs_is_killed_whole_at_its_time_limit(tmp_path: Path) -> None:
    """A coding agent's hook or tool outlives the agent unless its whole process group is killed."""
    import time

    spawn = (
        "import os, subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], stdout=subprocess.DEVNULL)\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(p.pid))\n"
        "time.sleep(120)\n"
    )
    with pytest.raises(process.ProcessFailed, match=r"did not finish within 1 s"):
        process.run([sys.executable, "-c", spawn], cwd=str(tmp_path), timeout=1, group=True)
    pid = int((tmp_path / "pid").read_text())
    for _ in range(100):  # the kill is sent; the kernel takes a moment to finish it
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid)


def test_variables_a_caller_drops_never_reach_the_child(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    code = (
        "import os, sys; sys.stdout.write(repr(sorted(k for k in os.environ if k.startswith(('CLAUDE', 'KEEPER_')))))"
    )
    done = process.run(
        [sys.executable, "-c", code], cwd=str(tmp_path), timeout=30, drop=("CLAUDECODE",), env={"KEEPER_HOME": "x"}
    )
    assert done.stdout.decode() == repr(["CLAUDE_CONFIG_DIR", "KEEPER_HOME"])
