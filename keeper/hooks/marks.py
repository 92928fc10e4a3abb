"""Stale marks: which items of memory.md may no longer hold, said beside them at session start.

An item may be stale when what it claims about the code no longer holds: a path it names is gone,
an identifier or value it names is no longer where it was, or the lines its session wrote were
rewritten (``keeper.store.stale``). The most decisive marks are shown first; a mark whose item is
not shown, or that does not fit the room, passes its slot to the next, and the items left out for
size that carry a mark are named in one bounded line after memory.md. The ids of the items shown
are remembered for the session, so a save that only restates one of them counts as an echo, not
as new evidence (``keeper.capture.evidence``; kept by ``markers.remember_shown``).
"""

from __future__ import annotations

from keeper.markdown import bare
from keeper.memory import document
from keeper.store import provenance
from keeper.store.stale import say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from keeper.store.stale import Stale

MARKS_SHOWN = 12  # marks in one start-up context, the most decisive first
UNSEEN_TEXT = 60  # characters of a marked item's text named in the line of those left out
UNSEEN_HEAD = "\n\nMay be stale, left out above for size (keeper why): "


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
    unseen: list[str] = []  # marked items the context has no room for, named after memory.md
    for item in stale:  # most decisive first: one that does not fit passes its slot on
        last = where.pop(item.key, None)
        note = f" [may be stale: {item.reason}]" if last is not None else _unseen(item, not unseen)
        if len(note) > budget:
            continue
        if last is None:
            unseen.append(note)
        else:
            lines[last] += note
        budget -= len(note)
        marked += 1
        if marked >= MARKS_SHOWN:
            break
    return "\n".join(lines) + "".join(unseen), shown


def _unseen(item: Stale, first: bool) -> str:
    """A marked item left out for size, named in one line after memory.md (bounded, one line)."""
    one = f"{say(item.text, UNSEEN_TEXT)} [may be stale: {item.reason}]"
    return UNSEEN_HEAD + one if first else "; " + one


def reserve(stale: list[Stale]) -> int:
    """Room the marks may take in the context."""
    shown = sum(len(s.reason) + 20 for s in stale[:MARKS_SHOWN])
    return shown + len(UNSEEN_HEAD) + UNSEEN_TEXT if stale else 0
