"""What is installed is the whole package: the wheel and the plugin's own environment carry every
sub-package and data file of the source tree, and nothing else."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from keeper.plugin import bootstrap
from tests.conftest import REPO
from tests.releases import built_wheel, working_tree


def _source_files() -> set[str]:
    """The package as the source tree has it: every file but caches, relative to the repository."""
    return {
        p.relative_to(REPO).as_posix()
        for p in (REPO / "keeper").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")
    }


def test_the_source_tree_holds_only_what_the_package_is_made_of() -> None:
    """A new kind of file would be left out of the plugin's environment: name it in PACKAGE_DATA first."""
    strays = {f for f in _source_files() if not f.endswith(bootstrap.PACKAGE_DATA)}
    assert not strays, strays


def test_the_plugin_set_up_copies_every_sub_package_and_data_file(tmp_path: Path) -> None:
    source = tmp_path / "plugin" / "keeper"
    shutil.copytree(REPO / "keeper", source)
    (source / "store" / "__pycache__").mkdir(exist_ok=True)
    (source / "store" / "__pycache__" / "paths.cpython-311.pyc").write_bytes(b"stale")
    (source / "notes.txt").write_text("left behind by an editor")
    shutil.copytree(source, tmp_path / "site" / "keeper", ignore=bootstrap._not_package_files)
    copied = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert copied == _source_files()


@pytest.mark.needs("pip")
@pytest.mark.slow
def test_the_wheel_carries_every_sub_package_and_data_file(tmp_path: Path) -> None:
    wheel = built_wheel(working_tree(tmp_path / "src"))  # the pip upgrade test installs the same one
    assert wheel.name.startswith("claude_keeper-")
    with zipfile.ZipFile(wheel) as zf:
        packaged = {n for n in zf.namelist() if n.startswith("keeper/")}
    assert packaged == _source_files()
