"""Stale marks: which items of memory.md may no longer hold, said beside them at session start.

An item may be stale when what it claims about the code no longer holds: a path it names is gone,
an identifier or value it names is no longer where it was, or the lines its session wrote were
rewritten (``keeper.store.stale``). The most decisive marks are shown first; a mark whose item is
not shown, or that does not fit the room, passes its slot to the next. The ids of the items shown
are remembered for the session, so a save that only restates one of them counts as an echo, not
as new evidence (``keeper.capture.evidence``).
"""

from __future__ import annotations

import os

from keeper.markdown import bare
from keeper.memory import document
from keeper.store import paths, provenance

TYPE_CHECKING = False
if TYPE_CHECKING:
    from keeper.store.stale import Stale

MARKS_SHOWN = 12  # marks in one start-up context, the most decisive first


def _items(lines: list[str], firsts: dict[str, str]) -> list[tuple[int, str]]:
    """``(index of its last line, key)`` of every item in ``lines``."""
    from keeper.memory.items import key

    found: list[tuple[int, str]] = []
    start = 0
    while start < len(lines):
        if not lines[start].startswith("- "):
            start += 1
            continue
        end = start + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        item_key = firsts.get(lines[start]) or key(document.item_text([bare(x) for x in lines[start:end]]))
        found.append((end - 1, item_key))
        start = end
    return found


def mark(body: str, stale: list[Stale], budget: int, firsts: dict[str, str] | None = None) -> tuple[str, set[str]]:
    """``body`` (memory.md as chosen for the context) with ``[may be stale: …]`` after at most
    ``MARKS_SHOWN`` of the stale items it shows, most decisive first, in at most ``budget``
    characters; and the ids of every item it shows (``firsts``: an item's first line -> its key,
    from ``provenance.listed``)."""
    lines = body.split("\n")
    items = _items(lines, firsts or {})
    where = {item_key: last for last, item_key in items}
    shown = {provenance.shown_id(item_key) for _, item_key in items}
    marked = 0
    for item in stale:  # most decisive first: one not shown or too long passes its slot on
        last = where.pop(item.key, None)
        if last is None:
            continue
        note = f" [may be stale: {item.reason}]"
        if len(note) <= budget:
            lines[last] += note
            budget -= len(note)
            marked += 1
            if marked >= MARKS_SHOWN:
                break
    return "\n".join(lines), shown


def reserve(stale: list[Stale]) -> int:
    """Room the marks may take in the context."""
    return sum(len(s.reason) + 20 for s in stale[:MARKS_SHOWN])


def remember_shown(project: paths.Project, session: str, ids: set[str]) -> None:
    """Keep the ids of the items shown at this session's start (machine-local, for echoes).

    A start that shows what the session's last one showed (a resume, a compaction) leaves the file
    alone, and other ids go to a new file rather than into the old one: on ext4, rewriting a file
    that holds data in place makes its close() start writing it out (``auto_da_alloc``), ~2 ms."""
    path = provenance.shown_file(project, session)
    text = " ".join(sorted(ids))
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return
        os.unlink(path)
    except OSError:
        pass
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        pass
