"""The derived search index: SQLite FTS5 over memory.md and the session files.

Markdown stays the source of truth. The index (``state/index.sqlite3``) holds each section's
Keeper-tokenised terms and is brought up to date from file names, sizes and mtimes on every
search, so it is never stale after a person edits, adds or deletes a file; it can be deleted at
any time and a corrupt one is rebuilt. SQLite's WAL mode and busy timeout make concurrent readers
and writers safe. Where a Python build lacks FTS5, ``open_index`` returns None and search scans
the files instead.

Adding, deleting or renaming a file (and every atomic save, Keeper's and most editors') changes
the sessions folder's mtime, so those are always seen at once, as are edits to memory.md and to
the newest session files, which are stat'ed on every call. Other files are checked by (mtime,
size): all of them on each explicit recall up to ``THOROUGH_UP_TO`` files; beyond that, and for
automatic recall on each prompt (which must stay within a hook's budget), a rotating window of
them per call. So an in-place edit of an old session file in a very large store reaches search
within a few calls; stat'ing 10,000 files costs about 40 ms in Python, more than a hook may take.
"""

from __future__ import annotations

import os
import sqlite3

from keeper import paths
from keeper.chunks import Chunk, chunks_of
from keeper.fsutil import ensure_dir, open_append, read_text
from keeper.tokens import words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

SCHEMA_VERSION = "7"
NEWEST_ALWAYS_CHECKED = 20
WINDOW = 256  # older files stat'ed per quick check (automatic recall on each prompt)
THOROUGH_UP_TO = 500  # explicit recall stats every file up to this many; beyond, this many per call
CANDIDATES = 100
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(name TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER) WITHOUT ROWID;
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


GLOBAL = f"{paths.GLOBAL_DIR}/{paths.MEMORY_FILE}"  # index names of files outside the project's folder
NATIVE = "native/"
NATIVE_TITLE = "Claude Code auto memory: "


def native_memory_dir(project: paths.Project) -> str:
    """Where Claude Code keeps its own auto memory for this project (read, never written)."""
    encoded = "".join(c if c.isalnum() else "-" for c in project.root)
    return os.path.join(paths.claude_dir(), "projects", encoded, "memory")


def outside_sources(project: paths.Project) -> dict[str, str]:
    """Files recall searches beside the project's own: the global memory and native auto memory."""
    found = {GLOBAL: paths.global_memory_file()}
    folder = native_memory_dir(project)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".md")]
    except OSError:
        names = []
    found.update((NATIVE + name, os.path.join(folder, name)) for name in sorted(names)[:200])
    return found


def source_path(project: paths.Project, name: str) -> str:
    """The file an index name stands for."""
    if name == GLOBAL:
        return paths.global_memory_file()
    if name.startswith(NATIVE):
        return os.path.join(native_memory_dir(project), os.path.basename(name[len(NATIVE) :]))
    return os.path.join(project.dir, *name.split("/"))


def scope_of(name: str) -> str:
    """``global`` for the global memory, ``native`` for Claude Code's auto memory, else ``project``."""
    return "global" if name == GLOBAL else "native" if name.startswith(NATIVE) else "project"


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
    if not os.path.exists(path):  # created 0600 by Keeper: SQLite gives -wal and -shm the same mode
        os.close(open_append(path))
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


def _stamps(project: paths.Project, names: Iterable[str] | None) -> dict[str, tuple[int, int]]:
    """``{relative name: (mtime_ns, size)}`` of memory.md and the session files (``names``: only those).

    Stats relative to an open folder where the OS allows it (cheaper per file on Linux); on
    Windows a folder listing carries the stat data already.
    """
    found: dict[str, tuple[int, int]] = {}
    prefix = paths.SESSIONS_DIR + "/"
    wanted = None if names is None else [n for n in names if n.startswith(prefix) or n == paths.MEMORY_FILE]
    if wanted is None or paths.MEMORY_FILE in wanted:
        try:
            st = os.stat(project.memory)
            found[paths.MEMORY_FILE] = (st.st_mtime_ns, st.st_size)
        except OSError:
            pass
    if os.stat not in os.supports_dir_fd:
        try:
            entries = list(os.scandir(project.sessions))
        except OSError:
            return found
        chosen = None if wanted is None else {n[len(prefix) :] for n in wanted}
        for entry in entries:
            if entry.name.endswith(".md") and (chosen is None or entry.name in chosen):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                found[prefix + entry.name] = (st.st_mtime_ns, st.st_size)
        return found
    try:
        fd = os.open(project.sessions, os.O_RDONLY)
    except OSError:
        return found
    try:
        listed = (
            [n for n in os.listdir(fd) if n.endswith(".md")]
            if wanted is None
            else [n[len(prefix) :] for n in wanted if n != paths.MEMORY_FILE]
        )
        stat = os.stat
        try:  # the common case in one tight loop; a file that vanishes midway falls back below
            found.update((prefix + n, (st.st_mtime_ns, st.st_size)) for n in listed for st in (stat(n, dir_fd=fd),))
        except OSError:
            for name in listed:
                try:
                    st = stat(name, dir_fd=fd)
                except OSError:
                    continue
                found[prefix + name] = (st.st_mtime_ns, st.st_size)
    finally:
        os.close(fd)
    return found


def _folder_mtime(project: paths.Project) -> str:
    try:
        return str(os.stat(project.sessions).st_mtime_ns)
    except OSError:
        return "-"


def _meta_int(con: sqlite3.Connection, key: str) -> int:
    row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return int(row[0]) if row and str(row[0]).lstrip("-").isdigit() else 0


def _rows(con: sqlite3.Connection, sql: str, args: tuple[object, ...] = ()) -> dict[str, tuple[int, int]]:
    return {name: (mtime, size) for name, mtime, size in con.execute(sql, args)}


def _quick_changes(
    con: sqlite3.Connection, project: paths.Project, folder: str, window: int
) -> tuple[list[tuple[str, tuple[int, int]]], list[str]]:
    """The quick check: it reads only the rows it checks, and stats only those files.

    Adding, deleting or atomically replacing a file changes the folder's mtime: only then is the
    folder listed. For in-place edits it stats memory.md, the newest sessions and the next
    ``window`` older ones in name order, wrapping round.
    """
    row = con.execute("SELECT value FROM meta WHERE key='folder'").fetchone()
    added: list[str] = []
    gone: list[str] = []
    if not row or row[0] != folder:
        try:
            listed = {f"{paths.SESSIONS_DIR}/{n}" for n in os.listdir(project.sessions) if n.endswith(".md")}
        except OSError:
            listed = set()
        indexed = {n for (n,) in con.execute("SELECT name FROM files WHERE name LIKE 'sessions/%'")}
        added, gone = sorted(listed - indexed), sorted(indexed - listed)
    cursor = (con.execute("SELECT value FROM meta WHERE key='window'").fetchone() or [""])[0]
    checked = _rows(con, "SELECT * FROM files WHERE name = ?", (paths.MEMORY_FILE,))
    checked.update(
        _rows(
            con, "SELECT * FROM files WHERE name LIKE 'sessions/%' ORDER BY name DESC LIMIT ?", (NEWEST_ALWAYS_CHECKED,)
        )
    )
    batch = _rows(
        con,
        "SELECT * FROM files WHERE name > ? AND name LIKE 'sessions/%' ORDER BY name LIMIT ?",
        (cursor, window),
    )
    if len(batch) < window:  # wrap round to the start
        batch.update(
            _rows(
                con,
                "SELECT * FROM files WHERE name LIKE 'sessions/%' ORDER BY name LIMIT ?",
                (window - len(batch),),
            )
        )
    checked.update(batch)
    last = max(batch, default="")
    con.executemany(  # one write for the window and the folder stamp
        "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("window", last), ("folder", folder)]
    )
    names = [paths.MEMORY_FILE, *(n for n in checked if n not in gone), *added]
    stamped = _stamps(project, names)
    changed = [(n, stamped[n]) for n in dict.fromkeys(names) if n in stamped and checked.get(n) != stamped[n]]
    removed = gone + [n for n in checked if n not in stamped and n not in gone]
    return changed, removed


def refresh(con: sqlite3.Connection, project: paths.Project, thorough: bool = True) -> int:
    """Bring the index up to date with the files; return how many files were (re)indexed."""
    folder = _folder_mtime(project)
    count = con.execute("SELECT count(*) FROM files").fetchone()[0]
    if thorough and count <= THOROUGH_UP_TO:
        known = _rows(con, "SELECT * FROM files WHERE name = ? OR name LIKE 'sessions/%'", (paths.MEMORY_FILE,))
        current = _stamps(project, None)
        changed = [(name, stamp) for name, stamp in current.items() if known.get(name) != stamp]
        removed = [name for name in known if name not in current]
    else:
        changed, removed = _quick_changes(con, project, folder, THOROUGH_UP_TO if thorough else WINDOW)
    outside = outside_sources(project)
    known_outside = _rows(con, "SELECT * FROM files WHERE name LIKE 'global/%' OR name LIKE 'native/%'")
    for name, path in outside.items():
        try:
            st = os.stat(path)
        except OSError:
            continue
        if known_outside.get(name) != (st.st_mtime_ns, st.st_size):
            changed.append((name, (st.st_mtime_ns, st.st_size)))
    removed += [name for name in known_outside if name not in outside or not os.path.exists(outside[name])]
    if not changed and not removed:
        con.execute("INSERT OR REPLACE INTO meta VALUES ('folder', ?)", (folder,))
        return 0
    con.execute("BEGIN IMMEDIATE")
    try:
        sections, terms = _meta_int(con, "sections"), _meta_int(con, "terms")
        for name in [*removed, *(n for n, _ in changed)]:
            found, total = con.execute(
                "SELECT count(*), coalesce(sum(nterms), 0) FROM sections WHERE name=?", (name,)
            ).fetchone()
            sections, terms = sections - found, terms - total
            con.execute("DELETE FROM sections WHERE name=?", (name,))
            con.execute("DELETE FROM files WHERE name=?", (name,))
        for name, stamp in changed:
            text = read_text(source_path(project, name)) or ""
            chunks = chunks_of(name, text, NATIVE_TITLE + name[len(NATIVE) :] if name.startswith(NATIVE) else None)
            con.executemany("INSERT OR IGNORE INTO surface VALUES (?, ?)", words(text))
            con.executemany(
                "INSERT INTO sections(name, heading, line, day, body, terms, nterms) VALUES (?,?,?,?,?,?,?)",
                [(name, c.heading, c.line, c.date, c.text, " ".join(c.terms), len(c.terms)) for c in chunks],
            )
            con.execute("INSERT OR REPLACE INTO files VALUES (?,?,?)", (name, *stamp))
            sections, terms = sections + len(chunks), terms + sum(len(c.terms) for c in chunks)
        con.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [("sections", str(sections)), ("terms", str(terms)), ("folder", folder)],
        )
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
    count, total = _meta_int(con, "sections"), _meta_int(con, "terms")
    return df, count, (total / count if count else 1.0)


def surface_words(con: sqlite3.Connection, raw: str) -> dict[str, str]:
    """Words as written in the corpus that start like ``raw`` (its first or second letter), with
    their terms: the candidates for correcting a typo in ``raw``."""
    found: dict[str, str] = {}
    for first in dict.fromkeys(raw[:2]):
        upper = chr(ord(first) + 1)
        found.update(con.execute("SELECT word, term FROM surface WHERE word >= ? AND word < ?", (first, upper)))
    return found


SCOPE_FILTERS = {
    "all": "",
    "project": f" AND s.name != '{GLOBAL}'",
    "global": f" AND s.name = '{GLOBAL}'",
}


def candidates(
    con: sqlite3.Connection,
    project: paths.Project,
    terms: list[str],
    limit: int = CANDIDATES,
    min_terms: int = 1,
    scope: str = "all",
) -> list[Chunk]:
    """Sections holding any of ``terms`` (with ``min_terms`` 2: at least two of them), best first
    by FTS5's own BM25. Pairs make FTS5 intersect short lists instead of ranking every match."""
    if not terms:
        return []
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    if min_terms >= 2 and len(quoted) >= 2:
        match = " OR ".join(f"({a} AND {b})" for i, a in enumerate(quoted) for b in quoted[i + 1 :])
    else:
        match = " OR ".join(quoted)
    rows = con.execute(
        "SELECT s.name, s.heading, s.line, s.day, s.body, s.terms FROM sections_fts "
        "JOIN sections s ON s.id = sections_fts.rowid WHERE sections_fts MATCH ?"
        + SCOPE_FILTERS[scope]
        + " ORDER BY rank LIMIT ?",
        (match, limit),
    ).fetchall()
    return [
        Chunk(source_path(project, name), heading, line, body, day, terms.split())
        for name, heading, line, day, body, terms in rows
    ]
