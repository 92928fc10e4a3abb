"""The unit of recall: one heading-delimited section of a memory file, as a small record.

Search ranks chunks and the index stores them; both take them from here, so neither needs the
other to know what a section is, or which words a section is found by. The index and its snapshot
(``keeper.recall.snapshot``) take from here too what makes them find the same sections: the cheap
retrieval over either one's posting lists (``retrieve``), the sections' rows as chunks
(``chunks_of_rows``) and the bounds of the index's quick check, which the snapshot checks as the
index would. (Here, not in the snapshot's module: a search through SQLite in a large store, which
keeps no snapshot, does not load that one.)
"""

from __future__ import annotations

import os

from keeper.markdown import _MAY_OPEN, BOM, fence, heading
from keeper.recall import sources
from keeper.recall.tokens import Counting, date_terms, shared_counting
from keeper.store import paths, sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    Row = tuple[str, str, int, int, str, str]  # a section: file name, heading, line, length, terms, repeated counts
    Level = tuple[str, list[str]]  # a full-text query: "all", "pairs" or "any" of its terms


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


CANDIDATES = 100  # sections ranked for an explicit recall; a quarter of it for automatic recall (search)
RARE_TERMS, COMMON_TERMS = 8, 6  # terms retrieved by their posting lists, and by the levels of ``levels``
NEWEST_ALWAYS_CHECKED = 20  # session files the index's quick check always stats (the newest by name) ...
WINDOW = 32  # ... and older ones from a random place (automatic recall on each prompt)
SNAPSHOT_UP_TO = 800  # sections: a larger index keeps no snapshot (measured: keeper.recall.snapshot)


def levels(common: list[str], weight: dict[str, float]) -> list[tuple[Level, float]]:
    """The full-text queries for the common terms, strictest first (all of them, any two, any one),
    each with what a section it finds scores: the idf of the rarest terms it must hold."""
    out: list[tuple[Level, float]] = []
    if len(common) >= 2:
        out.append((("all", common), sum(weight[t] for t in common)))
    if len(common) >= 3:
        out.append((("pairs", common), weight[common[-1]] + weight[common[-2]]))
    if common:
        out.append((("any", common), weight[common[-1]]))
    return out


def retrieve(
    match: Callable[[Level, int], Iterable[int]],
    sections: int,
    ranked: list[str],
    df: dict[str, int],
    weight: dict[str, float],
    depth: int,
) -> dict[int, float]:
    """Each section the cheap retrieval finds, with the idf of the terms it was found by: every
    section holding a rare term, then, while fewer than ``depth`` were found, those holding all the
    common terms, any two of them, any one, newest first. ``match(level, limit)``: the sections a
    level finds, the ``limit`` newest (0: all) of them."""
    cap = max(depth, sections // 100)
    rare = [t for t in ranked if df[t] <= cap][:RARE_TERMS]
    common = [t for t in ranked if df[t] > cap][:COMMON_TERMS]
    found: dict[int, float] = {}
    for term in rare:
        for rowid in match(("any", [term]), 0):
            found[rowid] = found.get(rowid, 0.0) + weight[term]
    for level, score in levels(common, weight):
        if len(found) >= depth:
            break
        for rowid in match(level, depth):
            found[rowid] = found.get(rowid, 0.0) + score
    return found


def chunks_of_rows(project: paths.Project, rows: Iterable[Row], ranked: list[str]) -> list[Chunk]:
    """The sections' rows as chunks, with how often each of the ``ranked`` terms stands in each."""
    needles = [(w, f" {w} ", f" {w}:") for w in ranked]
    out = []
    for name, title, line, length, terms, counts in rows:
        held = f" {terms} "
        repeated = f" {counts} " if counts else ""
        tf: dict[str, int] = {}
        for word, alone, counted in needles:
            if alone in held:
                at = repeated.find(counted) if repeated else -1
                tf[word] = int(repeated[at + len(counted) : repeated.index(" ", at + 1)]) if at >= 0 else 1
        path = sources.path_of(project, name)
        if path is None:  # a name no source has: the index was tampered with; never follow it
            continue
        day = None if sources.scope_of(name) != sources.PROJECT else sessions.date_of(name)
        out.append(Chunk(path, title, line, None, day, tf, length))
    return out
