"""Stale marks: which items of memory.md may no longer hold, said beside them at session start.

An item may be stale when a file its sessions changed, or a repository path its text names, was
changed after it (by mtime) or is gone (``keeper.store.provenance.stale_reason``). Standard library
only and bounded: one read of the provenance record, at most ``provenance.MAX_STATS`` stats, no git.
The ids of the items shown are remembered for the session, so a save that only restates one of
them counts as an echo, not as new evidence (``keeper.capture.evidence``).
"""

from __future__ import annotations

import os

from keeper.markdown import bare
from keeper.memory import document
from keeper.store import paths, provenance

MARKS_SHOWN = 12  # marks in one start-up context, the newest changes first
REASON_CHARS = 160


def mark(
    body: str, stale: list[provenance.Stale], budget: int, firsts: dict[str, str] | None = None
) -> tuple[str, set[str]]:
    """``body`` (memory.md as chosen for the context) with ``[may be stale: …]`` after the first
    ``MARKS_SHOWN`` stale items it shows, in at most ``budget`` characters; and the ids of every
    item it shows (``firsts``: an item's first line -> its key, from ``provenance.listed``)."""
    from keeper.memory.items import key

    reasons = {s.key: s.reason for s in stale[:MARKS_SHOWN]}
    lines = body.split("\n")
    shown: set[str] = set()
    start = 0
    while start < len(lines):
        if not lines[start].startswith("- "):
            start += 1
            continue
        end = start + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        item_key = (firsts or {}).get(lines[start]) or key(document.item_text([bare(x) for x in lines[start:end]]))
        shown.add(provenance.shown_id(item_key))
        reason = reasons.get(item_key)
        if reason:
            short = reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"
            note = f" [may be stale: {short}]"
            if len(note) <= budget:
                lines[end - 1] += note
                budget -= len(note)
        start = end
    return "\n".join(lines), shown


def reserve(stale: list[provenance.Stale]) -> int:
    """Room the marks may take in the context."""
    return sum(min(len(s.reason), REASON_CHARS) + 20 for s in stale[:MARKS_SHOWN])


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
