"""Several Keeper stores (machines) against one local bare remote, for the sync tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from keeper.cli import main


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


class Machine:
    """One machine: its own store (KEEPER_HOME) and its own clone of the project, at its own path."""

    def __init__(self, base: Path, name: str, monkeypatch: pytest.MonkeyPatch, origin: str) -> None:
        self.name = name
        self.store = base / f"store-{name}"
        self.project = base / f"{name}-home" / "code" / f"proj-{name}"
        self.project.mkdir(parents=True)
        git("init", "-q", cwd=self.project)
        git("remote", "add", "origin", origin, cwd=self.project)
        self.monkeypatch = monkeypatch

    def env(self) -> dict[str, str]:
        return {**os.environ, "KEEPER_HOME": str(self.store)}

    def run(self, *argv: str, capsys: pytest.CaptureFixture[str] | None = None) -> int:
        self.monkeypatch.setenv("KEEPER_HOME", str(self.store))
        return main(list(argv))

    def save(self, *flags: str) -> None:
        assert self.run("save", "--project-dir", str(self.project), *flags) == 0

    def sync(self, *extra: str) -> int:
        return self.run("sync", *extra)

    def memory_files(self) -> list[Path]:
        return sorted((self.store / "projects").glob("*/memory.md"))

    def memory(self) -> str:
        """The memory.md of this machine's clone (resolved the way Keeper does)."""
        self.monkeypatch.setenv("KEEPER_HOME", str(self.store))
        from keeper.store.resolve import resolve

        project = resolve(str(self.project), "x", strict=True).project
        return Path(project.memory).read_text(encoding="utf-8") if Path(project.memory).exists() else ""

    def start_session(self, session: str = "s1", automatic: bool = False) -> str:
        """Run the real SessionStart hook (in a subprocess, as Claude Code does); its reply text."""
        import json

        env = self.env() if automatic else {**self.env(), "KEEPER_SYNC": "false"}
        payload = {"session_id": session, "cwd": str(self.project), "source": "startup"}
        done = subprocess.run(
            [sys.executable, "-m", "keeper", "hook", "session-start"],
            input=json.dumps(payload).encode(),
            env=env,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0
        return done.stdout.decode()

    def sessions(self) -> list[Path]:
        return sorted((self.store / "projects").glob("*/sessions/*.md"))

    def spawn_sync(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "keeper", "sync"],
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )


def remote_objects(remote: Path) -> bytes:
    """Every object the remote holds, as text: what a secret must never be found in."""
    return subprocess.run(
        ["git", "-C", str(remote), "cat-file", "--batch-all-objects", "--batch"], check=True, capture_output=True
    ).stdout


ORIGIN = "https://user:token@GitHub.com/me/proj.git"
ORIGINS = [ORIGIN, "git@github.com:me/proj", "ssh://git@github.com/me/proj.git"]


@pytest.fixture(name="remote")
def remote_fixture(tmp_path: Path) -> Path:
    """An empty local bare repository: the remote every machine syncs with."""
    path = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(path))
    return path


@pytest.fixture(name="machines")
def machines_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remote: Path) -> list[Machine]:
    """Three machines whose clones of the same repository sit at different paths under different names."""
    return [Machine(tmp_path, name, monkeypatch, origin) for name, origin in zip("abc", ORIGINS)]


def connect(machines: list[Machine], remote: Path) -> None:
    for m in machines:
        assert m.sync("--remote", str(remote)) == 0
        m.start_session("connect")  # Keeper has run in each clone


def durable(store: Path) -> dict[str, bytes]:
    """A store's project memory as files: each memory.md, provenance record and session file, by path."""
    root = store / "projects"
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "index" not in p.parts and p.suffix in (".md", ".jsonl")
    }


def trashed(m: Machine) -> list[Path]:
    """Every file in a machine's trash (the manifests left out)."""
    return sorted(p for p in (m.store / "trash").rglob("*") if p.is_file() and p.name != "manifest.json")
