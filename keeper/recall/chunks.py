"""The unit of recall: one heading-delimited section of a memory file, as a small record.

Search ranks chunks and the index stores them; both take them from here, so neither needs the
other to know what a section is, or which words a section is found by.
"""

from __future__ import annotations

import os

from keeper.markdown import _MAY_OPEN, BOM, fence, heading
from keeper.recall.tokens import Counting, date_terms, shared_counting
from keeper.store import sessions


def section_terms(
    heading: str, text: str, day: str | None, counting: Counting | None = None
) -> tuple[dict[str, int], int]:
    """The terms a section is found by, counted (``tokens.Counting``: the index's build passes its
    own): its heading and text, and its file's date (``sessions/2026-11-07_1430.md``) as the words
    people ask with, unless the text holds it; its relative dates ("yesterday") are read against that date."""
    if counting is None:  # not `or`: a Counting that has met no run yet is an empty dict
        counting = shared_counting()
    counts, length = counting.count(heading + "\n" + text, day)
    if day and day not in heading and day not in text:
        for term in date_terms(day):
            counts[term] = counts.get(term, 0) + 1
            counting.surface[term] = term
            length += 1
    return counts, length


class Chunk:
    """One searchable section of a memory file: where it is, its text, and how often each of its
    terms occurs (``counts``) out of ``length``.

    From the index it comes without its ``text``, which search reads from the file for the few
    results it shows, and with the counts of only the terms a query asked for.
    """

    __slots__ = ("counts", "date", "heading", "length", "line", "path", "text")

    def __init__(
        self,
        path: str,
        heading: str,
        line: int,
        text: str | None,
        day: str | None,
        counts: dict[str, int] | None = None,
        length: int = 0,
    ) -> None:
        self.path, self.heading, self.line, self.text, self.date = path, heading, line, text, day
        if counts is None:
            counts, length = section_terms(heading, text or "", day)
        self.counts, self.length = counts, length


_LABELLED = tuple(label + ":" for label in sessions.BOOKKEEPING)  # a bookkeeping line starts so


def _content(lines: list[str], last: bool) -> str:
    """A section's text (its lines, without their endings) without a session record's bookkeeping
    lines (``- Tool uses: 16 (2 saves)``); ``last``: whether its last line is the file's last.

    Those say nothing about the work, yet words like "tool" or "session" would match them.
    """
    text = "\n".join(lines)
    if text[:2] != "- " and "\n- " not in text:  # the common section: no list item could be one
        return text.strip()
    kept = [line for line in lines if not line.startswith(_LABELLED)]
    if last and lines[-1] in sessions.BOOKKEEPING:  # the file's last line, with no ending and no ":" (kept above)
        kept.pop()
    return "\n".join(kept).strip()


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """``(line index, level, title)`` of each ``#``-``###`` heading outside fenced code (as
    ``markdown.Document.parse`` with ``split_level=3`` splits), looking only at the lines that
    can open one or a fence."""
    found: list[tuple[int, int, str]] = []
    open_fence: str | None = None
    for at in [at for at, line in enumerate(lines) if line[:1] in _MAY_OPEN]:
        line = lines[at]
        first = line.lstrip(" ")[:1]
        if first == "#":  # a heading, or nothing: no fence starts so
            parsed = heading(line) if open_fence is None else None
            if parsed and parsed[0] <= 3:
                found.append((at, *parsed))
        elif first in ("`", "~"):  # a fence, or nothing: no heading starts so
            marker = fence(line) or ""
            if marker and open_fence is None:
                open_fence = marker[0] * 3
            elif marker and open_fence and marker.startswith(open_fence):
                open_fence = None
    return found


def sections_of(path: str, text: str, title: str | None = None) -> list[tuple[str, int, str]]:
    """``(heading, first line, text)`` of each ``#``-``###`` section; the title (the file's ``#``
    heading unless given) becomes part of each heading. The text before the first heading is a
    section of the title's when it holds anything."""
    lines = (text[1:] if text.startswith(BOM) else text).split("\n")  # a last "" (a final newline) is stripped
    found = _headings(lines)
    title = title or next((t for _, level, t in found if level == 1), os.path.basename(path))
    out: list[tuple[str, int, str]] = []
    bounds = [(-1, 0, ""), *found, (len(lines), 0, "")]
    for (at, level, name), (end, _, _) in zip(bounds, bounds[1:]):
        body = _content(lines[at + 1 : end], end == len(lines))
        if not body and level != 1:
            continue
        out.append((title if level <= 1 else f"{title} > {name}", at + 1 if at >= 0 else 1, body or name))
    return out


def chunks_of(path: str, text: str, title: str | None = None) -> list[Chunk]:
    """The file's sections as chunks (see ``sections_of``)."""
    day = sessions.date_of(path)
    return [Chunk(path, heading, line, body, day) for heading, line, body in sections_of(path, text, title)]
