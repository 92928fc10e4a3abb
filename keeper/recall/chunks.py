"""The unit of recall: one heading-delimited section of a memory file, as a small record.

Search ranks chunks and the index stores them; both take them from here, so neither needs the
other to know what a section is, or which words a section is found by.
"""

from __future__ import annotations

import os

from keeper.markdown import Document
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


def _content(lines: list[str]) -> str:
    """A section's text without a session record's bookkeeping lines (``- Tool uses: 16 (2 saves)``).

    Those say nothing about the work, yet words like "tool" or "session" would match them.
    """
    bookkeeping = sessions.BOOKKEEPING  # each "- <label>": a line that does not start so is kept untouched
    return "".join(line for line in lines if line[:2] != "- " or line.split(":", 1)[0] not in bookkeeping).strip()


def sections_of(path: str, text: str, title: str | None = None) -> list[tuple[str, int, str]]:
    """``(heading, first line, text)`` of each ``#``-``###`` section; the title (the file's ``#``
    heading unless given) becomes part of each heading."""
    doc = Document.parse(text, split_level=3)
    title = title or next((s.title for s in doc.sections if s.level == 1), os.path.basename(path))
    out: list[tuple[str, int, str]] = []
    line = 1
    for section in doc.sections:
        start = line
        line += len(section.lines) + (1 if section.heading is not None else 0)
        body = _content(section.lines)
        if not body and section.level != 1:
            continue
        out.append((title if section.level <= 1 else f"{title} > {section.title}", start, body or section.title))
    return out


def chunks_of(path: str, text: str, title: str | None = None) -> list[Chunk]:
    """The file's sections as chunks (see ``sections_of``)."""
    day = sessions.date_of(path)
    return [Chunk(path, heading, line, body, day) for heading, line, body in sections_of(path, text, title)]
