"""The derived search index: SQLite FTS5 over memory.md and the session files.

Markdown stays the source of truth. The index (``state/index.sqlite3``) holds each section's
Keeper-tokenised terms and is brought up to date from file names, sizes and mtimes on every
search, so it is never stale after a person edits, adds or deletes a file; it can be deleted at
any time and a corrupt one is rebuilt. SQLite's WAL mode and busy timeout make concurrent readers
and writers safe. Where a Python build lacks FTS5, ``open_index`` returns None and search scans
the files instead.

Freshness has two depths: ``thorough`` (``keeper recall``) stats every file; ``quick``
(automatic recall on each prompt, which must stay within a hook's budget) trusts the folder
listing for added and deleted files, stats memory.md and the newest session files (where Keeper
itself writes), and stats a rotating window of the others, so an in-place hand edit of an old
session file reaches automatic recall within a few prompts and explicit recall at once.
"""

from __future__ import annotations

import os
import sqlite3

from keeper import paths
from keeper.fsutil import ensure_dir, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from keeper.search import Chunk

SCHEMA_VERSION = "2"
NEWEST_ALWAYS_CHECKED = 20
WINDOW = 256
CANDIDATES = 200
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(name TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS sections(
    id INTEGER PRIMARY KEY, name TEXT, heading TEXT, line INTEGER, day TEXT, body TEXT, terms TEXT, nterms INTEGER
);
CREATE INDEX IF NOT EXISTS sections_by_name ON sections(name);
CREATE TABLE IF NOT EXISTS surface(word TEXT PRIMARY KEY, term TEXT) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS sections_fts USING fts5(
    terms, content='sections', content_rowid='id', tokenize="unicode61 remove_diacritics 0 tokenchars '_./\\-'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(sections_fts, row);
CREATE TRIGGER IF NOT EXISTS sections_ai AFTER INSERT ON sections BEGIN
    INSERT INTO sections_fts(rowid, terms) VALUES (new.id, new.terms);
END;
CREATE TRIGGER IF NOT EXISTS sections_ad AFTER DELETE ON sections BEGIN
    INSERT INTO sections_fts(sections_fts, rowid, terms) VALUES ('delete', old.id, old.terms);
END;
"""


def index_file(project: paths.Project) -> str:
    return os.path.join(project.state, "index.sqlite3")


def _connect(path: str) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=5.0, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.executescript(_SCHEMA)
    row = con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if row is None:
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
    elif row[0] != SCHEMA_VERSION:
        raise sqlite3.DatabaseError("index schema changed")
    return con


def open_index(project: paths.Project) -> sqlite3.Connection | None:
    """The project's index, created or rebuilt as needed; None when this Python has no FTS5."""
    path = index_file(project)
    ensure_dir(project.state)
    try:
        return _connect(path)
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower() or "no such module" in str(exc).lower():
            return None
        raise
    except sqlite3.DatabaseError:  # corrupt, or an older layout: it is derived, so start over
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(path + suffix)
            except OSError:
                pass
        return _connect(path)


def _files(project: paths.Project) -> dict[str, str]:
    """Every searchable file, by its name relative to the project folder."""
    found = {paths.MEMORY_FILE: project.memory} if os.path.exists(project.memory) else {}
    try:
        names = os.listdir(project.sessions)
    except OSError:
        names = []
    for name in names:
        if name.endswith(".md"):
            found[f"{paths.SESSIONS_DIR}/{name}"] = os.path.join(project.sessions, name)
    return found


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def refresh(con: sqlite3.Connection, project: paths.Project, thorough: bool = True) -> int:
    """Bring the index up to date with the files; return how many files were (re)indexed."""
    current = _files(project)
    known = {name: (mtime, size) for name, mtime, size in con.execute("SELECT name, mtime_ns, size FROM files")}
    if thorough:
        to_check = list(current)
    else:
        sessions_sorted = sorted(n for n in current if n != paths.MEMORY_FILE)
        older = sessions_sorted[:-NEWEST_ALWAYS_CHECKED]
        start = int((con.execute("SELECT value FROM meta WHERE key='window'").fetchone() or ["0"])[0] or 0)
        start = start if start < len(older) else 0
        window = older[start : start + WINDOW]
        con.execute("INSERT OR REPLACE INTO meta VALUES ('window', ?)", (str(start + WINDOW),))
        new = [n for n in current if n not in known]
        to_check = [paths.MEMORY_FILE, *sessions_sorted[-NEWEST_ALWAYS_CHECKED:], *window, *new]
    changed = []
    for name in dict.fromkeys(to_check):
        if name not in current:
            continue
        stamp = _stamp(current[name])
        if stamp is not None and known.get(name) != stamp:
            changed.append((name, stamp))
    removed = [name for name in known if name not in current]
    if not changed and not removed:
        return 0
    from keeper.search import chunks_of, words

    con.execute("BEGIN IMMEDIATE")
    try:
        for name in removed:
            con.execute("DELETE FROM sections WHERE name=?", (name,))
            con.execute("DELETE FROM files WHERE name=?", (name,))
        for name, stamp in changed:
            con.execute("DELETE FROM sections WHERE name=?", (name,))
            text = read_text(current[name]) or ""
            con.executemany("INSERT OR IGNORE INTO surface VALUES (?, ?)", words(text))
            con.executemany(
                "INSERT INTO sections(name, heading, line, day, body, terms, nterms) VALUES (?,?,?,?,?,?,?)",
                [
                    (name, c.heading, c.line, c.date, c.text, " ".join(c.terms), len(c.terms))
                    for c in chunks_of(name, text)
                ],
            )
            con.execute("INSERT OR REPLACE INTO files VALUES (?,?,?)", (name, *stamp))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(changed) + len(removed)


def document_frequencies(con: sqlite3.Connection, terms: Iterable[str]) -> tuple[dict[str, int], int, float]:
    """``(df per term, number of sections, average section length)`` for BM25."""
    wanted = list(terms)
    marks = ",".join("?" * len(wanted))
    df = dict(con.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", wanted)) if wanted else {}
    count, total = con.execute("SELECT count(*), coalesce(sum(nterms), 0) FROM sections").fetchone()
    return df, int(count), (total / count if count else 1.0)


def surface_words(con: sqlite3.Connection, raw: str) -> dict[str, str]:
    """Words as written in the corpus that start like ``raw`` (its first or second letter), with
    their terms: the candidates for correcting a typo in ``raw``."""
    found: dict[str, str] = {}
    for first in dict.fromkeys(raw[:2]):
        upper = chr(ord(first) + 1)
        found.update(con.execute("SELECT word, term FROM surface WHERE word >= ? AND word < ?", (first, upper)))
    return found


def candidates(con: sqlite3.Connection, project: paths.Project, terms: list[str]) -> list[Chunk]:
    """Sections containing any of ``terms``, the best ``CANDIDATES`` by FTS5's own BM25 first."""
    from keeper.search import Chunk

    if not terms:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    rows = con.execute(
        "SELECT s.name, s.heading, s.line, s.day, s.body, s.terms FROM sections_fts "
        "JOIN sections s ON s.id = sections_fts.rowid WHERE sections_fts MATCH ? ORDER BY rank LIMIT ?",
        (match, CANDIDATES),
    ).fetchall()
    return [
        Chunk(os.path.join(project.dir, *name.split("/")), heading, line, body, day, terms.split())
        for name, heading, line, day, body, terms in rows
    ]
