"""The index's contents as one marshal file, so a recalling prompt ranks without SQLite.

Loading ``_sqlite3`` (the library, its relocations, the statements) costs a recalling prompt more
than its search. So whoever writes the index leaves a snapshot of it behind (``state/index.snapshot``,
derived, deletable): its counts, its files' stamps, each term's sections and each section's row, read
back with the built-in ``marshal``. Each Stop takes its rewritten session file into the index
(``index.after_write``) and so writes the snapshot the next prompt ranks from.

It never answers for another state of the index than its own, by two means:

- every transaction that writes the index removes the snapshot before it commits (``void``, called
  inside it), and a snapshot is written only while its writer holds the index's write lock, from what
  it reads under that lock (``keep``): so no commit falls between what a snapshot holds and its file,
  and a process killed anywhere leaves either no snapshot or the index's own state;
- it is keyed to the index's files as they were when it was taken: the WAL checkpointed into the
  database first, the database's device, inode, size and mtime, and an empty or absent WAL. A prompt
  stats the two (no SQLite); a commit of anything that does not know the snapshot (an older Keeper,
  another tool) grows the WAL, and its checkpoint moves the database's stamp (unless it kept the
  file's size and fell within the same tick of the file system's clock as the snapshot's key: only
  such a writer, never Keeper's own, could go unseen).

A prompt then ranks from it only while the index's own quick check (``index.refresh``: the sessions
folder's time, memory.md, the session's own file, the newest session files, a window of older ones
from a random place, the outside sources) finds no file changed, so the index would write nothing.
On any doubt the SQLite path runs, and writes the snapshot again. The cheap retrieval and the
sections' rows as chunks are one code for both (``keeper.recall.chunks``), so the two find the
same candidates.

Its cost grows with the store (callgrind, as the launcher runs the hooks; the benchmark's store with
more past sessions): the prompt reads the file whole (~300 bytes a section) and unmarshals its files'
list, though only a query's terms and the rows it ranks are unpacked; the Stop that writes it pays
~50 K instructions a section (the rows read, their posting lists made, each row marshalled).

| sections | prompt after a Stop, SQLite / snapshot | the Stop, without / with writing it |
|---|---|---|
| 10 | 67.0 / 60.6 M | 251.0 / 254.8 M |
| 610 | 76.1 / 72.6 M | 260.0 / 292.1 M |
| 910 | 75.9 / 74.4 M | 263.9 / 310.0 M |
| 1,410 | 76.2 / 77.2 M | 269.9 / 340.5 M |

So it is written only up to ``chunks.SNAPSHOT_UP_TO`` sections; a larger index is searched through SQLite, and
neither its prompts nor its Stops load this module.
"""

from __future__ import annotations

import marshal
import os

from keeper.recall import chunks, sources
from keeper.recall.chunks import Chunk
from keeper.store import paths, repo
from keeper.store.fsutil import shared

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from sqlite3 import Connection
    from typing import Any

    from keeper.recall.chunks import Level, Row

TAG = b"keeper-snapshot 3 "
FILE = paths.INDEX_SNAPSHOT
NEWEST_ALWAYS_CHECKED, WINDOW = chunks.NEWEST_ALWAYS_CHECKED, chunks.WINDOW
SESSIONS = (paths.SESSIONS_DIR + "/", paths.SESSIONS_DIR + "0")  # the names in sessions/, as the index bounds them
# What reading a snapshot ``keep`` did not write raises (damaged, or put behind the index's key by hand):
# marshal only builds values, never runs them, so a wrong shape shows as one of these; the SQLite path answers
DAMAGED = (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError, MemoryError)


def _file(project: paths.Project) -> str:
    return os.path.join(project.state, FILE)


def _key(index: str) -> bytes | None:
    """What says which index, in which state, a snapshot holds: the database's device, inode, size and
    mtime while its WAL is empty or absent (everything checkpointed into it); None while a commit is
    only in the WAL."""
    try:
        st = os.stat(index)
    except (OSError, ValueError):
        return None
    try:
        if os.stat(index + "-wal").st_size:
            return None
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return None
    return TAG + f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n".encode()


def void(con: Connection) -> None:
    """Inside each transaction that writes the index, before it commits: the snapshot of the state it
    replaces removed (on Windows, through another process's read of it); if that fails the
    transaction does not commit."""
    for _, name, index in con.execute("PRAGMA database_list"):
        if name == "main" and index:
            void_beside(index)


def void_beside(index: str) -> None:
    """The snapshot beside the database ``index`` removed (``void``, or a new index made)."""
    path = os.path.join(os.path.dirname(index), FILE)
    try:
        shared(lambda: os.remove(path))
    except FileNotFoundError:
        pass


def written(con: Connection, sql: str, args: tuple[object, ...]) -> None:
    """``sql`` run as a transaction of its own that voids the snapshot (a write beside the index's batches)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        void(con)
        con.execute(sql, args)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def keep(con: Connection, project: paths.Project) -> None:
    """After a search or a Stop brought the index up to date (``index.take_in``, for an index of up to
    ``chunks.SNAPSHOT_UP_TO`` sections): its snapshot written, unless the one on disk holds it already.

    The WAL is checkpointed first (as the connection's close would), so the database alone holds
    what the snapshot is keyed to; it is taken under the index's write lock, never waiting for it
    (another process writing, or reading where the WAL must be reset: the next search keeps it)."""
    path = _file(project)
    try:
        with open(path, "rb") as fh:
            if fh.readline() == _key(project.index):
                return
    except OSError:
        pass
    con.execute("PRAGMA busy_timeout = 0")
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        con.execute("BEGIN IMMEDIATE")
    except con.OperationalError:
        return
    finally:
        con.execute("PRAGMA busy_timeout = 5000")
    try:
        key = _key(project.index)
        if key is not None:  # None: another process committed between the checkpoint and the lock
            _take(con, path, key)
    finally:
        con.execute("ROLLBACK")


def _take(con: Connection, path: str, key: bytes) -> None:
    """The index as it is, written to ``path`` after its ``key`` (``keep``, under the write lock)."""
    meta = dict(con.execute("SELECT key, value FROM meta"))
    files = con.execute("SELECT id, name, mtime_ns, size FROM files ORDER BY id").fetchall()
    rows = con.execute(
        "SELECT s.id, f.name, s.heading, s.line, s.nterms, s.terms, s.counts FROM sections s "
        "JOIN files f ON f.id = s.file ORDER BY s.id"
    ).fetchall()
    # FTS5 holds each section's terms as its rows give them (each one token, as Keeper's terms are):
    # the posting lists made from the rows, not read back through fts5vocab (several times slower)
    postings: dict[str, list[str]] = {}
    for rowid, _, _, _, _, terms, _ in rows:
        at = str(rowid)
        for term in dict.fromkeys((terms or "").split()):
            postings.setdefault(term, []).append(at)
    # FTS5's terms hold no whitespace: one line a term, its sections after a tab, found by str.find
    vocab = "".join(f"\n{term}\t{' '.join(ids)}" for term, ids in postings.items()) + "\n"
    ids, held = tuple(r[0] for r in rows), tuple(marshal.dumps(r[1:]) for r in rows)
    body = marshal.dumps((meta, files, vocab, ids, held))
    from keeper.store.fsutil import atomic_write

    try:
        atomic_write(path, key + body, durable=False)
    except (OSError, ValueError):
        pass  # only a shortcut: the next search writes it again


class Snapshot:
    """The index as its snapshot holds it, as a search corpus (``keeper.recall.search``'s ``Corpus``).

    Only what a query touches is unpacked: the lines of its terms in the vocabulary (one string,
    searched in C), and the rows of the sections it ranks (each its own small marshal)."""

    def __init__(self, project: paths.Project, data: Any, depth: int) -> None:
        self.project, self.depth = project, depth
        self.meta: dict[str, str] = data[0]
        self.files: list[tuple[int, str, int, int]] = data[1]
        self.vocab: str = data[2]
        self.ids: tuple[int, ...] = data[3]
        self.rows: tuple[bytes, ...] = data[4]
        self._postings: dict[str, tuple[int, ...]] = {}
        kinds = (dict, list, str, tuple, tuple)
        if not all(map(isinstance, data[:5], kinds)) or len(self.ids) != len(self.rows):
            raise ValueError("not a snapshot keep wrote")

    def _number(self, key: str) -> int:
        value = self.meta.get(key, "")
        return int(value) if value.lstrip("-").isdecimal() else 0

    def postings(self, term: str) -> tuple[int, ...]:
        """The sections holding ``term``, by rowid."""
        found = self._postings.get(term)
        if found is None:
            at = self.vocab.find(f"\n{term}\t") if "\n" not in term and "\t" not in term else -1
            if at < 0:
                found = ()
            else:
                start = at + len(term) + 2
                found = tuple(map(int, self.vocab[start : self.vocab.index("\n", start)].split()))
            self._postings[term] = found
        return found

    def row(self, rowid: int) -> Row:
        """A section's row, found by halving (the rowids are in order)."""
        low, high = 0, len(self.ids)
        while low < high:
            mid = (low + high) // 2
            if self.ids[mid] < rowid:
                low = mid + 1
            else:
                high = mid
        if low == len(self.ids) or self.ids[low] != rowid:
            raise KeyError(rowid)  # a posting of no row: not a snapshot keep wrote
        found: Row = marshal.loads(self.rows[low])
        return found

    def frequencies(self, terms: Iterable[str]) -> tuple[dict[str, int], int, float]:
        """As ``index.document_frequencies``."""
        df = {t: len(held) for t in terms for held in (self.postings(t),) if held}
        count = max(self._number("sections"), max(df.values(), default=0), 0)
        total = max(self._number("terms"), count)
        return df, count, (total / count if count else 1.0)

    def surface(self, raw: str) -> dict[str, str]:  # pragma: no cover - used only without typo correction
        raise NotImplementedError("the snapshot holds no surface words: correct through the index")

    def _match(self, level: Level, limit: int) -> list[int]:
        """What FTS5 finds for ``level``: its sections by rowid, the ``limit`` newest (0: all)."""
        kind, terms = level
        sets = [set(self.postings(t)) for t in terms]
        if kind == "all":
            found = set.intersection(*sets)
        elif kind == "pairs":
            found = set().union(*(a & b for i, a in enumerate(sets) for b in sets[i + 1 :]))
        else:
            found = set().union(*sets)
        return sorted(found, reverse=True)[:limit] if limit else sorted(found)

    def candidates(self, ranked: list[str], df: dict[str, int], weights: dict[str, float]) -> list[Chunk]:
        """As ``index.candidates`` (scope "all"), the rows in the order SQLite gives them."""
        found = chunks.retrieve(self._match, self._number("sections"), ranked, df, weights, self.depth)
        chosen = sorted(found, key=lambda r: (-found[r], -r))[: self.depth]
        return chunks.chunks_of_rows(self.project, (self.row(r) for r in sorted(chosen)), ranked)


def current(where: sources.Sources, depth: int, own: str = "") -> Snapshot | None:
    """The snapshot, when it holds the index as it is and the index's quick check would find nothing to
    take in (``own``: automatic recall's session file's name, which the quick check stats too); else None."""
    project = where.project
    try:
        with open(_file(project), "rb") as fh:
            header, body = fh.readline(), fh.read()
    except OSError:
        return None
    if header != _key(project.index):
        return None  # another index, or this one written since (or being written)
    try:
        found = Snapshot(project, marshal.loads(body), depth)
        return found if _unchanged(where, found, own) else None
    except DAMAGED:
        void_beside(project.index)  # the next search through SQLite writes it again
        return None


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_mtime_ns, st.st_size


def _unchanged(where: sources.Sources, found: Snapshot, own: str) -> bool:
    """Whether the index's quick check (``index.refresh`` for a prompt) would find nothing to write."""
    project = where.project
    try:
        folder = str(os.stat(project.sessions).st_mtime_ns)
    except OSError:
        folder = "-"
    if found.meta.get("folder") != folder:
        return False  # the index lists the folder again
    indexed = {name: (mtime, size) for _, name, mtime, size in found.files}
    if _stamp(project.memory) != indexed.get(paths.MEMORY_FILE):
        return False
    if own and _stamp(os.path.join(project.sessions, own)) != indexed.get(SESSIONS[0] + own):
        return False
    in_sessions = [(fid, name) for fid, name, _, _ in found.files if SESSIONS[0] <= name < SESSIONS[1]]
    newest = sorted((name for _, name in in_sessions), reverse=True)[:NEWEST_ALWAYS_CHECKED]
    last = max((fid for fid, _, _, _ in found.files), default=0)
    start = int.from_bytes(os.urandom(4), "little") % (last + 1)
    window = [name for fid, name in in_sessions if fid >= start][:WINDOW]
    window += [name for fid, name in in_sessions if fid < start][: WINDOW - len(window)]
    for name in (*newest, *window):
        if _stamp(os.path.join(project.sessions, name[len(SESSIONS[0]) :])) != indexed[name]:
            return False
    outside = where.outside()
    for name, path in outside.items():
        st = repo.regular(path)
        if st is not None and indexed.get(name) != (st.st_mtime_ns, st.st_size):
            return False
    known = [name for name in indexed if name == sources.TEAM_NAME or name.startswith(("global/", "native/"))]
    return all(name in outside and os.path.exists(outside[name]) for name in known)
