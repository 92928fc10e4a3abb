"""memory.md: the rolling project summary, merged section by section by the contract's rules.

- Core Decisions: added, deduplicated (case, spacing, punctuation, near-duplicates), dated; never
  dropped automatically, only retired by a save that says so. Saving a known decision again
  re-confirms it: its date moves to today, so the newest and re-confirmed come first at start-up.
- Current State: Keeper's lines replaced by each save that has a state, with a date.
- Recent Context: one line per session, newest first, Keeper's lines capped at ``recent_sessions``.
- Known Issues: added (deduplicated) and removed when a save resolves them.

An item is stored as written: one bullet, a multi-line item continuing on lines indented by two
spaces, the date after its last line.

Which lines Keeper wrote is remembered in a provenance record (``state/memory.json``); any other
line, and any section Keeper does not know, is a person's and is left byte for byte. When that
record is lost, every line counts as a person's: stale lines may linger, but nothing is dropped.
"""

from __future__ import annotations

from keeper.markdown import (
    Document,
    Section,
    after_last_bullet,
    bare,
    content_end,
    content_start,
    escape_line,
    unescape_line,
)
from keeper.markdown import bullet as bullet_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

SECTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "decisions": ("Core Decisions", ("core decisions", "decisions", "key decisions")),
    "state": ("Current State", ("current state", "state", "status")),
    "recent": ("Recent Context", ("recent context", "recent sessions", "recent")),
    "issues": ("Known Issues", ("known issues", "issues", "open issues")),
    # typed memories: in a project's memory.md or the global one, merged like Core Decisions
    "feedback": ("Feedback", ("feedback",)),
    "user": ("User", ("user",)),
    "tool": ("Tools", ("tools", "tool")),
    "reference": ("Reference", ("reference", "references")),
}
PROJECT_SECTIONS = ("decisions", "state", "recent", "issues")
TYPED = ("feedback", "user", "tool", "reference")
GLOBAL_TITLE = "Global Memory"
_DATE_SUFFIX = r"\s*\(\d{4}-\d{2}-\d{2}\)\s*$"
_NEGATIONS = frozenset({"not", "no", "never", "dont", "don", "avoid", "without", "stop", "nor"})
LAST_UPDATED = "Last updated:"


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
        return not (
            self.summary
            or self.decisions
            or self.state
            or self.issues
            or self.resolved
            or self.retired
            or self.unplaced
            or self.typed
        )


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


def template(project_name: str, newline: str = "\n") -> str:
    """A new project memory.md: the four project sections (typed ones are added when first used)."""
    lines = [f"# Project Memory: {project_name}", ""]
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


def normalize(text: str) -> str:
    """Fold case, spacing, punctuation and a trailing date, for duplicate checks."""
    import re  # merging only: SessionStart reads memory.md through this module and skips it

    text = re.sub(_DATE_SUFFIX, "", text).lower().replace("'", "")
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def same_item(a: str, b: str) -> bool:
    """Whether two normalised items say the same thing (numbers and negations must agree)."""
    import re

    if a == b:
        return True
    if re.findall(r"\d+", a) != re.findall(r"\d+", b):
        return False
    if bool(_NEGATIONS & set(a.split())) != bool(_NEGATIONS & set(b.split())):
        return False
    from rapidfuzz import fuzz

    return bool(fuzz.token_sort_ratio(a, b) >= 92)


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
    doc: Document, section: Section, new: list[str], stamp: str, reconfirm: bool = False
) -> tuple[list[str], list[str], list[str]]:
    """Add the items not already there; return (added, known, re-confirmed).

    With ``reconfirm``, a known item whose last line ends in a date gets today's date instead.
    """
    added: list[str] = []
    known: list[str] = []
    moved: list[str] = []
    existing = [(index, normalize(_item_at(section, index))) for index, _ in section.bullets()]
    fresh: list[str] = []
    for item in new:
        norm = normalize(item)
        if not norm:
            continue
        match = next((index for index, other in existing if same_item(norm, other)), None)
        if match is not None or any(same_item(norm, other) for other in fresh):
            known.append(item)
            if reconfirm and match is not None and _redate(section, match, stamp):
                moved.append(item)
            continue
        fresh.append(norm)
        added.append(item)
    doc.insert(section, after_last_bullet(section), [line for item in added for line in bullet(item, stamp)])
    return added, known, moved


def _redate(section: Section, index: int, stamp: str) -> bool:
    """Give the item at ``index`` today's date if it carries one (Keeper's own lines do)."""
    last = section.item_span(index) - 1
    line = section.lines[last]
    text = bare(line).rstrip()
    if _date_suffix(text) in (None, stamp):
        return False
    section.lines[last] = text[:-11] + stamp + ")" + line[len(bare(line)) :]
    return True


def _remove_matching(doc: Document, sections: list[Section], wanted: list[str]) -> tuple[list[str], list[str]]:
    """Remove the best-matching item, across ``sections``, for each of ``wanted`` (resolved, retired)."""
    from rapidfuzz import fuzz

    removed: list[str] = []
    unmatched: list[str] = []
    for item in wanted:
        target = normalize(item)
        best: tuple[float, Section, int] | None = None
        for section in sections:
            for index, _ in section.bullets():
                candidate = normalize(_item_at(section, index))
                if not target or not candidate:
                    continue
                score = 100.0 if same_item(target, candidate) else float(fuzz.token_set_ratio(target, candidate))
                if score >= 85 and (best is None or score > best[0]):
                    best = (score, section, index)
        if best is None:
            unmatched.append(item)
            continue
        _, section, index = best
        gone = doc.remove(section, index, section.item_span(index))
        removed.append(item_text(gone, keep_date=True))
    return removed, unmatched


def _retirable(doc: Document, names: tuple[str, ...]) -> list[Section]:
    return [section for name in names if (section := doc.find(SECTIONS[name][1])) is not None]


def _merge_typed(doc: Document, typed: dict[str, list[str]], day: str, report: MergeReport, label: str) -> None:
    for name in TYPED:
        if typed.get(name):
            added, known, moved = _add_items(doc, _section(doc, name), typed[name], day, reconfirm=True)
            key = name + label
            report.added_typed[key], report.known_typed[key] = added, known
            report.reconfirmed += moved


def merge(
    text: str | None,
    provenance: dict[str, Any],
    data: SaveInput,
    *,
    project_name: str,
    session_id: str,
    now: datetime,
    recent_sessions: int,
) -> tuple[str, dict[str, Any], MergeReport]:
    """Merge one save into memory.md's text; return the new text, provenance and a report."""
    doc = Document.parse(text if text and text.strip() else template(project_name))
    report = MergeReport()
    day = now.strftime("%Y-%m-%d")
    state_raw, recent_raw = provenance.get("state"), provenance.get("recent")  # derived: any shape reads as empty
    state_owned = [s for s in state_raw if isinstance(s, str)] if isinstance(state_raw, list) else []
    recent_owned = (
        [r for r in recent_raw if isinstance(r, dict) and isinstance(r.get("line"), str)]
        if isinstance(recent_raw, list)
        else []
    )

    if data.retired:
        sections = _retirable(doc, ("decisions", *TYPED))
        report.retired, report.unmatched_retired = _remove_matching(doc, sections, data.retired)

    if data.scope == "project":
        _merge_typed(doc, data.typed, day, report, "")

    if data.decisions:
        section = _section(doc, "decisions")
        added, known, moved = _add_items(doc, section, data.decisions, day, reconfirm=True)
        report.added_decisions, report.known_decisions, report.reconfirmed = added, known, moved

    if data.state:
        section = _section(doc, "state")
        first = _remove_owned(doc, section, state_owned)
        lines = [f"- {LAST_UPDATED} {now.strftime('%Y-%m-%d %H:%M')}"] + [ln for s in data.state for ln in bullet(s)]
        doc.insert(section, content_start(section) if first is None else first, lines)
        state_owned = lines
        report.state_lines = len(data.state)

    if data.summary:
        section = _section(doc, "recent")
        mine = [r for r in recent_owned if r.get("session") == session_id]
        first = _remove_owned(doc, section, [r["line"] for r in mine])
        others = [r for r in recent_owned if r.get("session") != session_id]
        owned_at = [i for i, line in enumerate(section.lines) if bare(line) in {r["line"] for r in others}]
        line = f"- {day}: {one_line(data.summary)}"
        where = min([*owned_at, first] if first is not None else owned_at, default=content_start(section))
        doc.insert(section, where, [line])
        recent_owned = [{"session": session_id, "line": line}, *others]
        _remove_owned(doc, section, [r["line"] for r in recent_owned[recent_sessions:]])
        recent_owned = recent_owned[:recent_sessions]
        report.recent = True

    if data.resolved:
        section = _section(doc, "issues")
        report.resolved, report.unmatched = _remove_matching(doc, [section], data.resolved)

    if data.issues:
        section = _section(doc, "issues")
        report.added_issues, report.known_issues, _ = _add_items(doc, section, data.issues, day)

    return doc.render(), {"state": state_owned, "recent": recent_owned}, report


def merge_global(text: str | None, data: SaveInput, retire: list[str], now: datetime, report: MergeReport) -> str:
    """Merge a save's global typed lists into the global memory.md, and retire ``retire`` there."""
    doc = Document.parse(text if text and text.strip() else global_template())
    if retire:
        removed, unmatched = _remove_matching(doc, _retirable(doc, TYPED), retire)
        report.retired += removed
        report.unmatched_retired = unmatched
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
    if not text:
        return Overview()
    doc = Document.parse(text)
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


class FileMergeReport:
    """What merging another memory.md into this one added, for ``keeper import``'s report."""

    def __init__(self) -> None:
        self.added: dict[str, int] = {}  # section title ("" for the top) -> items and lines added
        self.new_sections: list[str] = []
        self.state_replaced = False

    def count(self, title: str, added: int) -> None:
        if added:
            self.added[title] = self.added.get(title, 0) + added


def _kind(section: Section) -> str | None:
    """Which of Keeper's own sections this is (``decisions`` …), or None for any other."""
    if section.level != 2:
        return None
    return next((name for name, (_, keys) in SECTIONS.items() if section.key() in keys), None)


def _last_updated(section: Section) -> str:
    """The section's ``Last updated: YYYY-MM-DD HH:MM`` value ("" without one); such values sort by time."""
    return next(
        (text[len(LAST_UPDATED) :].strip() for _, text in section.bullets() if text.startswith(LAST_UPDATED)), ""
    )


def _strings(value: object) -> list[str]:
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


def _recent_owned(provenance: dict[str, Any]) -> list[dict[str, Any]]:
    found = provenance.get("recent")
    return (
        [r for r in found if isinstance(r, dict) and isinstance(r.get("line"), str)] if isinstance(found, list) else []
    )


def _merge_lines(
    doc: Document, target: Section, theirs: Section, report: FileMergeReport, skip: frozenset[str] = frozenset()
) -> None:
    """Add what ``theirs`` holds and ``target`` lacks: items (duplicates by ``same_item``) as written,
    dates included, after the last item; any other missing line after the section's text."""
    known = [normalize(_item_at(target, index)) for index, _ in target.bullets()]
    present = {bare(line).strip() for line in target.lines if line.strip()}
    items: list[str] = []
    prose: list[str] = []
    index = 0
    while index < len(theirs.lines):
        is_item = bullet_text(theirs.lines[index]) is not None
        end = theirs.item_span(index) if is_item else index + 1
        chunk = [bare(line) for line in theirs.lines[index:end]]
        index = end
        if not chunk[0].strip() or all(line in skip for line in chunk):
            continue
        norm = normalize(item_text(chunk)) if is_item else ""
        if norm:
            if not any(same_item(norm, other) for other in known):
                known.append(norm)
                items += chunk
                report.count(target.title, 1)
        elif chunk[0].strip() not in present:
            present.add(chunk[0].strip())
            prose.append(chunk[0])
            report.count(target.title, 1)
    doc.insert(target, after_last_bullet(target), items)
    doc.insert(target, content_end(target), prose)


def _merge_state(
    doc: Document, target: Section, theirs: Section, owned: list[str], their_owned: list[str], report: FileMergeReport
) -> list[str]:
    """Keeper's state lines come from whichever file was updated last; a person's lines of both stay."""
    lines = [bare(line) for line in theirs.lines]
    incoming = [line for line in their_owned if line in lines]
    if incoming and _last_updated(theirs) > _last_updated(target):
        first = _remove_owned(doc, target, owned)
        doc.insert(target, content_start(target) if first is None else first, incoming)
        owned = incoming
        report.state_replaced = True
    stamps = frozenset(line for line in lines if line.startswith(f"- {LAST_UPDATED}"))
    _merge_lines(doc, target, theirs, report, skip=frozenset(their_owned) | stamps)
    return owned


def _merge_recent(
    doc: Document,
    target: Section,
    theirs: Section,
    owned: list[dict[str, Any]],
    their_owned: list[dict[str, Any]],
    report: FileMergeReport,
) -> list[dict[str, Any]]:
    """Add missing ``- YYYY-MM-DD: …`` lines newest first; Keeper's stay Keeper's, so saves roll them out."""
    known = [normalize(_item_at(target, index)) for index, _ in target.bullets()]
    theirs_by_line = {r["line"]: r for r in their_owned}
    owned = list(owned)
    for index, _ in theirs.bullets():
        chunk = [bare(line) for line in theirs.lines[index : theirs.item_span(index)]]
        norm = normalize(item_text(chunk))
        if not norm or norm in known:  # exact: two sessions' short summaries can be near-duplicates
            continue
        known.append(norm)
        day = chunk[0][2:12]
        later = [i for i, text in target.bullets() if text[:10] < day]
        doc.insert(target, later[0] if later else after_last_bullet(target), chunk)
        report.count(target.title, 1)
        if len(chunk) == 1 and chunk[0] in theirs_by_line:
            at = next((i for i, r in enumerate(owned) if r["line"][2:12] < day), len(owned))
            owned.insert(at, theirs_by_line[chunk[0]])
    _merge_lines(doc, target, theirs, report)  # a person's text between the lines
    return owned


def merge_file(
    text: str, provenance: dict[str, Any], other: str, other_provenance: dict[str, Any]
) -> tuple[str, dict[str, Any], FileMergeReport]:
    """Merge another memory.md (an imported one) into ``text``, losing nothing of either.

    Every line here stays. Each section of ``other`` goes into the same section here, or is
    appended when this file lacks it; what this file lacks is added as written, dates included,
    and duplicates are not (the rules saves follow). Current State comes from whichever file was
    updated last; Recent Context lines go in by date, and the ones Keeper wrote stay Keeper's in
    the returned provenance, so later saves still replace and roll them out. Merging the same
    file twice changes nothing the second time.
    """
    doc = Document.parse(text)
    theirs = Document.parse(other)
    report = FileMergeReport()
    state = _strings(provenance.get("state"))
    recent = _recent_owned(provenance)
    for section in theirs.sections:
        name = _kind(section)
        if section.level < 2:
            target = (doc.title() if section.level == 1 else None) or doc.sections[0]
        elif name is not None:
            target = _section(doc, name)
        else:
            found = doc.find((section.key(),))
            if found is None:
                added = doc.add_section(section.title)
                doc.insert(
                    added, 0, [bare(line) for line in section.lines[content_start(section) : content_end(section)]]
                )
                report.new_sections.append(section.title)
                continue
            target = found
        if name == "state":
            state = _merge_state(doc, target, section, state, _strings(other_provenance.get("state")), report)
        elif name == "recent":
            recent = _merge_recent(doc, target, section, recent, _recent_owned(other_provenance), report)
        else:
            _merge_lines(doc, target, section, report)
    if state != _strings(provenance.get("state")) or recent != _recent_owned(provenance):
        provenance = {**provenance, "state": state, "recent": recent}
    return doc.render(), provenance, report
