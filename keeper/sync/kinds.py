"""How each kind of file of the sync repository merges, and which may land in the store.

A copy's files merge one by one: memory.md by Keeper's rules (``merge3``), a session file by name
(its name carries its machine, so only its own machine changes it; both changed, both are kept).
``MERGERS`` maps a kind to its function: a new kind of durable per-project file (a record of its
own) adds one here. What arrives is read as ``keeper import`` reads an archive (``acceptable``).
"""

from __future__ import annotations

from keeper import redact
from keeper.memory.merge import merge3
from keeper.store import paths, provenance

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def text_of(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


class Rules:
    """What a merge function may need besides the three versions: this machine and its patterns."""

    __slots__ = ("machine", "patterns")

    def __init__(self, machine: str, patterns: list[str]) -> None:
        self.machine, self.patterns = machine, patterns


def kind(path: str) -> str:
    """``memory``, ``session`` or ``provenance`` (the store's kinds of durable file, ``paths.file_kind``)
    or ``other`` (the record of removals, merged on its own, or a file Keeper does not know: left as
    the remote has it)."""
    return paths.file_kind(path) or "other"


def merge_memory(path: str, ours: bytes | None, was: bytes | None, merged: dict[str, bytes], rules: Rules) -> None:
    """memory.md by Keeper's rules (``merge3``); deleted here and unchanged there, it goes."""
    now = merged.get(path)
    if ours is None:
        if was is not None and now == was:
            merged.pop(path, None)
        return
    if now is None:
        if was is None or ours != was:
            merged[path] = ours
        return
    text = merge3(text_of(was), text_of(ours) or "", text_of(now) or "")
    if text != text_of(now):  # what leaves is redacted, the other side's lines included
        text = redact.redact(text, rules.patterns)
    merged[path] = text.encode("utf-8", "surrogateescape")


def merge_session(path: str, ours: bytes | None, was: bytes | None, merged: dict[str, bytes], rules: Rules) -> None:
    """A session file by name: one side's change wins; both changed, both are kept."""
    now = merged.get(path)
    if ours is None:  # a session file this copy no longer holds
        if was is not None and now == was:
            merged.pop(path, None)
        return
    if now is None:
        if was is None or ours != was:  # new here, or changed here after the other side deleted it
            merged[path] = ours
        return
    if ours in (now, was):
        return
    if now == was:
        merged[path] = ours
        return
    stem = path[:-3]
    machine = rules.machine
    merged[f"{stem}-{machine}.md" if "@" in stem else f"{stem}@{machine}.md"] = ours


def merge_provenance(path: str, ours: bytes | None, was: bytes | None, merged: dict[str, bytes], rules: Rules) -> None:
    """Where items came from (``keeper.store.provenance``): the union of both records, never forked."""
    merged[path] = provenance.merge_bytes(ours, merged.get(path), rules.patterns)


# How each kind of durable file merges; a new kind (a per-project record) adds its function here.
MERGERS: dict[str, Callable[[str, bytes | None, bytes | None, dict[str, bytes], Rules], None]] = {
    "memory": merge_memory,
    "session": merge_session,
    "provenance": merge_provenance,
}


def acceptable(path: str, data: bytes | None) -> bool:
    """Whether a file of the repository may land in the store, read as ``keeper import`` reads an
    archive's: one of the store's kinds of durable file, a session file with a safe name, within
    the size an archive allows."""
    if data is None or len(data) > paths.MAX_FILE:
        return False
    found = paths.file_kind(path)
    return found is not None and (found != paths.SESSION or paths.safe_session_name(path.rsplit("/", 1)[-1]))


def is_memory(path: str) -> bool:
    return paths.file_kind(path) == paths.MEMORY
