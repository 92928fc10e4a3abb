"""Stale marks: which items of memory.md may no longer hold, said beside them at session start.

An item may be stale when a file its sessions changed, or a repository path its text names, was
changed after it (by mtime) or is gone (``keeper.store.provenance.stale_reason``). Standard library
only and bounded: one read of the provenance record, at most ``provenance.MAX_STATS`` stats, no git.
The ids of the items shown are remembered for the session, so a save that only restates one of
them counts as an echo, not as new evidence (``keeper.capture.evidence``).
"""

from __future__ import annotations

from keeper.markdown import bare
from keeper.memory import document
from keeper.store import paths, provenance

MARKS_SHOWN = 12  # marks in one start-up context, the newest changes first
REASON_CHARS = 160


class Stale:
    """An item that may be stale: its text, its section, why, and when the newest change was."""

    __slots__ = ("key", "reason", "section", "text", "when")

    def __init__(self, key: str, text: str, section: str, reason: str, when: float) -> None:
        self.key, self.text, self.section, self.reason, self.when = key, text, section, reason, when

    def as_dict(self) -> dict[str, str]:
        return {"id": provenance.item_id(self.key), "text": self.text, "section": self.section, "reason": self.reason}


def stale_items(project: paths.Project, text: str | None) -> list[Stale]:
    """The items of ``text`` (the project's memory.md) that may be stale, newest change first."""
    if not text:
        return []
    history = provenance.by_item(provenance.read(project.dir))
    check = provenance.Checker(project.checkout, project.state)
    found: list[Stale] = []
    for section, item_key, item, day in provenance.listed(text):
        events = history.get(item_key, [])
        if not events and "/" not in item:
            continue  # nothing known it rests on
        why = provenance.stale_reason(item, day, events, check)
        if why is not None:
            found.append(Stale(item_key, item, section, why[0], why[1]))
    found.sort(key=lambda s: -s.when)
    return found


def mark(body: str, stale: list[Stale], budget: int) -> tuple[str, set[str]]:
    """``body`` (memory.md as chosen for the context) with ``[may be stale: …]`` after the first
    ``MARKS_SHOWN`` stale items it shows, in at most ``budget`` characters; and the ids of every
    item it shows."""
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
        item_key = key(document.item_text([bare(line) for line in lines[start:end]]))
        shown.add(provenance.item_id(item_key))
        reason = reasons.get(item_key)
        if reason:
            short = reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"
            note = f" [may be stale: {short}]"
            if len(note) <= budget:
                lines[end - 1] += note
                budget -= len(note)
        start = end
    return "\n".join(lines), shown


def reserve(stale: list[Stale]) -> int:
    """Room the marks may take in the context."""
    return sum(min(len(s.reason), REASON_CHARS) + 20 for s in stale[:MARKS_SHOWN])


def remember_shown(project: paths.Project, session: str, ids: set[str]) -> None:
    """Keep the ids of the items shown at this session's start (machine-local, for echoes)."""
    from keeper.capture import evidence

    path = evidence.shown_file(project, session)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(" ".join(sorted(ids)))
    except OSError:
        pass
