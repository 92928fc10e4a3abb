"""What a session starts with: memory.md chosen by importance within a character budget.

At any size the briefing keeps what the next session needs first: the current state, the newest
recent context, at least the newest item of every section (so no heading is ever shown empty
while the file has lines for it), then the open issues newest first, the sections a person
added, and the decisions newest (or most recently re-confirmed) first. Typed memories rank with
them: feedback beside the state, the user beside recent context, tools and references with the
decisions. Within each of these ranks, what sessions used or restated lately comes first, and an
item shown at many starts that no session used is left to recall (``Evidence``). Items keep their
dates so stale facts can be judged, and whatever did not fit is named with how to recall it.
Sessions that ended without a save are listed too: their work is otherwise invisible until recalled.
"""

from __future__ import annotations

import os
import time

from keeper.hooks.clock import FUTURE_SLACK
from keeper.markdown import Document, Section, bare
from keeper.memory import document
from keeper.store import loads, paths, provenance, sessions
from keeper.store.fsutil import read_head
from keeper.text import count

UNSAVED_SHOWN = 3  # sessions without a save, newest first
UNSAVED_LOOKED_AT = 12  # newest session files considered for that
ITEM_CHARS = 1200  # one item is cut beyond this, so one huge entry cannot take the whole budget
HEADING_CHARS = 200  # a heading (and the label naming it) is cut beyond this

# Lower tiers are taken first; within a tier, units in the order they were made.
_FIRST, _STATE, _RECENT, _ISSUES, _OTHER, _DECISIONS = range(6)
_NEWEST_FIRST = ("decisions", "issues", "feedback", "user", "tool", "reference")
_TIERS = {
    "state": _STATE,
    "feedback": _STATE,  # corrections not to repeat: as urgent as where the work stands
    "recent": _RECENT,
    "user": _RECENT,
    "issues": _ISSUES,
    "decisions": _DECISIONS,
    "tool": _DECISIONS,
    "reference": _DECISIONS,
}


class _Unit:
    """One item (or one loose line) of a section, as it would be shown."""

    __slots__ = ("key", "lines", "rank", "section", "size", "tier")

    def __init__(self, section: int, key: tuple[object, ...], lines: list[str], tier: int, rank: int) -> None:
        text = "".join(lines)
        if len(text) > ITEM_CHARS:
            lines = [text[: ITEM_CHARS - 2].rstrip() + " …\n"]
        self.section, self.key, self.lines, self.tier, self.rank = section, key, lines, tier, rank
        self.size = sum(len(line) for line in lines)


class Evidence:
    """What sessions did with the items they were shown (``store.loads``), as the choice weighs it:
    an item used or restated lately comes first in its tier; one shown at many starts and never used
    nor restated is left to recall (``left``: how many) where ``loads.rank`` says so."""

    def __init__(self, tally: loads.Loads, firsts: dict[str, str]) -> None:
        self.tally, self.firsts = tally, firsts
        self.left = 0

    def rank(self, name: str | None, lines: list[str]) -> int:
        """The item's rank in its tier (``loads.FAVOURED`` first); ``loads.IDLE``: leave it to recall."""
        if name not in provenance.CHECKED:
            return loads.NEUTRAL
        item_key = self.firsts.get(lines[0].rstrip("\r\n"))
        if item_key is None:  # no stale check ran (no work tree here): the key worked out
            from keeper.memory.items import key

            item_key = key(document.item_text(lines))
        rank = self.tally.rank(item_key, name)
        self.left += rank == loads.IDLE
        return rank


def _name(section: Section) -> str | None:
    for name, (_, keys) in document.SECTIONS.items():
        if section.level == 2 and section.key() in keys:
            return name
    return None


def _items(section: Section) -> list[tuple[int, list[str]]]:
    """A section's items in file order, each with where it starts: a bullet with its continuation
    lines and the loose lines after it (a code fence, a table, a paragraph read with the item above
    them, and moved with it: sorted one line each, a fence closed before it opened and a table stood
    on its head); loose lines before any bullet are one item. A fence's lines are never items."""
    found: list[tuple[int, list[str]]] = []
    position, fenced = 0, False
    while position < len(section.lines):
        line = section.lines[position]
        bullet = line[:2] in ("- ", "* ", "+ ") and not fenced
        end = section.item_span(position) if bullet else position + 1
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if line.strip() or (fenced and found):
            lines = [bare(text) + "\n" for text in section.lines[position:end]]
            if bullet or not found:
                found.append((position, lines))
            else:
                found[-1][1].extend(lines)
        position = end
    return found


def _units(index: int, section: Section, name: str | None, evidence: Evidence | None) -> list[_Unit]:
    """A section's items (a bullet with its continuation lines, or a loose line), in display order;
    without those ``evidence`` leaves to recall."""
    found: list[tuple[tuple[object, ...], list[str]]] = []
    for position, lines in _items(section):
        day = document.date_of_item(lines) or ""
        key: tuple[object, ...] = (day, position) if name in _NEWEST_FIRST else (position,)
        found.append((key, lines))
    if name in _NEWEST_FIRST:
        found.sort(key=lambda pair: pair[0], reverse=True)  # newest date first; later lines are newer
    tier = _TIERS.get(name or "", _OTHER)
    units: list[_Unit] = []
    for key, lines in found:
        rank = evidence.rank(name, lines) if evidence is not None and lines[0][:2] == "- " else loads.NEUTRAL
        if rank != loads.IDLE:
            units.append(_Unit(index, key, lines, tier if units else _FIRST, rank))
    return units


def _short(line: str) -> str:
    """A heading or label cut to ``HEADING_CHARS``: a file's headings are text of any length."""
    return line if len(line) <= HEADING_CHARS else line[: HEADING_CHARS - 2].rstrip() + " …"


def parse(text: str) -> Document:
    """A memory file as ``select`` reads it (a byte-order mark is not text)."""
    return Document.parse(text.lstrip("\ufeff"))


def select(text: str | Document, limit: int, evidence: Evidence | None = None) -> tuple[str, list[str]]:
    """memory.md within ``limit`` characters, chosen by importance; and what was left out, by section.

    Linear in the file's size whatever its shape: a heading costs its length when its section's
    first item is taken (headings of a person's empty sections are kept while they take at most a
    quarter of the budget; Keeper's own empty sections are left out), and no heading or label is
    longer than ``HEADING_CHARS``. ``text`` may come parsed (``parse``), so a caller that reads the
    same document for other ends parses it once. ``evidence`` orders each tier by what sessions
    used and leaves to recall what none did (``Evidence``).
    """
    doc = parse(text) if isinstance(text, str) else text
    units: list[_Unit] = []
    heads: dict[int, str] = {}
    for index, section in enumerate(doc.sections):
        name = _name(section)
        if section.heading is not None:
            heads[index] = _short(bare(section.heading)) + "\n"
        units.extend(_units(index, section, name, evidence))
    by_section: dict[int, list[int]] = {}
    for position, unit in enumerate(units):
        by_section.setdefault(unit.section, []).append(position)
    budget = limit
    shown: set[int] = set()
    for index, head in heads.items():  # a person's empty sections keep their place, within reason;
        # Keeper's own (an empty Current State or Known Issues) say nothing
        if index not in by_section and _name(doc.sections[index]) is None and len(head) + 1 <= min(budget, limit // 4):
            shown.add(index)
            budget -= len(head) + 1
    chosen: set[int] = set()
    for position in sorted(range(len(units)), key=lambda i: (units[i].tier, units[i].rank)):
        unit = units[position]
        cost = len(heads[unit.section]) + 1 if unit.section in heads and unit.section not in shown else 0
        if unit.size + cost <= budget:
            chosen.add(position)
            shown.add(unit.section)
            budget -= unit.size + cost
    out: list[str] = []
    left: list[str] = []
    for index, section in enumerate(doc.sections):
        mine = by_section.get(index, [])
        kept = [units[i] for i in mine if i in chosen]
        if index in heads and index in shown:
            out.append(heads[index])
        out.extend(line for unit in kept for line in unit.lines)
        if kept or index in shown:
            out.append("\n")
        dropped = len(mine) - len(kept)
        if dropped:
            label = _short(section.title) if section.title else "the opening text"
            noun = "older item" if _name(section) in (*_NEWEST_FIRST, "recent") else "item"
            left.append(f"{count(dropped, noun)} of '{label}'")
    return "".join(out).strip() + "\n", left


RECORD_BYTES = 1 << 20


def unsaved_sessions(project: paths.Project, current: str) -> list[str]:
    """One line for each recent session that ended without a save and is newer than the last save.

    Only the newest few session files are looked at (``sessions.newest``: the folder is not
    listed, so this costs the same at any size); a later save covers the ones before it.
    """
    names = sessions.newest(project, UNSAVED_LOOKED_AT)
    if not names:
        return []
    try:
        saved_at = os.stat(project.memory).st_mtime
    except OSError:
        saved_at = 0.0
    if saved_at > time.time() + FUTURE_SLACK:  # saved while the clock was ahead: the mtime orders nothing
        saved_at = 0.0  # so each record's own content says whether it was saved
    own = sessions.existing_file(project, current)
    lines: list[str] = []
    for name in reversed(names):
        path = os.path.join(project.sessions, name)
        try:
            if os.stat(path).st_mtime <= saved_at or path == own:
                continue
        except OSError:
            continue
        head = read_head(path, RECORD_BYTES)  # a record's facts and saves come first; a huge one costs no more
        line = _unsaved_line(head[0] if head else "", name)
        if line:
            lines.append(line)
        if len(lines) == UNSAVED_SHOWN:
            break
    return lines


def _unsaved_line(text: str, name: str) -> str | None:
    """``- 2026-11-21 14:30 (no save): "first prompt"; files: a.py, b.py`` for a record without saves
    that did some work (a tool use or a changed file); None for one that only talked."""
    doc = Document.parse(text)
    if doc.find((sessions.SAVES.lower(),)) is not None:
        return None
    activity = doc.find((sessions.ACTIVITY.lower(),))
    if activity is None:
        return None
    body = [bare(line) for line in activity.lines]
    prompt = next((line.split(". ", 1)[1] for line in body if line.startswith("  1. ")), "")
    start = next((i for i, line in enumerate(body) if line.startswith("- Files changed")), None)
    files: list[str] = []
    if start is not None:
        for line in body[start + 1 :]:
            if not line.startswith("  - "):
                break
            files.append(line[4:].rsplit(" (", 1)[0])
    if not prompt and not files:
        return None
    facts = sessions.read_facts(text)
    uses = facts.get("Tool uses", "").split(" ", 1)[0]
    if not files and uses.isdigit() and int(uses) == 0:
        return None  # it only talked (a question, a /keeper:recall): no work was left unsaved
    when = facts.get("Started") or name[:15].replace("_", " ")
    parts = [f"- {when} (ended without a save, {name})"]
    if prompt:
        parts.append(f'first prompt: "{document.one_line(prompt, 160)}"')
    if files:
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        parts.append(f"files: {shown}")
    return "; ".join(parts)
