"""Merging whole memory.md documents: three-way (sync, team memory) and two-way (import).

``merge3(base, ours, theirs)`` brings two versions of one memory.md together against their common
ancestor by Keeper's rules, never with a conflict marker:

- items (a bullet with its continuation lines) are unioned without duplicates, by ``items.key``;
  an item either side removed (present in ``base``, absent on that side) stays gone, so a
  retirement or resolution on one machine is never undone by the other; when both sides hold
  the same item, the copy with the newer Keeper date wins (a re-confirmation travels);
- every other line (a person's prose) is kept the same way, by its exact text;
- Current State: Keeper's block (the ``- Last updated:`` line and the bullets right after it)
  comes from the side whose ``Last updated:`` is newer (in the same minute, the side that changed
  it, else the larger text: both machines end with the same block; a time past this machine's
  clock counts as none); a person's other lines of both stay;
- Recent Context: unioned, then Keeper's dated lines newest first (at most ``recent_sessions``
  of them when given);
- sections only one side has are kept (one the other side deleted goes, unless it holds new lines).

It is total: any text in, a memory.md out, never an exception. The cost is linear in the size of
the documents (dicts and sets keyed by ``items.key``). ``merge_file`` is import's two-way union
with the provenance record; it skips items whose key is in a record of removals.
"""

from __future__ import annotations

from keeper.markdown import (
    Document,
    Section,
    after_last_bullet,
    bare,
    content_end,
    content_start,
    fence,
)
from keeper.markdown import bullet as bullet_text
from keeper.memory.document import (
    LAST_UPDATED,
    SECTIONS,
    OwnedLines,
    RecentLine,
    _item_at,
    _remove_owned,
    _section,
    item_text,
)
from keeper.memory.items import key, strip_date

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

_BLANK = ""  # the key of a blank line: layout, never merged
SKEW = 600.0  # seconds another machine's clock may run ahead of this one's (a later ``Last updated`` is none)


class _Unit:
    """One item or one line of a section: its key (``i:`` + item key, ``p:`` + text) and lines."""

    __slots__ = ("key", "lines")

    def __init__(self, unit_key: str, lines: list[str]) -> None:
        self.key, self.lines = unit_key, lines

    def date(self) -> str:
        text = bare(self.lines[-1]).rstrip()
        return text[-11:-1] if strip_date(text) != text else ""


def _units(lines: list[str], keys: dict[str, str] | None = None) -> list[_Unit]:
    """A section's lines as units; ``keys`` memoises ``items.key`` by line (the three versions
    share most of their lines)."""
    keys = {} if keys is None else keys
    found: list[_Unit] = []
    section = Section(None, 0, "", lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            found.append(_Unit(_BLANK, [line]))
            index += 1
        elif line[:1] in "-*+" and line[1:2] in (" ", "\t"):
            end = section.item_span(index)
            chunk = lines[index:end]
            if end == index + 1:
                item_key = keys.get(line)
                if item_key is None:
                    item_key = keys[line] = "i:" + key(bare(line)[2:])
            else:
                item_key = "i:" + key(item_text([bare(x) for x in chunk]))
            found.append(_Unit(item_key, chunk))
            index = end
        elif fence(line):  # a code block is one unit, known by its text without the closing fence
            end, closed = _fence_end(lines, index)
            chunk = lines[index:end]
            body = chunk[:-1] if closed else chunk
            unit = _Unit("p:" + "\n".join(bare(x) for x in body), chunk)
            if not closed:  # closed when written out, so the lines after it stay lines
                unit.lines = [*chunk, (fence(line) or "```")[0] * 3]
            found.append(unit)
            index = end
        else:
            found.append(_Unit("p:" + bare(line).strip(), [line]))
            index += 1
    return found


def _fence_end(lines: list[str], start: int) -> tuple[int, bool]:
    """End (exclusive) of the code block opened at ``start``, and whether a fence closes it (the
    rule ``Document.parse`` follows)."""
    opening = (fence(lines[start]) or "```")[0] * 3
    for index in range(start + 1, len(lines)):
        closing = fence(lines[index])
        if closing and closing.startswith(opening):
            return index + 1, True
    return len(lines), False


def _section_id(section: Section) -> tuple[int, str]:
    if section.level < 2:
        return (section.level, "")  # the text before the first heading; the title, whatever it says
    return (2, _kind(section) or section.key())


def _state_block(units: list[_Unit]) -> tuple[int, int]:
    """Where Keeper's state block lies among a Current State section's units: ``(start, end)``."""
    for start, unit in enumerate(units):
        if unit.key.startswith("i:") and bare(unit.lines[0])[2:].lstrip().startswith(LAST_UPDATED):
            end = start + 1
            while end < len(units) and units[end].key.startswith("i:"):
                end += 1
            return start, end
    return 0, 0


def _merge_units(base: list[_Unit], ours: list[_Unit], theirs: list[_Unit]) -> list[_Unit]:
    """Ours with what theirs removed taken out and what theirs added put in (items after the last
    item, lines after the last line); linear in the number of units."""
    base_keys = {u.key for u in base}
    our_keys = {u.key for u in ours}
    their_keys = {u.key for u in theirs}
    gone = (base_keys - our_keys) | (base_keys - their_keys)
    gone.discard(_BLANK)
    newer = {u.key: u for u in theirs if u.key.startswith("i:")}
    result: list[_Unit] = []
    for unit in ours:
        if unit.key in gone:
            continue
        other = newer.get(unit.key)
        newer_copy = other is not None and other.lines != unit.lines and other.date() > unit.date()
        result.append(other if newer_copy and other is not None else unit)
    seen = set(our_keys)
    added_items: list[_Unit] = []
    added_lines: list[_Unit] = []
    for unit in theirs:
        if unit.key == _BLANK or unit.key in seen or unit.key in base_keys:
            continue
        seen.add(unit.key)
        (added_items if unit.key.startswith("i:") else added_lines).append(unit)
    if added_items:
        at = max((i + 1 for i, u in enumerate(result) if u.key.startswith("i:")), default=None)
        if at is None:
            at = max((i + 1 for i, u in enumerate(result) if u.key != _BLANK), default=0)
        result[at:at] = added_items
    if added_lines:
        at = max((i + 1 for i, u in enumerate(result) if u.key != _BLANK), default=0)
        result[at:at] = added_lines
    return result


def _merge_state3(base: list[_Unit], ours: list[_Unit], theirs: list[_Unit], theirs_newer: bool) -> list[_Unit]:
    """Keeper's block from the newer side; a person's other lines merged like any section's."""
    winner, loser = (theirs, ours) if theirs_newer else (ours, theirs)
    w_start, w_end = _state_block(winner)
    l_start, l_end = _state_block(loser)
    b_start, b_end = _state_block(base)
    block = winner[w_start:w_end]
    block_keys = {u.key for u in block}
    rest = _merge_units(
        base[:b_start] + base[b_end:],
        [u for u in winner[:w_start] + winner[w_end:] if u.key not in block_keys],
        [u for u in loser[:l_start] + loser[l_end:] if u.key not in block_keys],
    )
    return rest[:w_start] + block + rest[w_start:] if block else rest


def _order_recent(units: list[_Unit], bound: int | None) -> list[_Unit]:
    """Keeper's ``- YYYY-MM-DD: …`` lines newest first in the places items hold; at most ``bound``."""
    dated = [i for i, u in enumerate(units) if u.key.startswith("i:") and _recent_day(u)]
    ordered = sorted((units[i] for i in dated), key=_recent_day, reverse=True)
    dropped = set()
    if bound is not None and bound >= 0:
        dropped = {id(u) for u in ordered[bound:]}
    out = list(units)
    for place, unit in zip(dated, ordered):
        out[place] = unit
    return [u for u in out if id(u) not in dropped]


def _recent_day(unit: _Unit) -> str:
    text = bare(unit.lines[0])
    day = text[2:12]
    ok = len(text) > 13 and text[12] == ":" and day[4:5] == "-" and day[7:8] == "-"
    return day if ok and (day[:4] + day[5:7] + day[8:]).isdigit() else ""


def _lines(units: list[_Unit], newline: str) -> list[str]:
    return [bare(line) + newline for unit in units for line in unit.lines]


def merge3(base: str | None, ours: str, theirs: str, *, recent_sessions: int | None = None) -> str:
    """Merge two versions of a memory.md against their common ancestor ``base`` (None: unknown,
    then nothing counts as removed and it is a plain union). See the module's rules.

    ``merge3(b, x, x) == x``; additions merge the same in either order; a removal on either side
    stays removed; no line added on either side is lost. Never raises. When one side is unchanged
    from ``base`` (or both are equal) the other is returned as it is, ``recent_sessions`` included.
    Lines come out with ``ours``' line ending; the provenance record (``state/memory.json``) is the
    caller's to keep: a merged file's Keeper lines not in it are then treated as a person's.
    """
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    try:
        return _merge3(base or "", ours, theirs, recent_sessions)
    except Exception:  # total by contract; a bug here must still lose nothing
        known = set(ours.splitlines())
        extra = [line for line in theirs.splitlines() if line not in known]
        return ours.rstrip("\n") + "\n" + ("\n" + "\n".join(extra) + "\n" if extra else "")


def _merge3(base: str, ours: str, theirs: str, bound: int | None) -> str:
    """Ours' sections in ours' order, then those only theirs has; each section's lines merged.

    A section one side deleted goes unless the other added lines to it. Every line comes out
    ended with ours' line ending (the level-0 text before the first heading always comes first:
    ``Document.parse`` gives every document one, and it is never dropped)."""
    b_doc, o_doc, t_doc = Document.parse(base), Document.parse(ours), Document.parse(theirs)
    nl = o_doc.newline
    sides = _Sides(b_doc, o_doc, t_doc, bound)
    done: set[tuple[int, str]] = set()
    out: list[Section] = []
    for sid, section in _firsts(o_doc, done):
        units = sides.merged(sid, sides.ours[sid])
        if sid in sides.base and sid not in sides.theirs and _blank(units):
            continue  # theirs deleted the section and ours added nothing to it
        out.append(Section(section.heading, section.level, section.title, _lines(units, nl)))
    last_of = {_section_id(s): s for s in t_doc.sections}  # a repeated section's heading: its last
    for sid, _ in _firsts(t_doc, done):
        units = sides.merged(sid, [])
        if sid in sides.base and _blank(units):
            continue  # ours deleted it, and theirs added nothing to it
        _set_off(out[-1], nl)
        out.append(_new_section(last_of[sid], units, nl))
    return Document(out, nl, o_doc.bom).render()


class _Sides:
    """The three versions' lines by section id, and how one section of them merges."""

    def __init__(self, base: Document, ours: Document, theirs: Document, bound: int | None) -> None:
        self.base, self.ours, self.theirs = _by_id(base), _by_id(ours), _by_id(theirs)
        self.theirs_newer = _theirs_newer(*(doc.find(SECTIONS["state"][1]) for doc in (base, ours, theirs)))
        self.bound = bound
        self.memo: dict[str, str] = {}  # ``items.key`` by line, shared by the three versions

    def merged(self, sid: tuple[int, str], mine: list[str]) -> list[_Unit]:
        """Section ``sid`` merged, with ``mine`` as ours' lines; Current State and Recent Context by their rules."""
        b_units, o_units = _units(self.base.get(sid, []), self.memo), _units(mine, self.memo)
        t_units = _units(self.theirs.get(sid, []), self.memo)
        if sid == (2, "state"):
            return _merge_state3(b_units, o_units, t_units, self.theirs_newer)
        units = _merge_units(b_units, o_units, t_units)
        return _order_recent(units, self.bound) if sid == (2, "recent") else units


def _by_id(doc: Document) -> dict[tuple[int, str], list[str]]:
    """Each section's lines by its id, a repeated section's lines after the first's."""
    found: dict[tuple[int, str], list[str]] = {}
    for section in doc.sections:
        found.setdefault(_section_id(section), []).extend(section.lines)
    return found


def _firsts(doc: Document, done: set[tuple[int, str]]) -> Iterator[tuple[tuple[int, str], Section]]:
    """The document's sections whose id is not in ``done`` yet, with their id, each id once
    (a repeated section's lines are merged into the first); each id goes into ``done``."""
    for section in doc.sections:
        sid = _section_id(section)
        if sid not in done:
            done.add(sid)
            yield sid, section


def _blank(units: list[_Unit]) -> bool:
    return all(u.key == _BLANK for u in units)


def _set_off(previous: Section, nl: str) -> None:
    """End the section another will follow: its heading ended, and a blank line after what it holds."""
    if previous.heading is not None and not previous.heading.endswith("\n"):
        previous.heading += nl
    if (previous.lines and previous.lines[-1].strip()) or (not previous.lines and previous.heading):
        previous.lines.append(nl)


def _new_section(head: Section, units: list[_Unit], nl: str) -> Section:
    """A section only theirs has, with ``head``'s heading, a blank line after it."""
    heading = bare(head.heading) + nl if head.heading is not None else None
    body = _lines(units, nl)
    if not body or body[0].strip():
        body.insert(0, nl)
    return Section(heading, head.level, head.title, body)


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


def _theirs_newer(base: Section | None, ours: Section | None, theirs: Section | None) -> bool:
    """Whether Keeper's Current State block comes from theirs: the newer ``Last updated``; in the same
    minute, the side that changed it since ``base``, else the larger text, so two machines that
    saved in one minute both end with the same block."""
    if theirs is None or ours is None:
        return theirs is not None
    mine, other = _last_updated(ours), _last_updated(theirs)
    if mine != other:
        return other > mine
    blocks = [_block_text(section) for section in (base, ours, theirs)]
    if blocks[1] == blocks[0] or blocks[2] == blocks[0]:
        return blocks[1] == blocks[0]
    return blocks[2] > blocks[1]


def _block_text(section: Section | None) -> str:
    """The text of Keeper's Current State block in ``section`` ("" without one)."""
    units = _units(section.lines) if section is not None else []
    start, end = _state_block(units)
    return "".join(bare(line) for unit in units[start:end] for line in unit.lines)


def _last_updated(section: Section) -> str:
    """The section's ``Last updated: YYYY-MM-DD HH:MM`` value ("" without one); such values sort by time.
    One past this machine's clock plus ``SKEW`` (a document from elsewhere dated 9999, or a clock
    that runs ahead) counts as none: it cannot outrank every later save."""
    import time

    found = next(
        (text[len(LAST_UPDATED) :].strip() for _, text in section.bullets() if text.startswith(LAST_UPDATED)), ""
    )
    return found if found <= time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() + SKEW)) else ""


def _merge_lines(
    doc: Document,
    target: Section,
    theirs: Section,
    report: FileMergeReport,
    skip: frozenset[str] = frozenset(),
    removed: Collection[str] = (),
) -> None:
    """Add what ``theirs`` holds and ``target`` lacks: items (duplicates by ``items.key``) as written,
    dates included, after the last item; any other missing line after the section's text."""
    known = {key(_item_at(target, index)) for index, _ in target.bullets()}
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
        norm = key(item_text(chunk)) if is_item else ""
        if norm:
            if norm not in known and norm not in removed:
                known.add(norm)
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
    owned: list[RecentLine],
    their_owned: list[RecentLine],
    report: FileMergeReport,
) -> list[RecentLine]:
    """Add missing ``- YYYY-MM-DD: …`` lines newest first; Keeper's stay Keeper's, so saves roll them out."""
    known = {key(_item_at(target, index)) for index, _ in target.bullets()}
    theirs_by_line = {r.line: r for r in their_owned}
    owned = list(owned)
    for index, _ in theirs.bullets():
        chunk = [bare(line) for line in theirs.lines[index : theirs.item_span(index)]]
        norm = key(item_text(chunk))
        if not norm or norm in known:  # exact: two sessions' short summaries can be near-duplicates
            continue
        known.add(norm)
        day = chunk[0][2:12]
        later = [i for i, text in target.bullets() if text[:10] < day]
        doc.insert(target, later[0] if later else after_last_bullet(target), chunk)
        report.count(target.title, 1)
        if len(chunk) == 1 and chunk[0] in theirs_by_line:
            at = next((i for i, r in enumerate(owned) if r.line[2:12] < day), len(owned))
            owned.insert(at, theirs_by_line[chunk[0]])
    _merge_lines(doc, target, theirs, report)  # a person's text between the lines
    return owned


def merge_file(
    text: str,
    owned: OwnedLines,
    other: str,
    other_owned: OwnedLines,
    removed: Collection[str] = (),
) -> tuple[str, OwnedLines, FileMergeReport]:
    """Merge another memory.md (an imported one) into ``text``, losing nothing of either.

    Every line here stays. Each section of ``other`` goes into the same section here, or is
    appended when this file lacks it; what this file lacks is added as written, dates included,
    and duplicates are not (the rules saves follow). Current State comes from whichever file was
    updated last; Recent Context lines go in by date, and the ones Keeper wrote stay Keeper's in
    the returned ``OwnedLines``, so later saves still replace and roll them out. Merging the same
    file twice changes nothing the second time. An item whose ``items.key`` is in ``removed`` (the
    project's record of what was retired or resolved) is not brought back.
    """
    doc = Document.parse(text)
    theirs = Document.parse(other)
    report = FileMergeReport()
    state, recent = owned.state, owned.recent
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
            state = _merge_state(doc, target, section, state, other_owned.state, report)
        elif name == "recent":
            recent = _merge_recent(doc, target, section, recent, other_owned.recent, report)
        else:
            _merge_lines(doc, target, section, report, removed=removed)
    return doc.render(), OwnedLines(state, recent), report


# Sections whose lines Keeper replaces or rolls on its own: an item leaving them is no removal.
_ROLLING = frozenset(SECTIONS["state"][1] + SECTIONS["recent"][1])


def item_keys(text: str | None, lasting: bool = False) -> set[str]:
    """The ``items.key`` of every item (a bullet and its continuation lines) of a memory.md; with
    ``lasting``, only those outside Current State and Recent Context, the items whose going is a
    removal someone meant (a save replaces the state, and old sessions roll out of the context)."""
    memo: dict[str, str] = {}
    found: set[str] = set()
    for section in Document.parse(text or "").sections:
        if lasting and section.level == 2 and section.key() in _ROLLING:
            continue
        found.update(u.key[2:] for u in _units(section.lines, memo) if u.key.startswith("i:"))
    return found


def drop_items(text: str, gone: Collection[str]) -> str:
    """``text`` without the items whose ``items.key`` is in ``gone`` (removals recorded elsewhere);
    the same text when none is there."""
    if not gone:
        return text
    doc = Document.parse(text)
    memo: dict[str, str] = {}
    changed = False
    for section in doc.sections:
        units = _units(section.lines, memo)
        kept = [u for u in units if not (u.key.startswith("i:") and u.key[2:] in gone)]
        if len(kept) != len(units):
            section.lines[:] = [line for unit in kept for line in unit.lines]
            changed = True
    return doc.render() if changed else text
