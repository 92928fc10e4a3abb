"""The unit of recall: one heading-delimited section of a memory file, as a small record.

Search ranks chunks and the index stores them; both take them from here, so neither needs the
other to know what a section is.
"""

from __future__ import annotations

import os

from keeper import sessions
from keeper.markdown import Document
from keeper.tokens import tokenize


class Chunk:
    """One searchable section of a memory file (``terms`` come precomputed from the index)."""

    __slots__ = ("date", "heading", "line", "path", "terms", "text")

    def __init__(
        self, path: str, heading: str, line: int, text: str, day: str | None, terms: list[str] | None = None
    ) -> None:
        self.path, self.heading, self.line, self.text, self.date = path, heading, line, text, day
        self.terms = terms if terms is not None else tokenize(heading + "\n" + text)


def _content(lines: list[str]) -> str:
    """A section's text without a session record's bookkeeping lines (``- Tool uses: 16 (2 saves)``).

    Those say nothing about the work, yet words like "tool" or "session" would match them.
    """
    return "".join(line for line in lines if line.split(":", 1)[0] not in sessions.BOOKKEEPING).strip()


def chunks_of(path: str, text: str, title: str | None = None) -> list[Chunk]:
    """Split a file at ``#``-``###`` headings; the title (the file's ``#`` heading unless given)
    becomes part of each heading."""
    doc = Document.parse(text, split_level=3)
    title = title or next((s.title for s in doc.sections if s.level == 1), os.path.basename(path))
    day = sessions.date_of(path)
    out: list[Chunk] = []
    line = 1
    for section in doc.sections:
        start = line
        line += len(section.lines) + (1 if section.heading is not None else 0)
        body = _content(section.lines)
        if not body and section.level != 1:
            continue
        heading = title if section.level <= 1 else f"{title} > {section.title}"
        out.append(Chunk(path, heading, start, body or section.title, day))
    return out
