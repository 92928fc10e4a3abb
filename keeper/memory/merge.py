"""Three copies of one memory.md become one, by Keeper's rules: ``merge3(base, ours, theirs)``.

A small section-wise merge (the issue "The same memory, exactly" brings the full one): within each
section, items and lines are unioned without duplicates, and what the common ancestor held that
either side dropped stays gone (a retirement or a resolved issue never comes back); the Current
State of the side updated last wins; Recent Context is ordered by date; a person's lines from both
sides are kept. Never a conflict marker, and total: any three texts give a document.
"""

from __future__ import annotations

from keeper.markdown import Document, Section, bare, bullet, content_end
from keeper.memory.document import LAST_UPDATED, SECTIONS, normalize

_STATE_KEYS = SECTIONS["state"][1]
_RECENT_KEYS = SECTIONS["recent"][1]


def _chunks(section: Section) -> list[tuple[str, list[str]]]:
    """The section's body as ``(key, lines)``: an item with its continuation lines, or one other line.

    The key is the item's normalised text (``"- "`` + line for prose), ``""`` for a blank line.
    """
    found: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(section.lines):
        line = section.lines[index]
        if bullet(line) is not None:
            end = section.item_span(index)
            lines = section.lines[index:end]
            text = " ".join(bare(x).strip() for x in lines)[2:]
            found.append(("i:" + (normalize(text) or text), lines))
            index = end
            continue
        found.append(("p:" + bare(line).strip() if line.strip() else "", [line]))
        index += 1
    return found


def _key(section: Section) -> tuple[int, str]:
    return section.level, section.key() if section.level > 1 else ""


def _last_updated(section: Section | None) -> str:
    if section is None:
        return ""
    return next((t[len(LAST_UPDATED) :].strip() for _, t in section.bullets() if t.startswith(LAST_UPDATED)), "")


def _date(lines: list[str]) -> str:
    text = bullet(lines[0]) or ""
    return text[:10] if len(text) >= 10 and text[4:5] == "-" and text[7:8] == "-" else ""


def _merge_body(base: Section | None, ours: Section, theirs: Section | None, by_date: bool) -> list[str]:
    mine = _chunks(ours)
    other = _chunks(theirs) if theirs is not None else []
    had = {k for k, _ in _chunks(base)} if base is not None else set()
    my_keys = {k for k, _ in mine}
    their_keys = {k for k, _ in other}
    gone = {k for k in had if k and (k not in my_keys or k not in their_keys)}
    kept = [(k, lines) for k, lines in mine if not k or k not in gone]
    seen = {k for k, _ in kept}
    new_items: list[list[str]] = []
    new_prose: list[list[str]] = []
    for k, lines in other:
        if k and k not in seen and k not in gone:
            seen.add(k)
            (new_items if k.startswith("i:") else new_prose).append(list(lines))
    items_at = [i for i, (k, _) in enumerate(kept) if k.startswith("i:")]
    end = items_at[-1] + 1 if items_at else len(kept) - _trailing_blanks(kept)
    body = [lines for _, lines in kept]
    body[end:end] = new_items
    tail = len(body) - _trailing_blanks([("x" if "".join(b).strip() else "", b) for b in body])
    body[tail:tail] = new_prose
    if by_date:
        slots = [i for i, lines in enumerate(body) if bullet(lines[0]) is not None]
        ordered = sorted((body[i] for i in slots), key=_date, reverse=True)
        for i, lines in zip(slots, ordered):
            body[i] = lines
    out = [line for lines in body for line in lines]
    return [line if line.endswith("\n") else line + "\n" for line in out[:-1]] + out[-1:]


def _trailing_blanks(chunks: list[tuple[str, list[str]]]) -> int:
    count = 0
    for k, _ in reversed(chunks):
        if k:
            break
        count += 1
    return count


def merge3(base: str | None, ours: str, theirs: str) -> str:
    """One memory.md from a common ancestor (None: none known) and two descendants."""
    if ours == theirs:
        return ours
    if base is not None and ours == base:
        return theirs
    if base is not None and theirs == base:
        return ours
    b_doc = Document.parse(base) if base is not None else None
    o_doc, t_doc = Document.parse(ours), Document.parse(theirs)
    b_by = {_key(s): s for s in (b_doc.sections if b_doc else [])}
    t_by = {_key(s): s for s in t_doc.sections}
    o_keys = {_key(s) for s in o_doc.sections}
    sections: list[Section] = []
    for section in o_doc.sections:
        key = _key(section)
        other = t_by.get(key)
        if other is None and key in b_by and key[0]:
            continue  # the other side removed the whole section
        if section.level == 2 and section.key() in _STATE_KEYS and other is not None:
            if _last_updated(other) > _last_updated(section):
                section = other
            sections.append(section)
            continue
        by_date = section.level == 2 and section.key() in _RECENT_KEYS
        sections.append(
            Section(section.heading, section.level, section.title, _merge_body(b_by.get(key), section, other, by_date))
        )
    for section in t_doc.sections:
        key = _key(section)
        if key not in o_keys and not (key in b_by and key[0]):
            last = sections[-1] if sections else None
            if last is not None and last.lines and last.lines[content_end(last) - 1 :] and last.lines[-1].strip():
                last.lines.append(o_doc.newline)
            if last is not None and last.lines and not last.lines[-1].endswith("\n"):
                last.lines[-1] += o_doc.newline
            sections.append(section)
    return Document(sections, o_doc.newline, o_doc.bom).render()
