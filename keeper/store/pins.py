"""Shared memory by the user's say-so: which ``project:`` pins are allowed for which folders.

A ``project: NAME`` line in a repository's ``.claude/keeper.yaml`` shares memory between clones.
A repository's own files must never hand it another project's memory, so a pin takes effect only
once the user has allowed that name for that folder on this machine (``keeper pin``); until then
the folder keeps its own memory and the session-start line says what to run. The allowances live
in ``<root>/pins.json``.
"""

from __future__ import annotations

from keeper import jsonio
from keeper.store import identity, paths
from keeper.store.fsutil import atomic_write, project_lock, read_json


def _file() -> str:
    return paths.pins_file()


def _allowed() -> list[dict[str, str]]:
    entries = read_json(_file()).get("allowed")
    if not isinstance(entries, list):
        return []
    return [
        e
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("folder"), str)
    ]


def is_allowed(name: str, folder: str) -> bool:
    key = identity.canonical_key(folder)
    return any(e["name"] == name and e["folder"] == key for e in _allowed())


def allow(name: str, folder: str) -> None:
    """Allow ``folder`` to use the shared memory ``name`` (one pin per folder)."""
    with project_lock(_file() + ".lock"):
        key = identity.canonical_key(folder)
        entries = [e for e in _allowed() if e["folder"] != key] + [{"name": name, "folder": key}]
        atomic_write(_file(), jsonio.dumps({"allowed": entries}))


def revoke(folder: str) -> bool:
    """Withdraw the folder's allowance; whether there was one."""
    with project_lock(_file() + ".lock"):
        key = identity.canonical_key(folder)
        entries = _allowed()
        kept = [e for e in entries if e["folder"] != key]
        atomic_write(_file(), jsonio.dumps({"allowed": kept}))
        return len(kept) != len(entries)
