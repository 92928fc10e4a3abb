"""memory.md: the rolling project summary, merged section by section by the contract's rules.

- Core Decisions: added unless the same item is there (``items.key``: a near-duplicate is added and
  named in the report), dated; never dropped automatically, only retired by a save that names it
  (``items.find``). Saving a known decision again re-confirms it: it moves after the others with
  today's date, so the newest and re-confirmed come first at start-up.
- Current State: Keeper's lines replaced by each save that has a state, with a date.
- Recent Context: one line per session, newest first, Keeper's lines capped at ``recent_sessions``.
- Known Issues: added and re-confirmed the same way, removed when a save resolves them (named the
  way a retirement names a decision).

Merging whole documents (import, sync, team memory) lives in ``keeper.memory.merge``.

An item is stored as written: one bullet, a multi-line item continuing on lines indented by two
spaces, the date after its last line.

Which lines Keeper wrote is remembered in a record (``OwnedLines``, ``state/memory.json``); any other
line, and any section Keeper does not know, is a person's and is left byte for byte. When that
record is lost, every line counts as a person's: stale lines may linger, but nothing is dropped.
"""

from __future__ import annotations

from keeper.markdown import (
    Document,
    Section,
    after_last_bullet,
    bare,
    content_start,
    escape_line,
    unescape_line,
)
from keeper.memory import savekeys
from keeper.records import Record
from keeper.text import inline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

SECTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "decisions": ("Core Decisions", ("core decisions", "decisions", "key decisions")),
    "state": ("Current State", ("current state", "state", "status")),
    "recent": ("Recent Context", ("recent context", "recent sessions", "recent")),
    "issues": ("Known Issues", ("known issues", "issues", "open issues")),
    # typed memories: in a project's memory.md or the global one, merged like Core Decisions
    **{key.name: (key.title, key.headings) for key in savekeys.KEYS if key.merge == "typed"},
}
PROJECT_SECTIONS = ("decisions", "state", "recent", "issues")
TYPED = savekeys.TYPED
GLOBAL_TITLE = "Global Memory"
LAST_UPDATED = "Last updated:"


class RecentLine(Record):
    """A Recent Context line Keeper wrote, and the session it wrote it for (``sync`` for one that
    came from another machine)."""

    __slots__ = ("line", "session")

    def __init__(self, session: str, line: str) -> None:
        self.session, self.line = session, line


class OwnedLines(Record):
    """Which lines of memory.md Keeper wrote (``state/memory.json``, ``paths.OWNED_LINES``): its
    Current State lines, and its Recent Context lines newest first, so a save replaces the one and
    rolls the other out. Derived: any shape that is not this reads as owning nothing."""

    __slots__ = ("recent", "state")

    def __init__(self, state: list[str] | None = None, recent: list[RecentLine] | None = None) -> None:
        self.state, self.recent = state or [], recent or []

    @classmethod
    def parse(cls, data: object) -> OwnedLines:
        """The record in a JSON value as read: strings of ``state``, entries of ``recent`` with a line."""
        found = data if isinstance(data, dict) else {}
        state, recent = found.get("state"), found.get("recent")
        return cls(
            [s for s in state if isinstance(s, str)] if isinstance(state, list) else [],
            [
                RecentLine(r["session"] if isinstance(r.get("session"), str) else "", r["line"])
                for r in (recent if isinstance(recent, list) else [])
                if isinstance(r, dict) and isinstance(r.get("line"), str)
            ],
        )

    def dump(self) -> str:
        """The JSON written, as every release wrote it (keys sorted, text as it is)."""
        import json  # a save writes it, never a hook

        recent = [{"line": r.line, "session": r.session} for r in self.recent]
        return json.dumps({"recent": recent, "state": self.state}, ensure_ascii=False, sort_keys=True)


class SaveInput:
    """What one save asks to record (already redacted), and what it held that Keeper cannot place.

    ``unplaced`` is ``(label, text)`` pairs (an unknown key's text, text outside any key, a typed
    memory this version does not merge): kept in the session file, never in memory.md.
    """

    def __init__(
        self,
        summary: str = "",
        decisions: list[str] | None = None,
        state: list[str] | None = None,
        issues: list[str] | None = None,
        resolved: list[str] | None = None,
        retired: list[str] | None = None,
        unplaced: list[tuple[str, str]] | None = None,
        typed: dict[str, list[str]] | None = None,
        scope: str = "project",
    ) -> None:
        self.summary = summary
        self.decisions = decisions or []
        self.state = state or []
        self.issues = issues or []
        self.resolved = resolved or []
        self.retired = retired or []
        self.unplaced = unplaced or []
        self.typed = {name: items for name, items in (typed or {}).items() if items}
        self.scope = scope  # where the typed lists go: "project" or "global"

    def is_empty(self) -> bool:
        return not (self.unplaced or self.holds_memory())

    def holds_memory(self) -> bool:
        """Whether memory can take any of it: a save of unplaced text alone saves nothing there."""
        return bool(
            self.summary or self.decisions or self.state or self.issues or self.resolved or self.retired
        ) or bool(self.typed)


class MergeReport:
    """What a save changed, for the message ``keeper save`` prints."""

    def __init__(self) -> None:
        self.added_decisions: list[str] = []
        self.known_decisions: list[str] = []
        self.state_lines = 0
        self.recent = False
        self.added_issues: list[str] = []
        self.known_issues: list[str] = []
        self.resolved: list[str] = []
        self.unmatched: list[str] = []
        self.retired: list[str] = []
        self.unmatched_retired: list[str] = []
        self.reconfirmed: list[str] = []
        self.added_typed: dict[str, list[str]] = {}  # "feedback" or "feedback (global)" -> items
        self.known_typed: dict[str, list[str]] = {}
        self.tidied = 0  # team.md only: items a textual git merge left twice, or both retired and present
        self.similar: list[tuple[str, str]] = []  # (added item, the known item it resembles)
        self.candidates: list[tuple[str, list[str]]] = []  # (unmatched name, its closest items)
        self.removed_keys: list[str] = []  # ``items.key`` of each item retired or resolved
        self.retired_global: list[str] = []  # the part of ``retired`` taken from the global memory
        self.written: list[str] = []  # the memory files the save changed

    @property
    def retired_here(self) -> list[str]:
        """What the save retired from the project's memory (``retired`` less the global part)."""
        return [item for item in self.retired if item not in self.retired_global]


def template(project_name: str, newline: str = "\n") -> str:
    """A new project memory.md: the four project sections (typed ones are added when first used)."""
    lines = [f"# Project Memory: {inline(project_name)}", ""]
    for name in PROJECT_SECTIONS:
        lines += [f"## {SECTIONS[name][0]}", ""]
    return newline.join(lines)


def global_template() -> str:
    return f"# {GLOBAL_TITLE}\n\nWhat holds across projects; Keeper adds typed sections as they are first saved.\n"


def bullet(item: str, stamp: str = "") -> list[str]:
    """An item as bullet lines: ``- first``, continuation lines indented by two spaces, the date last.

    Blank lines inside an item would end the bullet, so they are left out here (the session file
    keeps the item exactly).
    """
    lines = [line for line in item.split("\n") if line.strip()] or [item]
    if stamp:
        lines[-1] = f"{lines[-1]} ({stamp})"
    return [f"- {lines[0]}", *(escape_line(f"  {line}") for line in lines[1:])]


def item_text(lines: list[str], keep_date: bool = False) -> str:
    """The item a bullet holds (``bullet``'s inverse): its lines joined, the date suffix dropped."""
    first = lines[0][2:] if lines and lines[0][:2] in ("- ", "* ", "+ ") else (lines[0] if lines else "")
    rest = [unescape_line(bare(line)) for line in lines[1:]]
    rest = [line[2:] if line.startswith("  ") else line.lstrip() for line in rest]
    text = "\n".join(bare(line) for line in [first, *rest])
    return text if keep_date or _date_suffix(text) is None else text[:-13]


def _item_at(section: Section, index: int) -> str:
    return item_text(section.lines[index : section.item_span(index)])


def _date_suffix(text: str) -> str | None:
    """``YYYY-MM-DD`` when ``text`` ends in `` (YYYY-MM-DD)``, the date Keeper puts after an item."""
    day = text[-11:-1]
    if text[-13:-11] != " (" or text[-1:] != ")" or len(day) != 10 or day[4] != "-" or day[7] != "-":
        return None
    return day if (day[:4] + day[5:7] + day[8:]).isdigit() else None


def date_of_item(lines: list[str]) -> str | None:
    """The date Keeper put after an item (its last line), if any."""
    return _date_suffix(bare(lines[-1]).rstrip()) if lines else None


def items(text: str | None, name: str) -> list[tuple[str, str | None]]:
    """A section's items as ``(text, date)`` in file order: what memory.md holds, read back."""
    if not text:
        return []
    section = Document.parse(text).find(SECTIONS[name][1])
    if section is None:
        return []
    found = []
    for index, _ in section.bullets():
        day = _date_suffix(bare(section.lines[section.item_span(index) - 1]).rstrip())
        found.append((_item_at(section, index), day))
    return found


def one_line(text: str, limit: int = 400) -> str:
    """Collapse whitespace; cut long text at a word boundary with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _section(doc: Document, name: str) -> Section:
    title, keys = SECTIONS[name]
    return doc.find(keys) or doc.add_section(title)


def _remove_owned(doc: Document, section: Section, owned: list[str]) -> int | None:
    """Remove each line Keeper owns (once per record); return where the first one stood."""
    remaining = list(owned)
    first: int | None = None
    index = 0
    while index < len(section.lines):
        text = bare(section.lines[index])
        if text in remaining:
            remaining.remove(text)
            doc.remove(section, index, index + 1)
            first = index if first is None else first
            continue
        index += 1
    return first


def _add_items(
    doc: Document, section: Section, new: list[str], stamp: str, report: MergeReport, reconfirm: bool = False
) -> tuple[list[str], list[str], list[str]]:
    """Add the items not already there (by ``items.key``); return (added, known, re-confirmed).

    Linear in the section's size: keys go into a dict once. With ``reconfirm``, a known item that
    carries Keeper's date is moved after the last item with today's date, so it counts as
    confirmed now (SessionStart shows the newest first; recall dates it today). A new item that
    only resembles a known one is added, and the resemblance goes into ``report.similar``.
    """
    from keeper.memory import items as identity

    added: list[str] = []
    known: list[str] = []
    moved: list[str] = []
    where: dict[str, int] = {}
    texts: dict[str, str] = {}
    for index, _ in section.bullets():
        text = _item_at(section, index)
        where.setdefault(identity.key(text), index)
        texts.setdefault(identity.key(text), text)
    keys = list(texts) if len(new) <= 50 else []  # hints for a normal save; a bulk one skips them
    shown = list(texts.values())
    fresh: set[str] = set()
    redate: list[int] = []
    for item in new:
        norm = identity.key(item)
        if not norm:
            continue
        if norm in where or norm in fresh:
            known.append(item)
            if reconfirm and norm in where and where[norm] not in redate and _dated(section, where[norm]):
                redate.append(where[norm])
                moved.append(item)
            continue
        like = identity.similar(item, keys, shown)
        if like is not None:
            report.similar.append((item, like))
        fresh.add(norm)
        added.append(item)
    lines = [line for item in added for line in bullet(item, stamp)]
    if redate:
        lines = _take_dated(doc, section, sorted(redate), stamp) + lines
    doc.insert(section, after_last_bullet(section), lines)
    return added, known, moved


def _dated(section: Section, index: int) -> bool:
    return date_of_item(section.lines[index : section.item_span(index)]) is not None


def _take_dated(doc: Document, section: Section, indexes: list[int], stamp: str) -> list[str]:
    """Remove the items at ``indexes`` (ascending) and return their lines, each dated ``stamp``."""
    taken: list[list[str]] = []
    for index in reversed(indexes):
        lines = [bare(line) for line in doc.remove(section, index, section.item_span(index))]
        text = lines[-1].rstrip()
        lines[-1] = text[:-11] + stamp + ")"
        taken.append(lines)
    return [line for lines in reversed(taken) for line in lines]


def _remove_matching(
    doc: Document, sections: list[Section], wanted: list[str], report: MergeReport
) -> tuple[list[str], list[str]]:
    """Remove, across ``sections``, the one item each of ``wanted`` names (see ``items.find``).

    Every copy of the same item goes; else a single near match clearly above every other. A name
    that is ambiguous or matches nothing removes nothing: it is returned as unmatched, and its
    closest candidates go into ``report.candidates``.
    """
    from keeper.memory import items as identity

    removed: list[str] = []
    unmatched: list[str] = []
    for item in wanted:
        places = [(section, index) for section in sections for index, _ in section.bullets()]
        texts = [_item_at(section, index) for section, index in places]
        match = identity.find(item, texts)
        if not match.found:
            unmatched.append(item)
            if match.candidates:
                report.candidates.append((item, match.candidates))
            continue
        for at in sorted(match.found, key=lambda i: -places[i][1]):
            section, index = places[at]
            gone = doc.remove(section, index, section.item_span(index))
            removed.append(item_text(gone, keep_date=True))
            report.removed_keys.append(identity.key(texts[at]))
    return removed, unmatched


def _retirable(doc: Document, names: tuple[str, ...]) -> list[Section]:
    return [section for name in names if (section := doc.find(SECTIONS[name][1])) is not None]


def _merge_typed(doc: Document, typed: dict[str, list[str]], day: str, report: MergeReport, label: str) -> None:
    for name in TYPED:
        if typed.get(name):
            added, known, moved = _add_items(doc, _section(doc, name), typed[name], day, report, reconfirm=True)
            key = name + label
            report.added_typed[key], report.known_typed[key] = added, known
            report.reconfirmed += moved


def merge(
    text: str | None,
    owned: OwnedLines,
    data: SaveInput,
    *,
    project_name: str,
    session_id: str,
    now: datetime,
    recent_sessions: int,
) -> tuple[str, OwnedLines, MergeReport]:
    """Merge one save into memory.md's text; return the new text, the lines Keeper owns then and a report."""
    doc = Document.parse(text if text and text.strip() else template(project_name))
    report = MergeReport()
    day = now.strftime("%Y-%m-%d")
    state_owned, recent_owned = owned.state, owned.recent

    if data.retired:
        sections = _retirable(doc, ("decisions", *TYPED))
        report.retired, report.unmatched_retired = _remove_matching(doc, sections, data.retired, report)

    if data.scope == "project":
        _merge_typed(doc, data.typed, day, report, "")

    if data.decisions:
        section = _section(doc, "decisions")
        added, known, moved = _add_items(doc, section, data.decisions, day, report, reconfirm=True)
        report.added_decisions, report.known_decisions = added, known
        report.reconfirmed += moved

    if data.state:
        section = _section(doc, "state")
        first = _remove_owned(doc, section, state_owned)
        lines = [f"- {LAST_UPDATED} {now.strftime('%Y-%m-%d %H:%M')}"] + [ln for s in data.state for ln in bullet(s)]
        doc.insert(section, content_start(section) if first is None else first, lines)
        state_owned = lines
        report.state_lines = len(data.state)

    if data.summary:
        section = _section(doc, "recent")
        mine = [r for r in recent_owned if r.session == session_id]
        first = _remove_owned(doc, section, [r.line for r in mine])
        others = [r for r in recent_owned if r.session != session_id]
        owned_at = [i for i, line in enumerate(section.lines) if bare(line) in {r.line for r in others}]
        line = f"- {day}: {one_line(data.summary)}"
        where = min([*owned_at, first] if first is not None else owned_at, default=content_start(section))
        doc.insert(section, where, [line])
        recent_owned = [RecentLine(session_id, line), *others]
        _remove_owned(doc, section, [r.line for r in recent_owned[recent_sessions:]])
        recent_owned = recent_owned[:recent_sessions]
        report.recent = True

    if data.resolved:
        section = _section(doc, "issues")
        report.resolved, report.unmatched = _remove_matching(doc, [section], data.resolved, report)

    if data.issues:
        section = _section(doc, "issues")
        added, known, moved = _add_items(doc, section, data.issues, day, report, reconfirm=True)
        report.added_issues, report.known_issues = added, known
        report.reconfirmed += moved

    return doc.render(), OwnedLines(state_owned, recent_owned), report


def merge_global(text: str | None, data: SaveInput, retire: list[str], now: datetime, report: MergeReport) -> str:
    """Merge a save's global typed lists into the global memory.md, and retire ``retire`` there."""
    doc = Document.parse(text if text and text.strip() else global_template())
    if retire:
        removed, unmatched = _remove_matching(doc, _retirable(doc, TYPED), retire, report)
        report.retired += removed
        report.retired_global += removed
        report.unmatched_retired = unmatched
        report.candidates = [(name, found) for name, found in report.candidates if name in unmatched]
    _merge_typed(doc, data.typed, now.strftime("%Y-%m-%d"), report, " (global)")
    return doc.render()


class Overview:
    """The counts ``keeper status`` and the session-start line show."""

    def __init__(self) -> None:
        self.decisions = 0
        self.issues = 0
        self.recent = 0
        self.typed = 0  # feedback, user, tool and reference items
        self.last_updated: str | None = None


def overview(text: str | None) -> Overview:
    return counts(Document.parse(text)) if text else Overview()


def counts(doc: Document) -> Overview:
    """``overview`` of a document already parsed (SessionStart parses memory.md once)."""
    found = Overview()
    for name, attr in (("decisions", "decisions"), ("issues", "issues"), ("recent", "recent")):
        section = doc.find(SECTIONS[name][1])
        if section is not None:
            setattr(found, attr, len(section.bullets()))
    found.typed = sum(len(section.bullets()) for section in _retirable(doc, TYPED))
    state = doc.find(SECTIONS["state"][1])
    if state is not None:
        for _, item in state.bullets():
            if item.startswith(LAST_UPDATED):
                found.last_updated = item[len(LAST_UPDATED) :].strip()
                break
    return found
