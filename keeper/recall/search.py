"""Keyword recall over memory.md and the session files, best first, tolerant of typos.

Each heading-delimited section (a ``Chunk``) is one unit, its terms made by ``keeper.recall.tokens``.
A question is parsed once into a ``Query``. The sections come from a corpus: the SQLite index
(``keeper.recall.index``), which hands over the few sections worth ranking, or, where this Python
has no FTS5 or the index cannot be used, every section read from the files. Both go through one
pipeline: ranking is BM25, with the other matching sections of a file backing a section up and a
recent date adding a little. A query word found nowhere is corrected against the corpus's words
with rapidfuzz, unless it is an ordinary English word the memory simply lacks. The text of the
best sections is read from their files, for an exact phrase's light boost and for the snippets shown.
"""

from __future__ import annotations

import math
import os
import time

from keeper.recall import dates, sources
from keeper.recall.chunks import CANDIDATES, Chunk, chunks_of, sections_of
from keeper.recall.stemmer import IRREGULAR
from keeper.recall.tokens import date_slots, fold, plain_words, term_of, words
from keeper.store import paths, sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable
    from datetime import date
    from sqlite3 import Connection
    from typing import Protocol

    class Corpus(Protocol):
        """Where the sections come from: the index, or the files read one by one."""

        def frequencies(self, terms: Iterable[str]) -> tuple[dict[str, int], int, float]: ...
        def surface(self, raw: str) -> dict[str, str]: ...
        def candidates(self, ranked: list[str], df: dict[str, int], weights: dict[str, float]) -> list[Chunk]: ...


K1, B = 1.2, 0.75
SIBLING_WEIGHT = 0.5  # how much the other matching sections of a file add to a section's score
PHRASE_BOOST = 1.25  # a section holding every word pair of the query side by side
PROXIMITY_BOOST = 1.25  # a section holding every two of the query's words close together
NEAR_WORDS = 8  # "close together": at most this many words apart
RECENCY_BOOST = 0.1  # a section dated today scores this much more, fading ...
RECENCY_DAYS = 60  # ... by e every this many days
SCAN_AT_PROMPT_UP_TO = 500  # session files automatic recall reads one by one when there is no index
RERANK = 10  # leading sections read from their files for that
QUICK_DEPTH = 4  # automatic recall ranks a quarter of the index's candidates
SNIPPET_LINES = 3
SNIPPET_CHARS = 240
# Typo correction: the least rapidfuzz ratio a corpus word needs to stand in for a word found
# nowhere (by the word's length; an English word has its own bound, see _stand_ins), and how
# much the stand-in weighs against the word itself.
TYPO_CUTOFFS = ((7, 75.0), (5, 78.0), (4, 80.0))  # (at least this long, cutoff); shorter: THREE_LETTER_CUTOFF
THREE_LETTER_CUTOFF = 85.0  # "jon": one letter added ("john"), never one changed ("jen")
TYPO_WEIGHT = 0.9
ENGLISH_WEIGHT = 0.45  # an English word the memory lacks: "nice" for "niece", at half weight
NAME_WEIGHT = 0.8  # another spelling of a name the memory also holds as asked (Kathryn, Katherine)
STAND_INS = 3  # corrections kept for one word


class Result:
    """A ranked match, as ``keeper recall`` prints it and ``--json`` returns it."""

    __slots__ = ("_snippet", "chunk", "coverage", "hits", "id", "matched", "scope", "score")

    def __init__(self, chunk: Chunk, score: float, matched: set[str], root: str, coverage: float, hits: int) -> None:
        self.chunk, self.score, self.matched = chunk, score, matched
        self.coverage, self.hits = coverage, hits  # share of the query's idf matched; query terms matched
        inside = root.rstrip(os.sep) + os.sep
        if chunk.path.startswith(inside):  # the common case, without relpath's normalising
            rel = chunk.path[len(inside) :].replace(os.sep, "/")
        else:
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


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def names_in(query: str) -> set[str]:
    """The query's words written as names (a capital, then lower case), folded."""
    found = set()
    for word in query.replace("'", " ").replace("\u2019", " ").split():
        word = word.strip('.,!?;:"()[]{}')
        if word[:1].isupper() and word[1:].islower() and word.isalpha():
            found.add(fold(word))
    return found


def _stand_ins(
    query: list[tuple[str, str]],
    known: set[str],
    surface: Callable[[str], dict[str, str]] | None,
    names: Collection[str] = (),
) -> dict[str, list[tuple[str, float]]]:
    """Query terms with the words that stand for them: themselves when indexed, else close words.

    A term found nowhere is corrected by comparing the word as typed with the corpus's words as
    written (``surface(word)`` maps nearby written words to their terms; None: no correction):
    typos are closest before stemming. An ordinary English word is most likely meant as typed
    and simply absent ("regards" is no "reward"): only a word one letter away stands in for it,
    at half weight ("nice" for "niece"). A word of three letters is corrected only by one letter
    more ("Jon" for "John"). A name (``names``: written with a capital, no English word) also
    finds its other spellings in the memory, found or not (Kathryn, Katherine), though never an
    English word (Sam is no "same").
    """
    out: dict[str, list[tuple[str, float]]] = {}
    for raw, term in query:
        if term in out:
            continue
        name = raw in names
        out[term] = [(term, 1.0)] if term in known else []
        if surface is None or len(raw) < 3 or raw.isdigit() or (term in known and not name):
            continue
        from rapidfuzz import fuzz, process

        from keeper.recall import lexicon

        english = raw in lexicon.WORDS
        if english and term in known:  # a capitalised word, no name: "Grace", "Harbour"
            continue
        written = surface(raw)
        weight = ENGLISH_WEIGHT if english else NAME_WEIGHT if term in known else TYPO_WEIGHT
        best: dict[str, float] = {}
        cutoff = _cutoff(len(raw), english)
        for match, score, _ in process.extract(raw, list(written), scorer=fuzz.ratio, limit=6, score_cutoff=cutoff):
            stand_in = written[match]
            if stand_in == term or (term in known and match in lexicon.WORDS):  # a name's spelling, not a word
                continue
            best[stand_in] = max(best.get(stand_in, 0.0), score / 100.0 * weight)
        out[term] += sorted(best.items(), key=lambda kv: -kv[1])[:STAND_INS]
    return out


def _cutoff(size: int, english: bool) -> float:
    """The least rapidfuzz ratio of a correction for a word of ``size`` letters: for an English
    word one letter added or dropped at most, for any other about two typing slips."""
    if size == 3:
        return THREE_LETTER_CUTOFF
    if english:
        return 200 * (size - 1) / (2 * size - 1) - 0.01
    return next(cutoff for least, cutoff in TYPO_CUTOFFS if size >= least)


class Query:
    """A question parsed once: its ``(word, term)`` pairs, its date slots (``tokens.date_slots``:
    each day it asks for, written or relative, the terms of its written dates taken out of the
    plain pairs), the terms ranking weighs, the names it writes and whether its answer likely
    spans sessions."""

    __slots__ = ("names", "slots", "spread", "terms", "text", "today", "wanted", "words")

    def __init__(self, text: str, today: int) -> None:
        """``today``: the day it is asked on, counted from 1970-01-01 (``keeper.recall.dates``)."""
        self.text, self.today = text, today
        query_words = list(dict.fromkeys(words(text)))
        self.slots, written = date_slots(text, today)
        if self.slots:
            optional = written.union(t for _, options in self.slots for t, _ in options)
            query_words = [(raw, term) for raw, term in query_words if term not in optional]
        self.words = query_words
        self.terms = list(dict.fromkeys(term for _, term in query_words)) + [name for name, _ in self.slots]
        self.wanted = list(dict.fromkeys([*self.terms, *(t for _, options in self.slots for t, _ in options)]))
        self.names = names_in(text)
        self.spread = spans_sessions(text)


def _slot_stand_ins(
    slots: list[tuple[str, list[tuple[str, float]]]], df: dict[str, int]
) -> dict[str, list[tuple[str, float]]]:
    """Each date slot with the options the memory holds."""
    return {name: [(t, w) for t, w in options if df.get(t)] for name, options in slots}


def _snippet(chunk: Chunk, matched: set[str], limit: int = SNIPPET_LINES) -> str:
    """The first lines of a section that hold a matched word (else its first lines), shortened.
    Lines are read until ``limit`` hold one: a long section's others are never stemmed."""
    lines = [ln.strip() for ln in (chunk.text or "").splitlines() if ln.strip()]
    matcher = _Matcher(matched)
    compound = [t for t in matched if not t.isalnum()]  # whole identifiers: order_service, cache.py
    hits: list[str] = []
    for ln in lines:
        if len(hits) == limit:
            break
        if matched.intersection(matcher.sequence(ln)) or any(t in fold(ln) for t in compound):
            hits.append(ln)
    chosen = (hits or lines)[:limit]
    return "\n".join(ln if len(ln) <= SNIPPET_CHARS else ln[: SNIPPET_CHARS - 3] + "…" for ln in chosen)


def rank(
    chunks: list[Chunk],
    terms: list[str],
    stand_ins: dict[str, list[tuple[str, float]]],
    stats: tuple[dict[str, int], int, float],
    root: str,
    today: int,
) -> list[Result]:
    """BM25 over the candidates, with typo stand-ins weighted down, then recency and siblings.

    ``coverage`` is the share of the query's information (idf) a section matches: automatic
    recall injects only sections that cover enough of the prompt.
    """
    df, n, avg = stats

    def strongest(term: str) -> float:
        return max((_idf(n, df[w]) for w, _ in stand_ins.get(term, []) if w in df), default=0.0)

    total = sum(strongest(t) for t in terms) or 1.0
    results = []
    idfs = {w: _idf(n, df[w]) for options in stand_ins.values() for w, _ in options if w in df}
    days: dict[str | None, int | None] = {}
    for chunk in chunks:
        counts, length = chunk.counts, chunk.length
        score = covered = 0.0
        hits = 0
        matched: set[str] = set()
        for term in terms:
            best = best_idf = 0.0
            for word, weight in stand_ins.get(term, []):
                tf = counts.get(word, 0)
                if not tf or word not in idfs:
                    continue
                idf = idfs[word]
                value = weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
                if value > best:
                    best, best_idf = value, idf
                matched.add(word)
            score += best
            covered += best_idf
            hits += best > 0
        if score <= 0:
            continue
        day = days[chunk.date] if chunk.date in days else days.setdefault(chunk.date, dates.day_number(chunk.date))
        if day is not None:
            score *= 1 + RECENCY_BOOST * math.exp(-max(today - day, 0) / RECENCY_DAYS)
        results.append(Result(chunk, score, matched, root, covered / total, hits))
    by_file: dict[str, float] = {}
    for result in results:
        by_file[result.chunk.path] = by_file.get(result.chunk.path, 0.0) + result.score
    for result in results:  # sections of one session back each other up
        result.score += SIBLING_WEIGHT * (by_file[result.chunk.path] - result.score)
    results.sort(key=lambda r: (-r.score, r.chunk.path, r.chunk.line))
    return results


def _with_text(project: paths.Project, results: list[Result]) -> list[Result]:
    """Fill in the text of index chunks from their files (each file read once, as its source
    allows: bounded, no links, never blocking); drop vanished ones."""
    texts: dict[str, dict[int, str]] = {}
    for result in results:
        path = result.chunk.path
        if result.chunk.text is None and path not in texts:
            text = sources.read_named(path, sources.name_of(project, path))
            texts[path] = {line: body for _, line, body in sections_of(path, text)} if text is not None else {}
    for result in results:
        if result.chunk.text is None:
            result.chunk.text = texts[result.chunk.path].get(result.chunk.line)
    return [r for r in results if r.chunk.text is not None]


def _close_pairs(
    spots: list[tuple[int, str]], window: int = NEAR_WORDS, wanted: set[tuple[str, str]] | None = None
) -> set[tuple[str, str]]:
    """Pairs of the words at ``spots`` (position, word; in order) within ``window`` words of each
    other; once every pair of ``wanted`` is among them, no more. Linear in ``spots``: a section that
    arrived with one word repeated 200,000 times is read in a second, not for minutes (each word
    once took a copy of the rest)."""
    pairs: set[tuple[str, str]] = set()
    for i, (at, word) in enumerate(spots):
        for j in range(i + 1, len(spots)):
            later, other = spots[j]
            if later - at > window:
                break
            if other != word:
                pairs.update(((word, other), (other, word)))
        if wanted is not None and wanted <= pairs:
            break
    return pairs


class _Matcher:
    """Which written words of a text stand for some of the given terms, stemming only the few that may.

    A stem is its word's prefix but for a last letter (hop|ing: hope; cr|ying: cri), so a word
    is stemmed only if it starts like a term (``starts``: first three letters, or two for short
    terms) or is an irregular form.
    """

    def __init__(self, terms: set[str]) -> None:
        self.terms = terms
        self.starts: set[str] = set()
        for term in terms:
            prefix = term[:-1] if len(term) > 2 else term
            self.starts.add(prefix[:3])
        self._known: dict[str, str | None] = {}

    def may_stand(self, word: str) -> bool:
        return word[:3] in self.starts or word[:2] in self.starts or word in IRREGULAR

    def sequence(self, text: str) -> list[str]:
        """``text``'s words, those that stand for one of ``terms`` replaced by it."""
        found = plain_words(text)
        may, term = self.may_stand, self.term
        for at in [i for i, word in enumerate(found) if may(word)]:
            found[at] = term(found[at]) or found[at]
        return found

    def term(self, word: str) -> str | None:
        """The term ``word`` stands for, if it is one of ``terms``."""
        known = self._known.get(word, "")
        if known != "":
            return known
        found = None
        if self.may_stand(word):
            term = _STEMMED.get(word, "")
            if term == "":  # the same words come back in every snippet and the lift: stemmed once
                term = _STEMMED[word] = term_of(word)
            found = term if term in self.terms else None
        self._known[word] = found
        return found


_STEMMED: dict[str, str | None] = {}  # term_of of the words _Matcher stemmed, for this process


class _Lift:
    """The query as a word sequence for the pair and proximity lifts: each word as the term it
    matched (its stand-in, for a typo), stop words as written."""

    def __init__(self, query: str, stand_ins: dict[str, list[tuple[str, float]]]) -> None:
        self.sequence: list[str] = []
        content: set[str] = set()
        for word in plain_words(query):
            term = term_of(word)
            options = stand_ins.get(term) if term else None
            self.sequence.append(options[0][0] if options else term or word)
            if options:
                content.add(options[0][0])
        self.pairs = set(zip(self.sequence, self.sequence[1:]))
        self.near = {(a, b) for a in content for b in content if a < b}
        self.matcher = _Matcher(content)
        self._written = {w for w in self.sequence if w not in content}  # stop words, as written
        self._asked = set(self.sequence)
        self._reads: dict[str, str] = {}  # a text's word -> the query's word it reads as, "" for none

    def _read(self, word: str) -> str:
        """The query's word (a term, or a stop word as written) ``word`` stands for, or "": only such
        words can make a pair of the query's or two of its terms close together."""
        starts = self.matcher.starts
        if word in self._written or word[:3] in starts or word[:2] in starts or word in IRREGULAR:
            read = self.matcher.term(word) or word
            return read if read in self._asked else ""
        return ""

    def lift(self, text: str) -> float:
        """Up to ``PHRASE_BOOST`` for the query's word pairs held side by side, and up to
        ``PROXIMITY_BOOST`` for every two of its terms found close together. Each distinct word
        is read once (a long section repeats its words), the words in order by a lookup."""
        found = plain_words(text)
        reads = self._reads
        for word in set(found).difference(reads):
            reads[word] = self._read(word)
        seen = list(map(reads.__getitem__, found))
        spots = [i for i, read in enumerate(seen) if read]
        factor = 1.0
        if self.pairs:
            held = set(spots)
            side_by_side = {(seen[i], seen[i + 1]) for i in spots if i + 1 in held}
            factor *= 1 + (PHRASE_BOOST - 1) * len(self.pairs & side_by_side) / len(self.pairs)
        if self.near:
            content = self.matcher.terms
            close = self.near & _close_pairs([(i, seen[i]) for i in spots if seen[i] in content], wanted=self.near)
            factor *= 1 + (PROXIMITY_BOOST - 1) * len(close) / len(self.near)
        return factor


def best(
    project: paths.Project,
    results: list[Result],
    query: Query,
    limit: int,
    stand_ins: dict[str, list[tuple[str, float]]],
    leave_out: Callable[[str], bool] | None = None,
) -> list[Result]:
    """The ``limit`` best, after the sections holding the query's words as asked are lifted: its
    word pairs side by side ("in tests", "reserve stock") and its terms close together (a name
    beside what that person did). A typo counts as the word it stands for.

    Only the leading results are read for that, from their files: the lift cannot bring a
    section from far below. Those of a file ``leave_out`` names are dropped unread: the others
    keep their places among themselves.
    """
    spread = query.spread
    if spread:
        results = _one_per_session(results)
    leading = results[: max(limit, RERANK)]
    if leave_out is not None:
        leading = [r for r in leading if not leave_out(r.chunk.path)]
    leading = _with_text(project, leading)
    asked = _Lift(query.text, stand_ins)
    if asked.pairs or asked.near:
        for result in leading:
            result.score *= asked.lift(result.chunk.text or "")
        leading.sort(key=lambda r: (-r.score, r.chunk.path, r.chunk.line))
    if spread:
        leading = _one_per_session(leading)
    return leading[:limit]


_SPANNING = frozenset(
    (  # noqa: SIM905 - a word list reads best as text
        "many often times after before first last earlier later earliest latest compare compared comparison "
        "versus vs more less better worse again ever every each both between since until order sequence then"
    ).split()
)


def spans_sessions(query: str) -> bool:
    """Whether a question asks for a count, a sequence or a comparison ("how many times", "what
    did X do after Y", "first", "before", "compare"): its answer is likely in several sessions."""
    return not _SPANNING.isdisjoint(plain_words(query))


def _one_per_session(results: list[Result]) -> list[Result]:
    """The best section of each session first, in order, then the others: a question whose answer
    spans sessions sees distinct sessions, not several sections of the best one."""
    seen: set[str] = set()
    first: list[Result] = []
    rest: list[Result] = []
    for result in results:
        path = result.chunk.path
        (rest if path in seen else first).append(result)
        seen.add(path)
    return first + rest


def search(
    project: paths.Project,
    query: str,
    limit: int = 5,
    today: date | None = None,
    thorough: bool = True,
    correct: bool = True,
    min_terms: int = 1,
    scope: str = "all",
    team: bool = False,
    gate_for: tuple[str, str] | None = None,
    leave_out: Callable[[str], bool] | None = None,
    gate_kept: bool = False,
) -> list[Result]:
    """Rank the project's memory sections for ``query``; an empty list when nothing matches.

    ``scope``: ``project`` (memory.md, the session files, Claude Code's auto memory of this
    project), ``global`` (the global memory.md) or ``all``. ``min_terms``: only sections
    holding at least that many of the query's words. ``team``: search the repository's team memory too.
    ``gate_for``: automatic recall's session and its own file's name, for which the prompt's gate
    (``keeper.recall.gate``) is kept. ``leave_out``: files (by path) whose sections the caller would
    drop, dropped before their text is read (only among the leading results, so the rest rank alike).
    ``gate_kept``: the prompt's gate held for this session (then a quick search without typo correction
    ranks from the index's snapshot while it holds the index as the quick check would leave it,
    ``keeper.recall.snapshot``, without SQLite).

    Uses the SQLite index (brought up to date first; ``thorough`` stats every file), or scans the
    files where this Python has no FTS5. ``correct`` turns on typo correction (rapidfuzz).
    """
    day = dates.days_from_civil(today.year, today.month, today.day) if today is not None else _today()
    asked = Query(query, day)
    if not asked.terms:
        return []
    where = sources.Sources(project, team)
    bounds = (limit, min_terms)
    depth = CANDIDATES if thorough else CANDIDATES // QUICK_DEPTH
    held = _snapshot(where, depth, gate_for) if gate_kept and not (thorough or correct) and scope == "all" else None
    found = _from_snapshot(project, held, asked, bounds, leave_out) if held is not None else None
    if found is not None:
        return found
    from keeper.recall import index

    try:
        con = index.open_index(project)
    except index.Error:
        con = None
    if con is not None:
        try:
            index.take_in(con, where, thorough, gate_for)
            return _found(project, _Indexed(con, project, depth, scope), asked, bounds, correct, leave_out)
        except index.DatabaseError as exc:  # replaced or damaged under us (a clear, a copy): it is only derived
            from keeper.store import log

            log.write("recall", "WARN", f"search index unusable ({exc}); searched the files directly")
        finally:
            con.close()
    if not thorough and len(sessions.list_files(project)) > SCAN_AT_PROMPT_UP_TO:
        # automatic recall in a large store without an index: reading every file would hold the
        # prompt hook past its limit, so it finds nothing this time
        return []
    return _found(project, _Scanned(corpus(where, scope)), asked, bounds, correct, leave_out)


def _snapshot(where: sources.Sources, depth: int, gate_for: tuple[str, str] | None) -> Corpus | None:
    """The index's snapshot as automatic recall's corpus, where one holds the index as it is
    (``keeper.recall.snapshot``), loaded only where one was written (a large store keeps none)."""
    if gate_for is None or not os.path.exists(os.path.join(where.project.state, paths.INDEX_SNAPSHOT)):
        return None
    from keeper.recall import snapshot

    return snapshot.current(where, depth, gate_for[1])


def _from_snapshot(
    project: paths.Project, held: Corpus, asked: Query, bounds: tuple[int, int], leave_out: Callable[[str], bool] | None
) -> list[Result] | None:
    """Automatic recall's results from the index's snapshot, or None where it proves to be none ``keep``
    wrote (removed then: the SQLite path answers, and writes it again)."""
    from keeper.recall import snapshot

    try:
        return _found(project, held, asked, bounds, False, leave_out)
    except snapshot.DAMAGED:
        snapshot.void_beside(project.index)
        return None


def _today() -> int:
    """Today, counted from 1970-01-01 (``keeper.recall.dates``), without importing ``datetime``."""
    now = time.localtime()
    return dates.days_from_civil(now.tm_year, now.tm_mon, now.tm_mday)


def _found(
    project: paths.Project,
    corpus: Corpus,
    query: Query,
    bounds: tuple[int, int],
    correct: bool,
    leave_out: Callable[[str], bool] | None,
) -> list[Result]:
    """The one pipeline behind ``search``: stand-ins for the query's words, the corpus's
    candidates, BM25 over them, then the lift of the leading ones read from their files.
    ``bounds``: how many results at most, and how many of the query's terms each must hold."""
    limit, min_terms = bounds
    df, n, avg = corpus.frequencies(query.wanted)
    stand_ins = _stand_ins(query.words, set(df), corpus.surface if correct else None, query.names)
    stand_ins.update(_slot_stand_ins(query.slots, df))
    found = sorted({w for options in stand_ins.values() for w, _ in options})
    if not found:
        return []
    if not set(found) <= set(df):
        df, n, avg = corpus.frequencies(found)
    ranked = sorted((w for w in found if df.get(w)), key=df.__getitem__)
    weights = {w: _idf(n, df[w]) for w in ranked}
    chunks = corpus.candidates(ranked, df, weights)
    scored = rank(chunks, query.terms, stand_ins, (df, n, avg), project.dir, query.today)
    results = [r for r in scored if r.hits >= min_terms]
    return _labelled(project, best(project, results, query, limit, stand_ins, leave_out))


class _Indexed:
    """The SQLite index as the corpus: counts from its tables, the few sections worth ranking."""

    def __init__(self, con: Connection, project: paths.Project, depth: int, scope: str) -> None:
        self.con, self.project, self.depth, self.scope = con, project, depth, scope

    def frequencies(self, terms: Iterable[str]) -> tuple[dict[str, int], int, float]:
        from keeper.recall import index

        return index.document_frequencies(self.con, terms)

    def surface(self, raw: str) -> dict[str, str]:
        from keeper.recall import index

        return index.surface_words(self.con, raw)

    def candidates(self, ranked: list[str], df: dict[str, int], weights: dict[str, float]) -> list[Chunk]:
        from keeper.recall import index

        return index.candidates(self.con, self.project, ranked, df, weights, self.depth, self.scope)


def corpus(where: sources.Sources, scope: str = "all") -> list[Chunk]:
    """Every section recall can find, for the scan without an index."""
    project = where.project
    names = [paths.MEMORY_FILE, *(f"{paths.SESSIONS_DIR}/{os.path.basename(p)}" for p in sessions.list_files(project))]
    names += list(where.outside())
    chunks: list[Chunk] = []
    for name in names:
        path = sources.path_of(project, name)
        text = sources.read_named(path, name) if path and sources.in_scope(name, scope) else None
        if path and text:
            chunks.extend(chunks_of(path, text, sources.title_of(name)))
    return chunks


class _Scanned:
    """Every section read and tokenised from the files, as the corpus (Pythons built without
    FTS5, an index that cannot be used): all of them are candidates."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self.df: dict[str, int] = {}
        for chunk in chunks:
            for term in chunk.counts:
                self.df[term] = self.df.get(term, 0) + 1
        self.n = len(chunks)
        self.avg = sum(c.length for c in chunks) / self.n if self.n else 1.0
        self._written: dict[str, str] | None = None

    def frequencies(self, terms: Iterable[str]) -> tuple[dict[str, int], int, float]:
        return {t: self.df[t] for t in terms if t in self.df}, self.n, self.avg

    def surface(self, raw: str) -> dict[str, str]:
        """Every word of the corpus as written (read once, when a correction first needs them)."""
        if self._written is None:
            self._written = {}
            for chunk in self.chunks:
                self._written.update(words(chunk.heading + "\n" + (chunk.text or "")))
        return self._written

    def candidates(self, ranked: list[str], df: dict[str, int], weights: dict[str, float]) -> list[Chunk]:
        return self.chunks


def _labelled(project: paths.Project, results: list[Result]) -> list[Result]:
    """Give results from outside the project's folder their scope and an id ``keeper expand`` takes."""
    for result in results:
        name = sources.name_of(project, result.chunk.path)
        if name is not None and sources.scope_of(name) != sources.PROJECT:
            result.scope, result.id = sources.scope_of(name), f"{name}:{result.chunk.line}"
    return results


def section_for(project: paths.Project, ident: str, team: bool = False) -> tuple[str, str, str]:
    """The whole section behind a result id (``sessions/<file>.md:<line>``): path, heading, text.

    Only the files of a source can be named (the team notes only with ``team``). Raises
    KeeperError otherwise.
    """
    from keeper.errors import KeeperError

    name, _, line_text = ident.rpartition(":")
    path = sources.Sources(project, team).path_of(name)
    if path is None or not line_text.isdecimal():
        raise KeeperError(
            f"{ident!r} is not a result id; ids look like sessions/2026-11-21_1430.md:12 (see keeper recall)"
        )
    text = sources.read_named(path, name)
    if text is None:
        raise KeeperError(f"{path} no longer exists; run keeper recall again for fresh ids")
    wanted, lines = int(line_text), text.count("\n") + (not text.endswith("\n"))
    if not 1 <= wanted <= lines:  # the last section is not what a line past the end means
        raise KeeperError(f"{path} has {lines} lines, so no line {wanted}; run keeper recall again for fresh ids")
    found = sections_of(path, text)
    chosen = next((s for s in found if s[1] == wanted), None) or next((s for s in found[::-1] if s[1] <= wanted), None)
    if chosen is None:
        raise KeeperError(f"no section at line {wanted} of {path}; run keeper recall again for fresh ids")
    return path, chosen[0], chosen[2]
