"""Keeper's earlier releases, taken from this repository's own history for upgrade tests.

Each release is the commit its CHANGELOG entry names (tags may not reach a fresh clone, so the
commits are named here). A clone without that history (``git clone --depth 1``) cannot run these
tests: they fail and say how to get it, never skip.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import REPO

RELEASES = {
    "0.1.0": "283eda342aebe66549d214aa9e33b869b6eae475",
    "0.2.0": "eb2523ff1578d5af4b539ba32b0befa630109913",
}
DEPENDENCIES = ("pyyaml", "filelock", "rapidfuzz", "platformdirs")


def release_tree(version: str, dest: Path) -> Path:
    """The files of release ``version`` (``git archive`` of its commit), unpacked into ``dest``."""
    commit = RELEASES[version]
    done = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.fail(
            f"this clone lacks the history of Keeper {version} (commit {commit}): "
            f"{done.stderr.decode(errors='replace').strip()}. Fetch it (git fetch --unshallow) and run again."
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(dest)  # our own repository's history
    return dest


def plugin_environment(tree: Path, env: Path, version: str) -> Path:
    """The environment a release's set-up made in ``CLAUDE_PLUGIN_DATA/env/<version>``: a virtual
    environment with the dependencies (copied from the test's own, offline) and the release's flat
    package, marked finished as that release marked it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = Path(
        subprocess.run(
            [str(env / "bin" / "python"), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for name in DEPENDENCIES:
        dist = importlib.metadata.distribution(name)
        for top in sorted({Path(str(f)).parts[0] for f in dist.files or []}):
            source = Path(str(dist.locate_file(top)))
            if source.is_dir():
                shutil.copytree(source, site / top, dirs_exist_ok=True)
            elif source.is_file():
                shutil.copy2(source, site / top)
    shutil.copytree(tree / "keeper", site / "keeper", ignore=shutil.ignore_patterns("__pycache__"))
    from keeper.plugin import bootstrap

    facts = {"version": version, "dependencies": bootstrap.dependencies(str(tree)), "python": sys.executable}
    (env / bootstrap.READY).write_text(json.dumps(facts), encoding="utf-8")
    return env
