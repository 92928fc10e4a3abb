"""The README's test command itself: parallel by itself, and leaving the clone as it found it (a clone
added as a local marketplace is copied whole into Claude Code's plugin cache)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SECONDS, file_weight

LEFT_BY_OTHERS = (".git", "__pycache__", ".pytest_cache", ".hypothesis", "build", "*.egg-info", "artifacts", ".venv")


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.slow
def test_python_m_pytest_runs_on_every_core_and_leaves_the_clone_clean(tmp_path: Path) -> None:
    pytest.importorskip("xdist")  # the test extra has it; the Windows lane runs without
    clone = tmp_path / "clone"
    shutil.copytree(REPO, clone, ignore=shutil.ignore_patterns(*LEFT_BY_OTHERS, ".cache", ".mypy_cache", ".ruff_cache"))
    before = files(clone)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    # hypothesis' tests, and a file alone would run in one process: two files
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_recall_spread.py", "tests/test_clocks.py"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "created: " in done.stdout and " workers" in done.stdout  # pytest-xdist, with no -n given
    linted = subprocess.run([sys.executable, "-m", "ruff", "check", "-q", "."], cwd=clone, env=env, check=False)
    assert linted.returncode == 0
    assert files(clone) == before  # no .pytest_cache, .hypothesis, screenshots or .ruff_cache in the clone
    cache = Path(os.environ["HOME"], ".cache", "keeper-tests")
    assert (cache / "pytest").is_dir() and (cache / "hypothesis").is_dir() and (cache / "ruff").is_dir()
    took = json.loads((cache / "pytest" / "v" / SECONDS).read_text(encoding="utf-8"))
    assert set(took) == {"tests/test_recall_spread.py", "tests/test_clocks.py"}  # for the next run's dealing


def test_a_test_file_that_is_not_there_is_named_not_passed_over(tmp_path: Path) -> None:
    """A mistyped file among the README's test command's arguments: pytest says which one and exits 4;
    xdist's workers, started for two files, only said "no tests ran", for the right one too."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_clocks.py", "tests/test_no_such_file.py"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "file or directory not found: tests/test_no_such_file.py" in done.stdout + done.stderr


def test_the_longest_files_are_dealt_first_as_long_as_they_last_took_else_by_kind() -> None:
    """With two workers the run ends when the last long file dealt ends: the long ones go first."""
    seen = {"tests/test_sync.py": 44.0, "tests/e2e/test_ring.py": 30.0}
    files = {  # each file, and whether it holds a slow test
        "tests/test_alpha.py": False,
        "tests/test_sync.py": False,
        "tests/test_stress.py": True,
        "tests/e2e/test_ring.py": False,
        "tests/e2e/test_codex.py": False,
    }
    dealt = sorted(files, key=lambda path: -file_weight(path, files[path], seen))
    assert dealt == [
        "tests/e2e/test_codex.py",  # never timed: an end-to-end file is taken for a minute
        "tests/test_sync.py",
        "tests/e2e/test_ring.py",
        "tests/test_stress.py",
        "tests/test_alpha.py",
    ]
