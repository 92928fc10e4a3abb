"""Keeper's earlier releases, taken from this repository's own history for upgrade tests.

Each release is the commit its CHANGELOG entry names, or for 0.3.0 and 0.4.0, whose entries name none,
the commit titled "Release X.Y.Z" (tags may not reach a fresh clone, so the commits are named here). A clone without that history (``git clone --depth 1``) cannot run these
tests: they fail and say how to get it, never skip.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, TEST_CACHE

RELEASES = {
    "0.1.0": "283eda342aebe66549d214aa9e33b869b6eae475",
    "0.2.0": "eb2523ff1578d5af4b539ba32b0befa630109913",
    "0.3.0": "37101f610a00f37359ad7e297169d5a9c1fd1fd1",  # "Release 0.3.0: one version everywhere, ..."
    "0.4.0": "49425f37fc7758cbe5c57d7c4a9cb10110aec8e2",  # "Release 0.4.0: version everywhere, ..."
}
DEPENDENCIES = ("pyyaml", "filelock", "rapidfuzz", "platformdirs")
# their folders in site-packages, as Python imports them: the launchers look for these (tests/test_launcher.py)
PACKAGES = tuple({"pyyaml": "yaml"}.get(name, name) for name in DEPENDENCIES)


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


def environment_with_dependencies(env: Path) -> Path:
    """A new virtual environment (no pip) holding Keeper's dependencies, copied from the test's own
    with their metadata (offline, a second); its site-packages folder is returned."""
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
    return site


def plugin_environment(tree: Path, env: Path, version: str) -> Path:
    """The environment a release's set-up made in ``CLAUDE_PLUGIN_DATA/env/<version>``: a virtual
    environment with the dependencies (copied from the test's own, offline) and the release's flat
    package, marked finished as that release marked it."""
    site = environment_with_dependencies(env)
    shutil.copytree(tree / "keeper", site / "keeper", ignore=shutil.ignore_patterns("__pycache__"))
    from keeper.plugin import bootstrap

    facts = {"version": version, "dependencies": bootstrap.dependencies(str(tree)), "python": sys.executable}
    (env / bootstrap.READY).write_text(json.dumps(facts), encoding="utf-8")
    return env


def working_tree(dest: Path) -> Path:
    """This repository's files as they are now, committed or not, without what tools and runs keep in it
    (a virtualenv, caches, git's own folder): what ``pip install .`` here builds from."""
    ignore = shutil.ignore_patterns(".venv", ".cache", ".git", "__pycache__", "*.egg-info")
    return Path(shutil.copytree(REPO, dest, ignore=ignore))


def built_wheel(tree: Path) -> Path:
    """The wheel ``pip`` builds from the source tree ``tree``, built once for each content of the tree
    into the tests' cache: building (an isolated environment with setuptools) is most of what
    ``pip install <folder>`` costs, and the same tree always gives the same wheel."""
    from filelock import FileLock

    digest = hashlib.sha256()
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(tree).as_posix()}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    wheels = TEST_CACHE / "wheels"
    folder = wheels / digest.hexdigest()[:16]
    wheels.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock", timeout=600):
        if not list(folder.glob("*.whl")):
            building = Path(tempfile.mkdtemp(dir=wheels))  # renamed into place whole, or not at all
            pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check"]
            try:
                done = subprocess.run([*pip, "-w", str(building), str(tree)], cwd=building, capture_output=True)
                assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
                building.rename(folder)
            finally:
                shutil.rmtree(building, ignore_errors=True)
        os.utime(folder)
    for old in wheels.iterdir():  # the wheels of trees no run has asked for in a week
        if old.is_dir() and time.time() - old.stat().st_mtime > 7 * 86400:
            shutil.rmtree(old, ignore_errors=True)
    (wheel,) = folder.glob("*.whl")
    return wheel


def pip_installed(tmp_path: Path) -> Path:
    """This tree as pip installs it (its wheel, not editable) into a new virtualenv that holds the
    dependencies already (offline); the environment's folder (its ``bin/keeper`` is pip's script)."""
    venv = tmp_path / "venv"
    environment_with_dependencies(venv)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps", "--quiet"]
    subprocess.run([*pip, "--disable-pip-version-check", str(built_wheel(working_tree(tmp_path / "src")))], check=True)
    return venv
