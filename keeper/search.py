"""Keyword recall over memory.md and the session files, best first, tolerant of typos.

Each heading-delimited section (a ``Chunk``) is one unit, its terms made by ``keeper.tokens``.
Ranking is BM25; a query word found nowhere is corrected against the corpus vocabulary with
rapidfuzz, and an exact phrase or a recent date adds a light boost.
"""

from __future__ import annotations

import math
import os
from datetime import date

from keeper import paths, sessions
from keeper.chunks import Chunk, chunks_of
from keeper.fsutil import read_text
from keeper.tokens import fold, tokenize, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

K1, B = 1.2, 0.75
SIBLING_WEIGHT = 0.5  # how much the other matching sections of a file add to a section's score


def corpus(project: paths.Project, scope: str = "all") -> list[Chunk]:
    """Every section recall can find, for the scan without an index."""
    from keeper import index

    files: list[tuple[str, str | None]] = [(project.memory, None), *((p, None) for p in sessions.list_files(project))]
    for name, path in index.outside_sources(project).items():
        files.append((path, index.NATIVE_TITLE + name[len(index.NATIVE) :] if name.startswith(index.NATIVE) else None))
    chunks: list[Chunk] = []
    for path, title in files:
        in_scope = scope == "all" or (scope == "global") == (path == paths.global_memory_file())
        text = read_text(path) if in_scope else None
        if text:
            chunks.extend(chunks_of(path, text, title))
    return chunks


class Result:
    """A ranked match, as ``keeper recall`` prints it and ``--json`` returns it."""

    __slots__ = ("_snippet", "chunk", "coverage", "hits", "id", "matched", "scope", "score")

    def __init__(self, chunk: Chunk, score: float, matched: set[str], root: str, coverage: float, hits: int) -> None:
        self.chunk, self.score, self.matched = chunk, score, matched
        self.coverage, self.hits = coverage, hits  # share of the query's idf matched; query terms matched
        try:
            rel = os.path.relpath(chunk.path, root).replace(os.sep, "/")
        except ValueError:  # another drive (Windows): _labelled names it
            rel = chunk.path
        self.id = f"{rel}:{chunk.line}"
        self.scope = "project"  # or "global", "native" (Claude Code's auto memory): see _labelled
        self._snippet: str | None = None

    @property
    def snippet(self) -> str:
        """The matching lines (made on demand: only the results shown need one)."""
        if self._snippet is None:
            self._snippet = _snippet(self.chunk, self.matched)
        return self._snippet

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": os.path.abspath(self.chunk.path),
            "heading": self.chunk.heading,
            "date": self.chunk.date,
            "line": self.chunk.line,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "scope": self.scope,
        }


def day_number(iso: object) -> int | None:
    """A day count for ``YYYY-MM-DD`` (only differences matter); None for anything else."""
    if not isinstance(iso, str) or len(iso) < 10:
        return None
    try:
        return date.fromisoformat(iso[:10]).toordinal()
    except ValueError:
        return None


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _stand_ins(
    query: list[tuple[str, str]], known: set[str], surface: Callable[[str], dict[str, str]] | None
) -> dict[str, list[tuple[str, float]]]:
    """Query terms with the words that stand for them: themselves when indexed, else close words.

    A term found nowhere is corrected by comparing the word as typed with the corpus's words as
    written (``surface(word)`` maps nearby written words to their terms; None: no correction):
    typos are closest before stemming.
    """
    out: dict[str, list[tuple[str, float]]] = {}
    for raw, term in query:
        if term in out:
            continue
        if term in known:
            out[term] = [(term, 1.0)]
            continue
        out[term] = []
        if surface is None or len(raw) < 4:
            continue
        from rapidfuzz import fuzz, process

        written = surface(raw)
        cutoff = 75 if len(raw) >= 7 else 78 if len(raw) >= 5 else 80
        best: dict[str, float] = {}
        for match, score, _ in process.extract(raw, list(written), scorer=fuzz.ratio, limit=5, score_cutoff=cutoff):
            stand_in = written[match]
            best[stand_in] = max(best.get(stand_in, 0.0), score / 100.0 * 0.9)
        out[term] = sorted(best.items(), key=lambda kv: -kv[1])[:3]
    return out


def _snippet(chunk: Chunk, matched: set[str], limit: int = 3) -> str:
    lines = [ln.strip() for ln in chunk.text.splitlines() if ln.strip()]
    hits = [ln for ln in lines if matched & set(tokenize(ln))]
    chosen = (hits or lines)[:limit]
    return "\n".join(ln if len(ln) <= 240 else ln[:237] + "…" for ln in chosen)


def rank(
    chunks: list[Chunk],
    terms: list[str],
    stand_ins: dict[str, list[tuple[str, float]]],
    stats: tuple[dict[str, int], int, float],
    query: str,
    root: str,
    today: int,
) -> list[Result]:
    """BM25 over the candidates, with typo stand-ins weighted down, then phrase and recency boosts.

    ``coverage`` is the share of the query's information (idf) a section matches: automatic
    recall injects only sections that cover enough of the prompt.
    """
    df, n, avg = stats

    def strongest(term: str) -> float:
        return max((_idf(n, df[w]) for w, _ in stand_ins.get(term, []) if w in df), default=0.0)

    total = sum(strongest(t) for t in terms) or 1.0
    phrase = " ".join(fold(query).split())
    results = []
    wanted = {w for options in stand_ins.values() for w, _ in options}
    for chunk in chunks:
        counts = {w: chunk.terms.count(w) for w in wanted}  # C-speed counts of the few words that matter
        score = covered = 0.0
        hits = 0
        matched: set[str] = set()
        for term in terms:
            best = best_idf = 0.0
            for word, weight in stand_ins.get(term, []):
                tf = counts.get(word, 0)
                if not tf or word not in df:
                    continue
                idf = _idf(n, df[word])
                value = weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(chunk.terms) / avg))
                if value > best:
                    best, best_idf = value, idf
                matched.add(word)
            score += best
            covered += best_idf
            hits += best > 0
        if score <= 0:
            continue
        if len(terms) > 1 and phrase in " ".join(fold(chunk.text).split()):
            score *= 1.25
        day = day_number(chunk.date)
        if day is not None:
            score *= 1 + 0.1 * math.exp(-max(today - day, 0) / 60)
        results.append(Result(chunk, score, matched, root, covered / total, hits))
    by_file: dict[str, float] = {}
    for result in results:
        by_file[result.chunk.path] = by_file.get(result.chunk.path, 0.0) + result.score
    for result in results:  # sections of one session back each other up
        result.score += SIBLING_WEIGHT * (by_file[result.chunk.path] - result.score)
    results.sort(key=lambda r: (-r.score, r.chunk.path, r.chunk.line))
    return results


def search(
    project: paths.Project,
    query: str,
    limit: int = 5,
    today: date | None = None,
    thorough: bool = True,
    correct: bool = True,
    min_terms: int = 1,
    scope: str = "all",
) -> list[Result]:
    """Rank the project's memory sections for ``query``; an empty list when nothing matches.

    ``scope``: ``project`` (memory.md, the session files, Claude Code's auto memory of this
    project), ``global`` (the global memory.md) or ``all``.

    ``min_terms`` 2 retrieves only sections holding at least two query words (what automatic
    recall would inject anyway), which is much cheaper for FTS5 on a large index.

    Uses the SQLite index (brought up to date first; ``thorough`` stats every file), or scans the
    files where this Python has no FTS5. ``correct`` turns on typo correction (rapidfuzz).
    """
    query_words = list(dict.fromkeys(words(query)))
    terms = list(dict.fromkeys(term for _, term in query_words))
    if not terms:
        return []
    today_number = (today or date.today()).toordinal()
    import sqlite3

    from keeper import index

    try:
        con = index.open_index(project)
    except sqlite3.Error:
        con = None
    if con is None:
        return _scan(project, query_words, terms, query, limit, today_number, correct, scope)
    try:
        index.refresh(con, project, thorough=thorough)
        df, n, avg = index.document_frequencies(con, terms)

        def near(raw: str) -> dict[str, str]:
            return index.surface_words(con, raw)

        stand_ins = _stand_ins(query_words, set(df), near if correct else None)
        found = sorted({w for options in stand_ins.values() for w, _ in options})
        if not found:
            return []
        df, n, avg = index.document_frequencies(con, found)
        # Retrieve by the rarest words: FTS5 ranks every match, and common words add little.
        common = n if thorough else max(n * 0.2, 20)
        rare = sorted((w for w in found if w in df and (df[w] <= common or len(found) == 1)), key=df.__getitem__)
        depth = index.CANDIDATES if thorough else index.CANDIDATES // 4
        chunks = index.candidates(con, project, rare[: 8 if min_terms < 2 else 6], depth, min_terms, scope)
    except sqlite3.DatabaseError as exc:  # replaced or damaged under us (a clear, a copy): it is only derived
        from keeper import log

        log.write("recall", "WARN", f"search index unusable ({exc}); searched the files directly")
        return _scan(project, query_words, terms, query, limit, today_number, correct, scope)
    finally:
        con.close()
    return _labelled(project, rank(chunks, terms, stand_ins, (df, n, avg), query, project.dir, today_number)[:limit])


def _labelled(project: paths.Project, results: list[Result]) -> list[Result]:
    """Give results from outside the project's folder their scope and an id ``keeper expand`` takes."""
    from keeper import index

    native = index.native_memory_dir(project)
    for result in results:
        path = result.chunk.path
        if path == paths.global_memory_file():
            result.scope, result.id = "global", f"{index.GLOBAL}:{result.chunk.line}"
        elif os.path.dirname(path) == native:
            result.scope, result.id = "native", f"{index.NATIVE}{os.path.basename(path)}:{result.chunk.line}"
    return results


def _scan(
    project: paths.Project,
    query_words: list[tuple[str, str]],
    terms: list[str],
    query: str,
    limit: int,
    today: int,
    correct: bool,
    scope: str,
) -> list[Result]:
    """Search without an index: read and tokenise every file (Pythons built without FTS5)."""
    chunks = corpus(project, scope)
    df: dict[str, int] = {}
    written: dict[str, str] = {}
    for chunk in chunks:
        for term in set(chunk.terms):
            df[term] = df.get(term, 0) + 1
        written.update(words(chunk.heading + "\n" + chunk.text))
    stand_ins = _stand_ins(query_words, set(df), (lambda _raw: written) if correct else None)
    n = len(chunks)
    avg = sum(len(c.terms) for c in chunks) / n if n else 1.0
    return _labelled(project, rank(chunks, terms, stand_ins, (df, n, avg), query, project.dir, today)[:limit])


def section_for(project: paths.Project, ident: str) -> tuple[str, str, str]:
    """The whole section behind a result id (``sessions/<file>.md:<line>``): path, heading, text.

    Only files inside this project's memory folder can be named. Raises KeeperError otherwise.
    """
    from keeper import index
    from keeper.errors import KeeperError

    name, _, line_text = ident.rpartition(":")
    parts = name.split("/")
    valid = name in (paths.MEMORY_FILE, index.GLOBAL) or (
        len(parts) == 2
        and parts[0] in (paths.SESSIONS_DIR, index.NATIVE.rstrip("/"))
        and parts[1].endswith(".md")
        and ".." not in parts[1]
        and "\\" not in parts[1]
    )
    if not valid or not line_text.isdigit():
        raise KeeperError(
            f"{ident!r} is not a result id; ids look like sessions/2026-11-21_1430.md:12 (see keeper recall)"
        )
    path = index.source_path(project, name)
    text = read_text(path)
    if text is None:
        raise KeeperError(f"{path} no longer exists; run keeper recall again for fresh ids")
    wanted = int(line_text)
    chunks = chunks_of(path, text)
    chosen = next((c for c in chunks if c.line == wanted), None) or next(
        (c for c in reversed(chunks) if c.line <= wanted), None
    )
    if chosen is None:
        raise KeeperError(f"no section at line {wanted} of {path}; run keeper recall again for fresh ids")
    return path, chosen.heading, chosen.text
