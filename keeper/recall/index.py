"""The derived search index: SQLite FTS5 over memory.md, the session files and the outside sources.

Markdown stays the source of truth. The index (``state/index.sqlite3``) holds, per section, where
it is, its distinct Keeper-tokenised terms with their counts (what ranking needs), and an FTS5
posting list of those terms (contentless, no positions: the smallest FTS5 can store); section
text is read from the files for the few results shown. It can be deleted at any time and a
corrupt or older one is rebuilt. WAL mode and a busy timeout make concurrent readers and writers
safe; where a Python build lacks FTS5, ``open_index`` returns None and search scans the files.

Freshness is checked from file names, sizes and mtimes on every search, without writing anything
unless something changed. Adding, deleting or renaming a file (and every atomic save, Keeper's
and most editors') changes the sessions folder's mtime, so those are always seen at once, as are
edits to memory.md, the outside sources and the newest session files, which are stat'ed on every
call. Other files are checked by (mtime, size): all of them on each explicit recall up to
``THOROUGH_UP_TO`` files; beyond that, and for automatic recall on each prompt, a window of them
at a random place per call (stat'ing 10,000 files costs more than a hook may take), so an
in-place edit of an old session file in a very large store reaches search within a few calls.
"""

from __future__ import annotations

import os

from keeper.recall import chunks, sources
from keeper.recall.chunks import Chunk, section_terms, sections_of
from keeper.recall.tokens import Counting
from keeper.store import paths, repo, sessions
from keeper.store.fsutil import ensure_dir, open_append

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from sqlite3 import Connection
    from typing import Any

    # A file's new rows as read and tokenised before its batch's transaction: its name and stamp, and
    # its sections' (line, heading, length, terms, repeated terms), None when it could not be read.
    Prepared = list[tuple[str, tuple[int, int], list[tuple[int, str, int, str, str]] | None]]


def _lru_cache(maxsize: int | None = 128, typed: bool = False) -> Callable[[Any], Any]:
    """``functools.lru_cache(maxsize)`` as ``_sqlite3`` calls it (a number): the C wrapper it makes."""
    from _functools import _lru_cache_wrapper  # type: ignore[import-not-found]  # C, no stubs

    size = maxsize if maxsize is None else max(maxsize, 0)
    return lambda function: _lru_cache_wrapper(function, size, typed, lambda *info: info)


def _without_functools() -> None:
    """Import ``_sqlite3`` without ``functools`` where nothing imported it yet.

    From Python 3.11 the C module takes ``functools.lru_cache`` at import (each connection's
    statement cache), and importing functools brings collections, types, operator, reprlib,
    keyword and itertools: ~3.5 ms of a recalling prompt, more than its search. A stand-in module
    gives it the same cache, made by the C wrapper ``lru_cache`` itself uses, for the import only;
    anything importing functools later gets the real one. Any doubt: the ordinary import.
    """
    import sys

    if "functools" in sys.modules or "_sqlite3" in sys.modules:
        return
    stand_in = type(sys)("functools")
    stand_in.lru_cache = _lru_cache  # type: ignore[attr-defined]
    sys.modules["functools"] = stand_in
    try:
        import _sqlite3  # noqa: F401
    except Exception:  # another Python wants more of functools: the ordinary import below
        pass
    finally:
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]


_without_functools()
try:  # the C module alone: the sqlite3 package would add datetime and more to every recall
    from _sqlite3 import DatabaseError, Error, OperationalError
    from _sqlite3 import connect as _sqlite_connect
except ImportError:  # pragma: no cover - CPython always has it where sqlite3 works
    from sqlite3 import DatabaseError, Error, OperationalError
    from sqlite3 import connect as _sqlite_connect

__all__ = ["DatabaseError", "Error", "OperationalError"]

SCHEMA_VERSION = 9  # PRAGMA user_version; bump whenever the stored terms change
NEWEST_ALWAYS_CHECKED, WINDOW = chunks.NEWEST_ALWAYS_CHECKED, chunks.WINDOW  # the quick check's
THOROUGH_UP_TO = 500  # explicit recall stats every file up to this many
THOROUGH_WINDOW = 64  # beyond that, older files stat'ed per explicit recall
OPTIMIZE_AFTER = 1000  # files indexed in one go: merge FTS5's segments for fast queries afterwards
PROMPT_BUDGET = 1.5  # seconds of indexing automatic recall may spend on one prompt; the rest waits
BATCH = 500  # files indexed per transaction: a build cut short keeps every batch it finished
_SESSIONS = "name >= 'sessions/' AND name < 'sessions0'"  # names in sessions/, by the name index (LIKE cannot)
_OUTSIDE = (  # the names of sources.outside
    "(name >= 'global/' AND name < 'global0') OR (name >= 'native/' AND name < 'native0') OR name = 'team/team.md'"
)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS sections(
    id INTEGER PRIMARY KEY, file INTEGER NOT NULL, line INTEGER, heading TEXT, nterms INTEGER, terms TEXT, counts TEXT
);
CREATE INDEX IF NOT EXISTS sections_by_file ON sections(file);
CREATE TABLE IF NOT EXISTS surface(word TEXT PRIMARY KEY, term TEXT) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    terms, content='', detail=none, columnsize=0, tokenize="ascii tokenchars '_./\\-'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(fts, row);
PRAGMA user_version = {SCHEMA_VERSION};
"""


_REFERENCE: list[set[tuple[str, str, str, str | None]]] = []
# What _reference_schema makes with SQLite 3.40 (and, FTS5's shadow tables being stable, most others):
# a file holding exactly this is Keeper's, without an in-memory database made at each prompt to tell.
_WRITTEN = frozenset(
    {
        ("table", "meta", "meta", "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID"),
        (
            "table",
            "files",
            "files",
            "CREATE TABLE files(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, mtime_ns INTEGER, size INTEGER)",
        ),
        ("index", "sqlite_autoindex_files_1", "files", None),
        (
            "table",
            "sections",
            "sections",
            "CREATE TABLE sections(\n    id INTEGER PRIMARY KEY, file INTEGER NOT NULL, line INTEGER, heading TEXT, "
            "nterms INTEGER, terms TEXT, counts TEXT\n)",
        ),
        ("index", "sections_by_file", "sections", "CREATE INDEX sections_by_file ON sections(file)"),
        ("table", "surface", "surface", "CREATE TABLE surface(word TEXT PRIMARY KEY, term TEXT) WITHOUT ROWID"),
        (
            "table",
            "fts",
            "fts",
            "CREATE VIRTUAL TABLE fts USING fts5(\n    terms, content='', detail=none, columnsize=0, "
            "tokenize=\"ascii tokenchars '_./\\-'\"\n)",
        ),
        ("table", "fts_data", "fts_data", "CREATE TABLE 'fts_data'(id INTEGER PRIMARY KEY, block BLOB)"),
        (
            "table",
            "fts_idx",
            "fts_idx",
            "CREATE TABLE 'fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
        ),
        ("table", "fts_config", "fts_config", "CREATE TABLE 'fts_config'(k PRIMARY KEY, v) WITHOUT ROWID"),
        ("table", "vocab", "vocab", "CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, row)"),
    }
)


def _schema_of(con: Connection) -> set[tuple[str, str, str, str | None]]:
    return set(con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


def _is_keepers(schema: set[tuple[str, str, str, str | None]]) -> bool:
    """Whether ``schema`` is exactly a Keeper index's: as written down, or as this SQLite makes it."""
    return schema == _WRITTEN or schema == _reference_schema()


def _reference_schema() -> set[tuple[str, str, str, str | None]]:
    """Everything ``sqlite_master`` of a Keeper index holds: the schema made afresh in memory."""
    if not _REFERENCE:
        ref = _sqlite_connect(":memory:")
        try:
            ref.executescript(_SCHEMA)
            _REFERENCE.append(_schema_of(ref))
        finally:
            ref.close()
    return _REFERENCE[0]


def _connect(path: str) -> Connection:
    """An open index of this schema; a new file gets the schema, anything else raises DatabaseError.

    The index is derived data anyone able to write the file could have replaced, and SQLite runs
    the triggers and views a database file brings. So a file whose schema is not exactly Keeper's
    (an extra trigger, view, table or index, another column) is not used but rebuilt, and the
    connection does not trust SQL stored in the schema (``trusted_schema=OFF``).
    """
    con: Connection = _sqlite_connect(path, timeout=5.0, isolation_level=None)
    try:
        con.execute("PRAGMA trusted_schema=OFF")
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION and not _is_keepers(_schema_of(con)):
            version = -1
    except BaseException:
        con.close()
        raise
    if version == SCHEMA_VERSION:
        return con
    fresh = {row for row in _reference_schema() if row[1] == "meta" and row[0] == "table"}
    if version != 0 or not _schema_of(con) <= fresh:  # new, or made by another process up to its meta table
        con.close()
        raise DatabaseError("index schema changed")
    con.execute("PRAGMA journal_mode=WAL")
    from keeper.recall import snapshot

    snapshot.void_beside(path)  # a snapshot of an index this path held before (its inode may come back)
    try:  # in one transaction: two processes creating it at once, the second finds it made
        con.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()
        raise
    return con


def open_index(project: paths.Project) -> Connection | None:
    """The project's index, created or rebuilt as needed; None when this Python has no FTS5, or when
    the project has no folder yet (a recall in a folder where nothing was saved makes no project:
    the global memory and Claude Code's auto memory are then scanned)."""
    if not os.path.isdir(project.dir):
        return None
    path = project.index
    ensure_dir(project.state)
    if not os.path.exists(path):  # created 0600 by Keeper: SQLite gives -wal and -shm the same mode
        os.close(open_append(path))
    try:
        return _connect(path)
    except OperationalError as exc:
        if "fts5" in str(exc).lower() or "no such module" in str(exc).lower():
            return None
        raise
    except DatabaseError:  # corrupt, or an older layout: it is derived, so start over
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(path + suffix)
            except OSError:
                pass
        os.close(open_append(path))  # 0600 again: SQLite would make it 0644
        return _connect(path)


def _listed(name: str) -> bool:
    """Whether a name in the sessions folder is a session file the index holds."""
    return name.endswith(".md") and sources.storable(name)


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
            if _listed(entry.name) and (chosen is None or entry.name in chosen):
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
            [n for n in os.listdir(fd) if _listed(n)]
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


def _meta(con: Connection) -> dict[str, str]:
    return dict(con.execute("SELECT key, value FROM meta"))


def _number(meta: dict[str, str], key: str) -> int:
    value = meta.get(key, "")
    return int(value) if value.lstrip("-").isdecimal() else 0


def _rows(con: Connection, sql: str, args: tuple[object, ...] = ()) -> dict[str, tuple[int, int]]:
    return {name: (mtime, size) for name, mtime, size in con.execute(sql, args)}


def _quick_changes(
    con: Connection, project: paths.Project, folders: tuple[str, str], window: int, own: str
) -> tuple[list[tuple[str, tuple[int, int]]], list[str]]:
    """The quick check: it reads only the rows it checks, and stats only those files.

    Adding, deleting or atomically replacing a file changes the folder's mtime: only then is the
    folder listed (``folders``: its mtime now and as the index knows it). For in-place edits it
    stats memory.md, the newest sessions, the session file ``own`` names ("" for none: a resumed
    session's is not among the newest) and ``window`` older ones from a random place in the index
    (no cursor to write back).
    """
    folder, known_folder = folders
    added: list[str] = []
    gone: list[str] = []
    if known_folder != folder:
        try:
            listed = {f"{paths.SESSIONS_DIR}/{n}" for n in os.listdir(project.sessions) if _listed(n)}
        except OSError:
            listed = set()
        indexed = {n for (n,) in con.execute("SELECT name FROM files WHERE " + _SESSIONS)}
        added, gone = sorted(listed - indexed), sorted(indexed - listed)
    always = (paths.MEMORY_FILE, f"{paths.SESSIONS_DIR}/{own}") if own else (paths.MEMORY_FILE,)
    checked = _rows(
        con, f"SELECT name, mtime_ns, size FROM files WHERE name IN ({', '.join('?' * len(always))})", always
    )
    checked.update(
        _rows(
            con,
            f"SELECT name, mtime_ns, size FROM files WHERE {_SESSIONS} ORDER BY name DESC LIMIT ?",
            (NEWEST_ALWAYS_CHECKED,),
        )
    )
    last = con.execute("SELECT max(id) FROM files").fetchone()[0] or 0
    start = int.from_bytes(os.urandom(4), "little") % (last + 1)
    query = f"SELECT name, mtime_ns, size FROM files WHERE id {{}} ? AND {_SESSIONS} ORDER BY id LIMIT ?"
    batch = _rows(con, query.format(">="), (start, window))
    if len(batch) < window:  # wrap round to the start (_SESSIONS holds a '>=' of its own: no str.replace)
        batch.update(_rows(con, query.format("<"), (start, window - len(batch))))
    checked.update(batch)
    names = [*always, *(n for n in checked if n not in gone), *added]
    stamped = _stamps(project, names)
    changed = [(n, stamped[n]) for n in dict.fromkeys(names) if n in stamped and checked.get(n) != stamped[n]]
    removed = gone + [n for n in checked if n not in stamped and n not in gone]
    return changed, removed


def refresh(
    con: Connection, where: sources.Sources, thorough: bool = True, budget: float | None = None, own: str = ""
) -> int:
    """Bring the index up to date with the files; return how many files were (re)indexed.

    Reads only, unless a file was added, changed or removed. Changes are written in batches of
    ``BATCH`` files, each its own transaction, so a build that is stopped (a hook's time limit, a
    kill) keeps what it did and the next call goes on from there. With ``budget`` (seconds) it
    stops after the batch that runs past it; the rest waits for the next call. A source that is
    off (the team notes with ``team: false``) leaves the index. ``own``: the name of a session file
    the quick check stats too (automatic recall's session's, which each Stop rewrites).
    """
    project = where.project
    folder = _folder_mtime(project)
    meta = _meta(con)
    quick = not thorough or _number(meta, "files") > THOROUGH_UP_TO
    if not quick:
        known = _rows(
            con,
            f"SELECT name, mtime_ns, size FROM files WHERE name = ? OR ({_SESSIONS})",
            (paths.MEMORY_FILE,),
        )
        current = _stamps(project, None)
        changed = [(name, stamp) for name, stamp in current.items() if known.get(name) != stamp]
        removed = [name for name in known if name not in current]
    else:
        window = THOROUGH_WINDOW if thorough else WINDOW
        changed, removed = _quick_changes(con, project, (folder, meta.get("folder", "")), window, own)
    outside = where.outside()
    known_outside = _rows(
        con,
        f"SELECT name, mtime_ns, size FROM files WHERE {_OUTSIDE}",
    )
    for name, path in outside.items():
        st = repo.regular(path)
        if st is None:
            continue
        if known_outside.get(name) != (st.st_mtime_ns, st.st_size):
            changed.append((name, (st.st_mtime_ns, st.st_size)))
    removed += [name for name in known_outside if name not in outside or not os.path.exists(outside[name])]
    if not changed and not removed:
        if quick and meta.get("folder") != folder:  # a file was replaced: list the folder only once for it
            from keeper.recall import snapshot

            snapshot.written(con, "INSERT OR REPLACE INTO meta VALUES ('folder', ?)", (folder,))
        return 0
    import time

    deadline = None if budget is None else time.monotonic() + budget
    counting = Counting()  # shared by the batches: a first build meets most words again in each
    done = 0
    for start in range(0, max(len(changed), 1), BATCH):
        last = start + BATCH >= len(changed)
        prepared = _prepare(project, changed[start : start + BATCH], counting)
        # the folder's mtime is recorded only with the last batch: until then the folder is listed
        # again, and what is not indexed yet is found again
        done += _write(con, prepared, counting.new_surface(), [] if start else removed, folder if last else None)
        if last and done >= OPTIMIZE_AFTER:
            con.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        if not last and deadline is not None and time.monotonic() > deadline:
            break
    return done


_REPEATED = "%s:%d".__mod__  # a (term, count) pair as the counts column holds it
_SEVERAL_TIMES = (1).__lt__


def _prepare(project: paths.Project, changed: list[tuple[str, tuple[int, int]]], counting: Counting) -> Prepared:
    """Read and tokenise the changed files: everything of a batch but its SQL, done before its
    transaction, so that the write lock other processes wait for is held only while SQLite writes."""
    from itertools import compress

    out: Prepared = []
    for name, stamp in changed:
        path = sources.path_of(project, name)
        text = sources.read_named(path, name) if path else None
        if text is None:  # gone since it was stat'ed (the next call sees it removed), or not a source's
            out.append((name, stamp, None))
            continue
        day = sessions.date_of(name)
        rows: list[tuple[int, str, int, str, str]] = []
        for heading, line, body in sections_of(name, text, sources.title_of(name)):
            counted, length = section_terms(heading, body, day, counting)
            # "term:n" for each term met more than once (terms hold no ":"), in C loops
            repeated = " ".join(map(_REPEATED, compress(counted.items(), map(_SEVERAL_TIMES, counted.values()))))
            rows.append((line, heading, length, " ".join(counted), repeated))
        out.append((name, stamp, rows))
    return out


def _write(
    con: Connection,
    prepared: Prepared,
    surface: list[tuple[str, str]],
    removed: list[str],
    folder: str | None,
) -> int:
    """Apply the changes in one transaction: old sections out of FTS5 and the tables, new ones in.

    ``prepared``: the changed files' rows (``_prepare``); one another process indexed meanwhile, as
    it is now, is left alone. ``surface``: the words as written the refresh met since the last batch
    (the table keeps a word's first term, so storing one again changes nothing).
    """
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("BEGIN IMMEDIATE")
    try:
        from keeper.recall import snapshot

        snapshot.void(con)  # the snapshot of the state this transaction replaces
        meta = _meta(con)  # as another process may have left it while this one waited for the lock
        wanted = [*removed, *(n for n, _, _ in prepared)]
        stored: dict[str, tuple[int, tuple[int, int]]] = {}
        for at in range(0, len(wanted), BATCH):  # not the whole table: each batch of a build would read it all
            part = wanted[at : at + BATCH]
            query = f"SELECT * FROM files WHERE name IN ({','.join('?' * len(part))})"
            stored.update((name, (fid, (mtime, size))) for fid, name, mtime, size in con.execute(query, part))
        prepared = [file for file in prepared if stored.get(file[0], (0, None))[1] != file[1]]
        sections, terms, files = _number(meta, "sections"), _number(meta, "terms"), _number(meta, "files")
        outdated = [stored[name][0] for name in [*removed, *(n for n, _, _ in prepared)] if name in stored]
        for file_id in outdated:
            old = con.execute("SELECT id, terms, nterms FROM sections WHERE file = ?", (file_id,)).fetchall()
            con.executemany("INSERT INTO fts(fts, rowid, terms) VALUES ('delete', ?, ?)", [r[:2] for r in old])
            con.execute("DELETE FROM sections WHERE file = ?", (file_id,))
            sections, terms = sections - len(old), terms - sum(r[2] for r in old)
        gone = [name for name in removed if name in stored]
        con.executemany("DELETE FROM files WHERE name = ?", [(name,) for name in gone])
        files -= sum(name.startswith(paths.SESSIONS_DIR + "/") for name in gone)
        next_section = (con.execute("SELECT max(id) FROM sections").fetchone()[0] or 0) + 1
        next_file = (con.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1
        file_rows: list[tuple[int, str, int, int]] = []
        section_rows: list[tuple[int, int, int, str, int, str, str]] = []
        for name, (mtime, size), rows in prepared:
            if rows is None:
                continue
            if name in stored:
                file_id = stored[name][0]
            else:
                file_id, next_file = next_file, next_file + 1
                files += name.startswith(paths.SESSIONS_DIR + "/")
            file_rows.append((file_id, name, mtime, size))
            for line, heading, length, held, repeated in rows:
                section_rows.append((next_section, file_id, line, heading, length, held, repeated))
                next_section += 1
                sections, terms = sections + 1, terms + length
        con.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", file_rows)
        con.executemany("INSERT INTO sections VALUES (?, ?, ?, ?, ?, ?, ?)", section_rows)
        if section_rows:  # FTS5 takes the terms from the rows just written: nothing bound twice
            con.execute(
                "INSERT INTO fts(rowid, terms) SELECT id, terms FROM sections WHERE id >= ? ORDER BY id",
                (section_rows[0][0],),
            )
        con.executemany("INSERT OR IGNORE INTO surface VALUES (?, ?)", surface)
        counts = [("sections", str(sections)), ("terms", str(terms)), ("files", str(files))]
        con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", counts + ([("folder", folder)] if folder else []))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(prepared) + len(removed)


def take_in(con: Connection, where: sources.Sources, thorough: bool, gate_for: tuple[str, str] | None) -> None:
    """What a search does before it ranks: the index brought up to date (the quick check within
    ``PROMPT_BUDGET`` unless ``thorough``) and, for automatic recall (``gate_for``: its session and own
    file's name), the prompt's gate kept. Another process writing the index: what is indexed stands."""
    native = None
    if gate_for is not None:
        from keeper.recall import gate

        native = gate.folder_stamp(sources.native_dir(where.project))  # before the refresh lists it
    try:
        own = gate_for[1] if gate_for is not None else ""
        indexed = refresh(con, where, thorough=thorough, budget=None if thorough else PROMPT_BUDGET, own=own)
        if gate_for is not None:
            keep_gate(con, where, native, indexed, gate_for)
        if _number(_meta(con), "sections") <= chunks.SNAPSHOT_UP_TO:  # a larger index keeps none
            from keeper.recall import snapshot

            snapshot.keep(con, where.project)  # what the next prompt ranks from without SQLite
    except OperationalError:
        pass


def after_write(project: paths.Project, team: bool, own: tuple[str, str]) -> None:
    """After a Stop rewrote its session's own file: take it in now, as the next prompt's automatic
    recall would (``own``: the session and its file's name), so that prompt finds nothing to index
    (a re-index there was most of a recalling prompt's cost). Only an index that exists: a project
    never searched builds its index when first searched, not in a Stop."""
    if not os.path.exists(project.index):
        return
    try:
        con = open_index(project)
    except Error:
        return
    if con is None:
        return
    try:
        take_in(con, sources.Sources(project, team), False, own)
    except DatabaseError as exc:  # replaced or damaged under us: the next search rebuilds it
        from keeper.store import log

        log.write("recall", "WARN", f"search index unusable after a Stop ({exc}); the next search rebuilds it")
    finally:
        con.close()


def keep_gate(
    con: Connection, where: sources.Sources, native: list[int] | None, indexed: int, own: tuple[str, str]
) -> None:
    """After a prompt's refresh: its gate (``keeper.recall.gate``) written again when the index took in
    a file or what it rests on moved. ``native``: the auto memory folder's stamp, taken before the
    refresh listed it; ``own``: the session and the name of its own file ("" for none yet)."""
    from keeper.recall import gate

    project = where.project
    rows = "SELECT name, mtime_ns, size FROM files WHERE "
    newest = _rows(con, rows + f"{_SESSIONS} ORDER BY name DESC LIMIT ?", (NEWEST_ALWAYS_CHECKED,))
    outside: dict[str, list[int] | None] = {sources.GLOBAL_NAME: None}
    if where.team:
        outside[sources.TEAM_NAME] = None
    outside.update((name, list(stamp)) for name, stamp in _rows(con, rows + _OUTSIDE).items())
    start = len(paths.SESSIONS_DIR) + 1
    key = {
        "session": own[0],
        "team": where.team,
        "folder": _meta(con).get("folder", ""),
        "sessions": {name[start:]: list(stamp) for name, stamp in newest.items() if name[start:] != own[1]},
        "outside": outside,
        "native": native,
    }
    # the same key and nothing indexed: the same names too (they change only with the folder's time)
    if indexed or gate.kept_key(project) != key:
        names = gate.names_of(n[start:] for (n,) in con.execute("SELECT name FROM files WHERE " + _SESSIONS))
        gate.keep(project, key, names, (term for (term,) in con.execute("SELECT term FROM vocab")))


def document_frequencies(con: Connection, terms: Iterable[str]) -> tuple[dict[str, int], int, float]:
    """``(df per term, number of sections, average section length)`` for BM25."""
    wanted = list(terms)
    marks = ",".join("?" * len(wanted))
    df = dict(con.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", wanted)) if wanted else {}
    meta = _meta(con)
    # a tampered or torn record must not break ranking: no term is in more sections than there are
    count = max(_number(meta, "sections"), max(df.values(), default=0), 0)
    total = max(_number(meta, "terms"), count)
    return df, count, (total / count if count else 1.0)


def surface_words(con: Connection, raw: str) -> dict[str, str]:
    """Words as written in the corpus that start like ``raw`` (its first or second letter), with
    their terms: the candidates for correcting a typo in ``raw``."""
    found: dict[str, str] = {}
    for first in dict.fromkeys(raw[:2]):
        upper = chr(ord(first) + 1)
        found.update(con.execute("SELECT word, term FROM surface WHERE word >= ? AND word < ?", (first, upper)))
    return found


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def candidates(
    con: Connection,
    project: paths.Project,
    ranked: list[str],
    df: dict[str, int],
    weight: dict[str, float],
    depth: int = chunks.CANDIDATES,
    scope: str = "all",
) -> list[Chunk]:
    """The sections worth ranking for terms ``ranked`` rarest first (each with its idf ``weight``).

    Cheap retrieval first: every section holding a rare term (each term's posting list, no
    ranking), then, while fewer than ``depth`` were found, sections holding all the common terms,
    any two of them, any one, newest first. The ``depth`` best by the idf of the terms they were
    found by come back with their terms, for ranking.
    """
    found = _retrieved(con, ranked, df, weight, depth)
    if scope != "all":
        found = _in_scope(con, found, scope)
    chosen = sorted(found, key=lambda r: (-found[r], -r))[:depth]
    if not chosen:
        return []
    rows = con.execute(
        "SELECT f.name, s.heading, s.line, s.nterms, s.terms, s.counts FROM sections s JOIN files f ON f.id = s.file "
        f"WHERE s.id IN ({','.join('?' * len(chosen))})",
        chosen,
    ).fetchall()
    return chunks.chunks_of_rows(project, rows, ranked)


def _retrieved(
    con: Connection, ranked: list[str], df: dict[str, int], weight: dict[str, float], depth: int
) -> dict[int, float]:
    """Each section the cheap retrieval finds (``candidates``), with the idf of the terms it was found by."""

    def match(level: chunks.Level, limit: int) -> list[int]:
        kind, terms = level
        quoted = [_quoted(t) for t in terms]
        if kind == "all":
            query = " AND ".join(quoted)
        elif kind == "pairs":
            query = " OR ".join(f"({a} AND {b})" for i, a in enumerate(quoted) for b in quoted[i + 1 :])
        else:
            query = " OR ".join(quoted)
        if not limit:
            return [r for (r,) in con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (query,))]
        rows = con.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?", (query, limit))
        return [r for (r,) in rows]

    return chunks.retrieve(match, _number(_meta(con), "sections"), ranked, df, weight, depth)


def _in_scope(con: Connection, found: dict[int, float], scope: str) -> dict[int, float]:
    """The sections found in the global memory (``scope`` "global") or outside it (any other)."""
    in_global = {
        r
        for (r,) in con.execute(
            "SELECT s.id FROM sections s JOIN files f ON f.id = s.file WHERE f.name = ?", (sources.GLOBAL_NAME,)
        )
    }
    return {r: s for r, s in found.items() if (r in in_global) == (scope == "global")}
