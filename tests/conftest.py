"""Every test gets its own store, home and working directory, and no leaked Keeper/Claude settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("KEEPER_", "CLAUDE_", "XDG_")) or name == "CLAUDECODE":
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("KEEPER_HOME", str(tmp_path / "store"))
    project = tmp_path / "work" / "api"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    return project


@pytest.fixture
def project_dir(isolated: Path) -> Path:
    """A git project folder named ``api`` (the working directory)."""
    return isolated


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"
