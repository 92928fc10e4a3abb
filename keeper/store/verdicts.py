"""The stale check's verdicts, kept between session starts and used only while the files they rest on hold the same.

Every SessionStart asks which items of memory.md may be stale (``keeper.store.stale``): it parses the
provenance record and memory.md, then reads the files the items' claims name. The record and
memory.md change at a save, the files far less often than sessions start; so the verdicts are kept
in a derived file of the project's state folder (``paths.STALE_CACHE``: deleting it costs one full
check) beside what they were worked out from: the work tree checked (worktrees share one memory,
not their files), memory.md's text (its digest), the record's ``(mtime_ns, size, inode, ctime_ns)``, and
every input of the check: a path that was there or not, a file's size, ``mtime_ns`` and content
digest, a folder's listing, a path not looked at as it lies through a link out of the project; and
``looked``, the clock before the check looked at any of them. A start looks at those again: a file
whose size and ``mtime_ns`` are as they were is taken as it was only when its change time says it
has not changed since ``looked`` (``fsutil.settled``: an edit that keeps the size and puts the
modification time back, ``touch -r``, still moves the change time); any other is read and compared
by content, so a branch switched and switched back (same bytes, new times) keeps the verdicts, and
is stamped anew. Any difference, or a damaged file, is a miss and the check runs in full. Where the
file system keeps no change time (Windows' ``st_ctime`` is the creation time; FAT) such an edit
goes unseen until the file changes again.

A file can change again within one tick of its clock with the same size: a file younger than
``MTIME_TICK_NS`` (2 s: FAT's tick) is kept with no time, so the next start compares its content,
and nothing is kept while the record is that young. The verdicts hold from when they were kept on
(``at``): a save counts only once the clock reaches its time (``provenance.read``), so a clock gone
back since takes none of them, and nothing is kept while a save waits for its time.

A start that judged one item again changes a few of the file's entries: those are appended as one
line (``_change``: the entries that differ, the offset it was written at and the time of the whole
document it follows) rather than the whole file written again; a line not found at its offset or
after another document (two starts appended at once, or one wrote the file anew meanwhile) makes
the file a miss. After ``MAX_CHANGES`` lines, or when the lines would outgrow a quarter of the
document, the file is written whole again.
"""

from __future__ import annotations

import os
import time

from keeper import __version__, jsonio
from keeper.store import claims, paths
from keeper.store.fsutil import MTIME_TICK_NS, settled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from keeper.store.stale import Judged, Reader, Row

    Verdict = tuple[str, str, str, str, int]  # an item's key, text, section, why, rank (``stale.Stale``)
    Taken = dict[str, "os.stat_result | None"]  # a full path's stat (None: nothing there)

FORMAT = 5  # raise it when the check's rules change within a version
MAX_CHANGES = 32  # lines of changes after the whole document before it is written whole again


def cache_file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.STALE_CACHE)


def key(project: paths.Project, text: str) -> dict[str, Any]:
    """What the verdicts on ``text`` (memory.md) rest on besides the files the check reads; taken
    before the check reads the record, so a save during the check is a miss."""
    from keeper.store.identity import sha256_hex

    try:
        found = os.stat(project.provenance)
        # Keeper replaces it: a new inode; an edit by hand that puts its time back moves the change time
        record = [found.st_mtime_ns, found.st_size, found.st_ino, found.st_ctime_ns]
    except (OSError, ValueError):
        record = [0, -1, 0, 0]
    return {
        "format": FORMAT,
        "version": __version__,
        "checkout": project.checkout,  # worktrees share one memory, not their files
        "text": sha256_hex(text.encode("utf-8", "surrogatepass")),
        "record": record,
    }


def _same_file(full: str, fact: list[Any], fresh: list[int], folders: Folders) -> bool:
    """Whether a file is as it was: the same size and time and no change since ``folders.since``, or
    the same bytes (then ``fresh`` gets its size and time now, for the kept verdicts to be stamped anew)."""
    if len(fact) != 4 or not isinstance(fact[3], str):
        return False
    try:
        stat = folders.taken[full] if full in folders.taken else os.stat(full)
    except (OSError, ValueError):
        stat = None
    if stat is None:
        return fact[3] == ""
    if [stat.st_size, stat.st_mtime_ns] == fact[1:3] and settled(stat.st_ctime_ns, folders.since):
        return True
    if fact[3] in ("", "?"):
        return False
    found = claims.opened(full)
    if found is None or found[2] is None or claims.digest(found[2]) != fact[3]:
        return False
    fresh += found[:2]
    return True


class Folders:
    """The folders of a check's inputs, each looked at once: whether it is the project's (its links
    followed) and which names it holds (one listing, not a stat a path); ``since``: the last
    check's ``looked``; ``taken``: stats of its files already taken by the caller since this check's
    ``looked`` (None: nothing there), not taken again."""

    def __init__(self, root: str, since: int, taken: Taken | None = None) -> None:
        self.root, self.since, self.taken = root, since, taken or {}
        self._full: dict[str, str | None] = {}
        self._names: dict[str, set[str]] = {}
        self.fresh: dict[str, list[int]] = {}  # files with the same bytes at another size or time

    def full(self, folder: str) -> str | None:
        if folder not in self._full:
            full = claims.confined(self.root, folder) if folder else self.root
            self._full[folder] = full if full is not None and claims.inside(self.root, full) else None
        return self._full[folder]

    def holds(self, folder: str, name: str, full: str) -> bool:
        if folder not in self._names:
            self._names[folder] = set(claims.listing(full))
        # a name in another case is there on a case-blind file system: asked of the file system
        return name in self._names[folder] or claims.present(os.path.join(full, name))


def _same(root: str, rel: object, fact: object, folders: Folders) -> bool:
    """Whether one input of the check is as it was."""
    if not isinstance(rel, str) or not isinstance(fact, list) or not fact:
        return False
    if fact[0] in ("e", "f"):
        folder, _, name = rel.rpartition("/")
        full = folders.full(folder)
        path = claims.confined(full, name) if full is not None else None
        if full is None or path is None:
            return False
        if fact[0] == "e":
            return len(fact) == 2 and folders.holds(folder, name, full) == fact[1]
        stamp: list[int] = []
        same = _same_file(path, fact, stamp, folders)
        if stamp:
            folders.fresh[rel] = stamp
        return same
    if fact == ["o"]:  # ``stale.OUTSIDE``: reached through a link out of the project, as it was while it still is
        return folders.full(rel.rpartition("/")[0]) is None
    if fact[0] == "d" and len(fact) == 2 and rel.endswith("/"):
        full = claims.confined(root, rel[:-1]) if rel != "/" else root
        names = claims.listing(full) if full is not None else []
        return bool(claims.digest("\n".join(names).encode("utf-8", "surrogatepass")) == fact[1])
    return False


def _verdict(row: object) -> Verdict | None:
    if not isinstance(row, list) or len(row) != 5 or not all(isinstance(v, str) for v in row[:4]):
        return None
    rank = row[4]
    return (row[0], row[1], row[2], row[3], rank) if isinstance(rank, int) and not isinstance(rank, bool) else None


class Kept:
    """What the last check left: its verdicts when they hold (else None), items' first lines ->
    keys, and its inputs and answers, which a full check takes for each file still as it was."""

    __slots__ = ("answers", "changed", "count", "file", "firsts", "inputs", "items", "looked", "stale", "verdicts")

    def __init__(self) -> None:
        self.verdicts: list[Verdict] | None = None
        self.firsts: dict[str, str] = {}
        self.inputs: dict[str, Any] = {}
        self.answers: dict[str, Any] = {}
        self.looked = 0  # the clock before the last check looked at its inputs (0: unknown, no file's time trusted)
        self.changed: set[str] | None = None  # when only files changed: those that did
        self.items: dict[str, tuple[list[str], Row | None]] = {}  # each item's inputs and verdict
        self.count = -1  # items the last check judged, in memory.md's order (two alike are one in ``items``)
        self.stale: dict[str, tuple[str, str]] = {}  # the text and section of each item it found stale
        self.file: OnDisk | None = None  # the file as read, for a change to be appended to it


class OnDisk:
    """The kept file as read: its document with the changes after it applied (``data``, as it was
    before anything used it), its size and inode, its document's size and time, and its lines of
    changes."""

    __slots__ = ("at", "changes", "data", "head", "inode", "size")

    def __init__(self, data: dict[str, Any], size: int, inode: int, head: str, changes: int) -> None:
        self.data, self.size, self.inode, self.changes = data, size, inode, changes
        self.head, self.at = len(head), data.get("at")


def _read(project: paths.Project) -> tuple[dict[str, Any], OnDisk | None]:
    """The kept document with its lines of changes applied (``{}``: none, or damaged), and the
    file as read (``OnDisk``)."""
    try:
        with open(cache_file(project), "rb") as fh:
            inode, raw = os.fstat(fh.fileno()).st_ino, fh.read()
        head, *lines = raw.decode("ascii").split("\n")  # jsonio writes ASCII
        kept = jsonio.loads(head)
        if not isinstance(kept, dict):
            return {}, None
        disk = OnDisk(kept, len(raw), inode, head, len(lines))
        offset = len(head)
        for line in lines:
            if not _apply(kept, jsonio.loads(line), offset, disk.at):
                return {}, None
            offset += 1 + len(line)
    except (OSError, ValueError, RecursionError):
        return {}, None
    kept = {**kept, "inputs": dict(kept["inputs"])} if isinstance(kept.get("inputs"), dict) else kept
    return kept, disk  # ``load`` stamps anew in its own copy of the inputs: ``disk.data`` stays as read


def _apply(kept: dict[str, Any], change: object, offset: int, at: object) -> bool:
    """Apply one line of changes (``_change``): False when it is damaged, was not written at
    ``offset`` right after the file's end as it was, or follows another document than the one of ``at``."""
    if not isinstance(change, dict) or change.get("after") != offset or change.get("of") != at:
        return False
    for name in ("inputs", "answers", "items"):
        part, whole = change.get(name, {}), kept.get(name)
        if not isinstance(part, dict) or not isinstance(whole, dict):
            return False
        for entry, value in part.items():
            if value is None and name == "answers":
                whole.pop(entry, None)
            elif entry in whole or name == "answers":  # inputs and items keep their places (items name inputs by it)
                whole[entry] = value
            else:
                return False
    kept.update((name, change[name]) for name in ("at", "looked", "verdicts", "count") if name in change)
    return True


def load(project: paths.Project, want: dict[str, Any], looked: int, taken: Taken | None = None) -> Kept:
    """The kept verdicts, in the check's order, when they were worked out from ``want`` (``key``),
    the clock has not gone back since and every input of the check holds the same; the inputs and
    answers of the same work tree whatever else changed. ``looked``: the clock before this start
    looked at any input (the files' new stamps are as of then); ``taken``: the stats of inputs
    taken since then already (``Folders``)."""
    found = Kept()
    kept, found.file = _read(project)
    inputs, answers, firsts, rows, since = (kept.get(k) for k in ("inputs", "answers", "firsts", "verdicts", "looked"))
    key = kept.get("key")
    if not (isinstance(key, dict) and key.get("checkout") == project.checkout and key.get("format") == FORMAT):
        return found
    if isinstance(inputs, dict) and isinstance(answers, dict):
        found.inputs, found.answers = inputs, answers
        found.looked = since if type(since) is int else 0
    if key != want or not (isinstance(inputs, dict) and isinstance(firsts, dict) and isinstance(rows, list)):
        return found
    at = kept.get("at")
    if type(at) is not int or time.time_ns() < at:  # a clock gone back: a save then counted may wait again
        return found
    if not all(isinstance(v, str) for v in firsts.values()):
        return found
    folders = Folders(project.checkout, found.looked, taken)
    changed = {rel for rel, fact in inputs.items() if not _same(project.checkout, rel, fact, folders)}
    for rel, (size, mtime_ns) in folders.fresh.items():  # the same bytes, read now: stamped anew
        inputs[rel] = ["f", size, -1 if mtime_ns > looked - MTIME_TICK_NS else mtime_ns, inputs[rel][3]]
    verdicts = [_verdict(row) for row in rows]
    if not changed and all(v is not None for v in verdicts):
        found.verdicts, found.firsts = [v for v in verdicts if v is not None], firsts
        if folders.fresh:  # every input looked at since ``looked``: the next start trusts what has not changed since
            kept["looked"] = looked
            _store(project, kept, found.file)
    elif changed:
        _partial(found, kept, changed, firsts)
    return found


def _partial(found: Kept, kept: dict[str, Any], changed: set[str], firsts: dict[str, str]) -> None:
    """What a check that judges again only the items resting on ``changed`` takes from the last."""
    items = kept.get("items")
    if not isinstance(items, dict):
        return
    names = list(found.inputs)
    for item_key, entry in items.items():
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list):
            row = _row(entry[1])
            deps = [names[i] for i in entry[0] if isinstance(i, int) and 0 <= i < len(names)]
            if (entry[1] is None or row is not None) and len(deps) == len(entry[0]):
                found.items[item_key] = (deps, row)
    found.changed, found.firsts = changed, firsts
    count, rows = kept.get("count"), kept.get("verdicts")
    found.count = count if type(count) is int else -1
    found.stale = {v[0]: (v[1], v[2]) for v in map(_verdict, rows if isinstance(rows, list) else []) if v}


def _row(row: object) -> Row | None:
    if not isinstance(row, list) or len(row) != 2 or not isinstance(row[0], str):
        return None
    rank = row[1]
    return (row[0], rank) if isinstance(rank, int) and not isinstance(rank, bool) else None


def save(
    project: paths.Project,
    want: dict[str, Any],
    reader: Reader,
    verdicts: list[Verdict],
    firsts: dict[str, str],
    judged: list[Judged],
    looked: int,
    before: OnDisk | None = None,
) -> None:
    """Keep the verdicts of a check of ``want`` (``key``) with what the check looked at and what
    each file said (``reader``), and each item's inputs and verdict (``judged``), unless the record
    is too young to trust. ``looked``: the clock before the check (and ``load``) looked at any input;
    ``before``: the file as ``load`` read it (``Kept.file``), to which what changed is appended."""
    young = looked - MTIME_TICK_NS
    if want["record"][0] > young:
        return
    facts = {rel: [*f[:2], -1, f[3]] if f[0] == "f" and f[2] > young else f for rel, f in reader.inputs.items()}
    answers = {rel: said for rel, said in reader.answers.items() if said and facts.get(rel, [""])[0] == "f"}
    data: dict[str, object] = {"key": want, "at": time.time_ns(), "looked": looked, "inputs": facts}
    data["answers"] = answers
    data["firsts"] = firsts
    data["verdicts"], data["count"] = [list(v) for v in verdicts], len(judged)
    index = {rel: at for at, rel in enumerate(facts)}  # an item's inputs by their place: a short file
    data["items"] = {
        k: [[index[d] for d in deps if d in index], list(why) if why else None] for k, _, _, deps, why in judged
    }
    _store(project, data, before)


def _store(project: paths.Project, data: dict[str, Any], before: OnDisk | None) -> None:
    """Keep ``data``: as a line of what changed since the file ``before`` was read, when that is
    all that changed (``_change``) and the file is still as read, else the whole file anew."""
    try:
        change = _change(data, before) if before is not None else None
        if change is None or before is None or not _append(project, change, before):
            _write(project, data)
    except RecursionError:  # a value of a file edited by hand, read but nested too deep to write back
        try:
            os.unlink(cache_file(project))  # dropped: the next start is a miss
        except OSError:
            pass


def _change(data: dict[str, Any], before: OnDisk) -> str | None:
    """The line that turns the file read into ``data`` (``_apply``), when the same memory and
    record were judged, the same inputs and items in the same order (items name inputs by place),
    and the file has room for it; else None."""
    kept = before.data
    if before.changes >= MAX_CHANGES or kept.get("key") != data["key"] or kept.get("firsts") != data["firsts"]:
        return None
    inputs, answers, items = (kept.get(k) for k in ("inputs", "answers", "items"))
    if not (isinstance(inputs, dict) and isinstance(answers, dict) and isinstance(items, dict)):
        return None
    if list(inputs) != list(data["inputs"]) or list(items) != list(data["items"]):
        return None
    change: dict[str, Any] = {"after": before.size, "of": before.at, "at": data["at"], "looked": data["looked"]}
    change["inputs"] = {rel: fact for rel, fact in data["inputs"].items() if inputs[rel] != fact}
    change["answers"] = {rel: said for rel, said in data["answers"].items() if answers.get(rel) != said}
    change["answers"].update((rel, None) for rel in answers if rel not in data["answers"])
    change["items"] = {k: entry for k, entry in data["items"].items() if items[k] != entry}
    change.update((k, data.get(k)) for k in ("verdicts", "count") if kept.get(k) != data.get(k))
    line = "\n" + jsonio.dumps(change)
    return line if 4 * (before.size + len(line)) < 5 * before.head else None


def _append(project: paths.Project, line: str, before: OnDisk) -> bool:
    """Append ``line`` to the file, when it is still the one ``before`` read (its inode and size)."""
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(cache_file(project), flags)
    except OSError:
        return False
    try:
        found = os.fstat(fd)
        if (found.st_ino, found.st_size) != (before.inode, before.size):
            return False
        return os.write(fd, line.encode("ascii")) == len(line)
    except OSError:
        return False
    finally:
        os.close(fd)


def _write(project: paths.Project, data: dict[str, Any]) -> None:
    path = cache_file(project)
    tmp = os.path.join(project.state, f".{paths.STALE_CACHE}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    text = jsonio.dumps(data).encode("utf-8", "surrogatepass")  # before the temporary file: none left if it raises
    try:
        with os.fdopen(os.open(tmp, flags, 0o600), "wb") as fh:  # private, like the memory it quotes
            fh.write(text)
        try:  # a new name, not a replaced file: on ext4 replacing one makes the rename start writeback
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
