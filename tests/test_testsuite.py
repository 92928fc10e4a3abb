"""The README's test command itself: parallel by itself, and leaving the clone as it found it (a clone
added as a local marketplace is copied whole into Claude Code's plugin cache)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

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
