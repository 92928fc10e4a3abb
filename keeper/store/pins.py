"""Shared memory by the user's say-so: which ``project:`` pins are allowed for which folders.

A ``project: NAME`` line in a repository's ``.claude/keeper.yaml`` shares memory between clones.
A repository's own files must never hand it another project's memory, so a pin takes effect only
once the user has allowed that name for that folder on this machine (``keeper pin``); until then
the folder keeps its own memory and the session-start line says what to run. The allowances live
in ``<root>/pins.json``.
"""

from __future__ import annotations

from keeper import jsonio
from keeper.records import Record
from keeper.store import identity, paths
from keeper.store.fsutil import atomic_write, project_lock, read_json


class Pin(Record):
    """One allowance: the shared memory ``name`` for the folder ``folder`` (``identity.canonical_key``)."""

    __slots__ = ("folder", "name")

    def __init__(self, name: str, folder: str) -> None:
        self.name, self.folder = name, folder


class Pins(Record):
    """``pins.json``: the allowances, in the order they were given; an entry without a name and a
    folder is left out (a hand edit), any other shape allows nothing."""

    __slots__ = ("allowed",)

    def __init__(self, allowed: list[Pin] | None = None) -> None:
        self.allowed: list[Pin] = allowed if allowed is not None else []

    @classmethod
    def parse(cls, data: object) -> Pins:
        entries = data.get("allowed") if isinstance(data, dict) else None
        return cls(
            [
                Pin(e["name"], e["folder"])
                for e in (entries if isinstance(entries, list) else [])
                if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("folder"), str)
            ]
        )

    def dump(self) -> str:
        return jsonio.dumps({"allowed": [{"name": p.name, "folder": p.folder} for p in self.allowed]})


def _file() -> str:
    return paths.pins_file()


def read() -> Pins:
    return Pins.parse(read_json(_file()))


def is_allowed(name: str, folder: str) -> bool:
    return Pin(name, identity.canonical_key(folder)) in read().allowed


def allow(name: str, folder: str) -> None:
    """Allow ``folder`` to use the shared memory ``name`` (one pin per folder)."""
    with project_lock(_file() + ".lock"):
        key = identity.canonical_key(folder)
        entries = [p for p in read().allowed if p.folder != key] + [Pin(name, key)]
        atomic_write(_file(), Pins(entries).dump())


def revoke(folder: str) -> bool:
    """Withdraw the folder's allowance; whether there was one."""
    with project_lock(_file() + ".lock"):
        key = identity.canonical_key(folder)
        entries = read().allowed
        kept = [p for p in entries if p.folder != key]
        atomic_write(_file(), Pins(kept).dump())
        return len(kept) != len(entries)
