"""The owned-lines record of arriving memory: which lines of a memory.md that came from another machine
are Keeper's (``state/memory.json``, ``paths.OWNED_LINES``), so saves here treat them as their own."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from keeper.markdown import Document
    from keeper.memory.document import OwnedLines

STATED = "- State: "  # how a session file lists each Current State line a save wrote (sessions.render_save)


def stated(session_texts: Iterable[str]) -> set[str]:
    """The first line of each Current State line the saves in these session files wrote."""
    lines = (line for text in session_texts for line in text.splitlines())
    return {line[len(STATED) :].rstrip() for line in lines if line.startswith(STATED)}


def _block_end(lines: list[str], start: int, said: Collection[str]) -> int:
    """Where Keeper's Current State block that starts at ``start`` (its Last updated line) ends: the
    bullets after it that the incoming saves ``said`` they wrote, with their continuation lines, so a
    line a person added right after the block stays theirs; every bullet that follows when the saves
    are not at hand (none of the bullets is among them)."""
    end = start + 1
    while end < len(lines) and lines[end].strip() and lines[end][:2] in ("- ", "  "):
        end += 1
    if not any(line[2:].rstrip() in said for line in lines[start + 1 : end] if line.startswith("- ")):
        return end
    at = start + 1
    while at < end and lines[at].startswith("- ") and lines[at][2:].rstrip() in said:
        at += 1
        while at < end and lines[at].startswith("  "):
            at += 1
    return at


def take_over(record: object, was: Document | None, now: Document, said: Collection[str] = ()) -> OwnedLines | None:
    """The owned-lines record (``record``, as read from ``state/memory.json``) once memory.md went
    from ``was`` to ``now`` by what arrived, or None when it stays as it is: Keeper's lines that came
    from another machine stay Keeper's here, so the next save here replaces that Current State and
    rolls those Recent Context lines out, as it would have done with its own. ``said``: the Current
    State lines the incoming saves wrote (see ``stated``), which tell Keeper's lines from a
    person's right after them. The two documents are the caller's, parsed once."""
    from keeper.markdown import bare
    from keeper.memory.document import LAST_UPDATED, SECTIONS, OwnedLines, RecentLine

    owned = OwnedLines.parse(record)
    changed = False
    state = now.find(SECTIONS["state"][1])
    old_state = was.find(SECTIONS["state"][1]) if was is not None else None
    lines = [bare(line) for line in state.lines] if state is not None else []
    old_lines = [bare(line) for line in old_state.lines] if old_state is not None else []
    start = next((i for i, line in enumerate(lines) if line.startswith(f"- {LAST_UPDATED}")), None)
    if start is not None and lines[start] not in old_lines:  # another machine's newer Current State
        owned.state, changed = lines[start : _block_end(lines, start, said)], True
    recent = now.find(SECTIONS["recent"][1])
    old_recent = was.find(SECTIONS["recent"][1]) if was is not None else None
    had = {bare(line) for line in old_recent.lines} if old_recent is not None else set()
    for line in [bare(x) for x in recent.lines] if recent is not None else []:
        if line not in had and len(line) > 13 and line[2:6].isdigit() and line[12:14] == ": ":
            owned.recent.append(RecentLine("sync", line))
            changed = True
    if not changed:
        return None
    owned.recent.sort(key=lambda r: r.line[2:12], reverse=True)
    return owned
