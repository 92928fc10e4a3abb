"""How each kind of a memory folder's durable file merges with another machine's copy, as bytes.

A folder's files merge one by one (``merge_folder``), each by the function its kind names
(``MERGERS``): memory.md by Keeper's rules (``merge3``), a session file by name (one side's change
wins; both changed, both are kept, the other text under the one other name a session file takes,
``sessions.place``), the provenance record as the union of both. A new kind of durable file (a
record of its own) adds its function here. The sync repository's road calls these with three
versions of each file: what this folder holds, what it sent last and what the other side holds.
"""

from __future__ import annotations

from keeper import redact
from keeper.exchange import sessions
from keeper.exchange.landing import has_sections
from keeper.markdown import Document
from keeper.memory.merge import merge3
from keeper.store import paths, provenance

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def text_of(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def kind(path: str) -> str:
    """``memory``, ``session`` or ``provenance`` (the store's kinds of durable file, ``paths.file_kind``)
    or ``other`` (the record of removals, merged on its own, or a file Keeper does not know: left as
    the other side has it)."""
    return paths.file_kind(path) or "other"


def merge_memory(path: str, ours: bytes | None, was: bytes | None, merged: dict[str, bytes], rules: list[str]) -> None:
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
        text = redact.redact(text, rules)
    merged[path] = text.encode("utf-8", "surrogateescape")


def merge_session(path: str, ours: bytes | None, was: bytes | None, merged: dict[str, bytes], rules: list[str]) -> None:
    """A session file by name: one side's change wins; both changed, both are kept, this side's text
    under the session's other name (``sessions.place``: the first free ``-imported`` name, or the
    one already holding it)."""
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
    folder, _, name = path.rpartition("/")
    other, _ = sessions.place(name, ours, lambda candidate: merged.get(f"{folder}/{candidate}"))
    merged[f"{folder}/{other}"] = ours


def merge_provenance(
    path: str, ours: bytes | None, was: bytes | None, merged: dict[str, bytes], rules: list[str]
) -> None:
    """Where items came from (``keeper.store.provenance``): the union of both records, never forked."""
    merged[path] = provenance.merge_bytes(ours, merged.get(path), rules)


# How each kind of durable file merges; a new kind (a per-project record) adds its function here.
MERGERS: dict[str, Callable[[str, bytes | None, bytes | None, dict[str, bytes], list[str]], None]] = {
    "memory": merge_memory,
    "session": merge_session,
    "provenance": merge_provenance,
}


def merge_folder(
    merged: dict[str, bytes], held: Mapping[str, bytes], sent: Mapping[str, bytes], rules: list[str]
) -> None:
    """Merge one folder's files (``held``: as it holds them now, redacted with ``rules``; ``sent``:
    as it sent them last) into ``merged`` (the other side's files, merged into in place). A session
    file it sent and holds now under another name (the repository held the same session twice, and
    this folder kept it once) was not deleted here: its absence under that name removes nothing."""
    texts: set[bytes] | None = None  # the session texts it holds, read only if one it sent is gone
    for path in sorted(set(held) | set(sent)):
        found = kind(path)
        if found == paths.SESSION and path not in held and path in sent:
            if texts is None:
                texts = {d for p, d in held.items() if kind(p) == paths.SESSION}
            if sent[path] in texts:
                continue
        merger = MERGERS.get(found)
        if merger is not None:
            merger(path, held.get(path), sent.get(path), merged, rules)


def reads_as_no_memory(held: bytes | None, sent: bytes | None) -> bool:
    """Whether a memory.md reads as no memory (no section left: emptied by a save cut short, or
    written in UTF-16 or with old-Mac line ends) while the version sent last held sections: read as
    it is, each of its items would be taken for deleted, so it is the person's to fix."""
    if held is None or sent is None:
        return False
    return not has_sections(Document.parse(text_of(held) or "")) and has_sections(Document.parse(text_of(sent) or ""))
