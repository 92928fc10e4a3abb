"""The record of removals that travels with sync: what was removed (or brought back) and when.

A removal is a recorded fact, never an absence: ``keeper sync`` merges this record between
machines and removes, on every machine, what it says is removed (each machine moving its own copy
to its trash). Each project folder (and the global one) keeps its view in
``state/removals.json`` (``paths.REMOVALS``), and the sync repository carries the same record
beside the project's memory.md. It holds two maps, ``sessions`` and ``items`` (an item's
``items.key``), each entry ``[stamp, removed]``: the newest stamp wins, so a ``keeper restore``
(``removed`` false) made after a clear undoes it everywhere, and a later removal undoes the restore.

A session file is named in ``sessions`` twice: by its name in the repository (``2026-11-24_0930@a1b2c3.md``,
what records made before 0.5 hold alone) and by its text (``text_key``: ``text:<size>:<sha256>``), the one
identity of a session whichever road brought it (``keeper.exchange.sessions``). The second covers a
copy of the same session that reached another machine by an archive under another name: by name
alone, that copy came back to every machine after a clear. Both are plain entries of the same map,
so a Keeper that knows only names carries the text entries along untouched.

The stamp is an ISO time in UTC to the microsecond, read at the boundary (``parse``): one past this
machine's clock plus ``SKEW`` (a hostile entry dated 9999, a clock that runs ahead) reads as now, so
it can never outrank every later restore. Entries older than ``KEEP_DAYS`` are dropped
when the record is written (by then every machine syncing has seen them, or will join with the
remote's files, which no longer hold what they name).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

from keeper import records
from keeper.store import paths
from keeper.store.fsutil import atomic_write, read_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

KINDS = ("sessions", "items")
KEEP_DAYS = 400
MAX_ENTRIES = 50_000

Entry = tuple[str, bool]  # (stamp, removed): written as a two-element JSON list


class Record(records.Record):
    """The removals one folder knows of: ``sessions`` (a session file's name in the repository,
    or its ``text_key``) and ``items`` (an item's ``items.key``), each name -> ``(stamp, removed)``."""

    __slots__ = ("items", "sessions")

    def __init__(self, sessions: dict[str, Entry] | None = None, items: dict[str, Entry] | None = None) -> None:
        self.sessions: dict[str, Entry] = sessions if sessions is not None else {}
        self.items: dict[str, Entry] = items if items is not None else {}

    def of(self, kind: str) -> dict[str, Entry]:
        """The entries of one of ``KINDS``."""
        return self.sessions if kind == "sessions" else self.items


STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"
SKEW = timedelta(minutes=10)  # how far another machine's clock may run ahead of this one's
MAX_NAME = 16 << 10  # an item's key or a session file's name
MAX_BYTES = 64 << 20  # a record larger than this is no record of Keeper's


def now() -> str:
    return datetime.now(timezone.utc).strftime(STAMP)


def empty() -> Record:
    return Record()


def _stamp(value: object, latest: str, today: str) -> str | None:
    """A stamp as this machine may trust it: ``YYYY-MM-DDTHH:MM:SS…`` in UTC; one past ``latest``
    (this machine's clock plus ``SKEW``) is read as ``today`` (now), so an entry dated 9999 cannot
    outrank every later restore; None for anything else (``"zzz"`` sorts after every date)."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    digits = (value[0:4], value[5:7], value[8:10], value[11:13], value[14:16], value[17:19])
    if not all(len(d) == 2 or len(d) == 4 for d in digits) or not all(d.isascii() and d.isdigit() for d in digits):
        return None
    if value[4] + value[7] + value[10] + value[13] + value[16] != "--T::":
        return None
    return value if value <= latest else today


def parse(data: object) -> Record:
    """A record from JSON data, any malformed entry left out and every stamp bounded by this
    machine's clock (what arrives is not trusted); at most ``MAX_ENTRIES`` of each kind, the newest."""
    record = empty()
    if not isinstance(data, dict):
        return record
    clock = datetime.now(timezone.utc)
    latest, today = (clock + SKEW).strftime(STAMP), clock.strftime(STAMP)
    for kind in KINDS:
        found = data.get(kind)
        if not isinstance(found, dict):
            continue
        entries = record.of(kind)
        for name, entry in found.items():
            if isinstance(name, str) and 0 < len(name) <= MAX_NAME and isinstance(entry, list) and len(entry) == 2:
                stamp = _stamp(entry[0], latest, today)
                if stamp is not None and isinstance(entry[1], bool):
                    entries[name] = (stamp, entry[1])
        if len(entries) > MAX_ENTRIES:
            kept = sorted(entries.items(), key=lambda pair: (pair[1][0], pair[0]))[-MAX_ENTRIES:]
            entries.clear()
            entries.update(kept)
    return record


def loads(data: bytes | None) -> Record:
    if not data or len(data) > MAX_BYTES:
        return empty()
    try:
        return parse(json.loads(data.decode("utf-8")))
    except (ValueError, UnicodeDecodeError, RecursionError):  # a damaged or hostile remote's record holds nothing
        return empty()


def dumps(record: Record) -> bytes:
    """Sorted and bounded, so the same record is always the same bytes (the same blob)."""
    cutoff = (datetime.now(timezone.utc) - timedelta(days=KEEP_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
    out: dict[str, dict[str, Entry]] = {}
    for kind in KINDS:
        entries = sorted(
            ((n, e) for n, e in record.of(kind).items() if e[0] >= cutoff),
            key=lambda pair: (pair[1][0], pair[0]),
        )[-MAX_ENTRIES:]
        out[kind] = dict(sorted(entries))
    return (json.dumps(out, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode("utf-8")


def merge(*records: Record) -> Record:
    """Every entry, the newest stamp winning (a removal on a tie: nothing comes back by a draw)."""
    out = empty()
    for record in records:
        for kind in KINDS:
            mine = out.of(kind)
            for name, entry in record.of(kind).items():
                have = mine.get(name)
                if have is None or entry > have:
                    mine[name] = entry
    return out


def removed(record: Record, kind: str) -> set[str]:
    return {name for name, entry in record.of(kind).items() if entry[1]}


TEXT = "text:"  # a session's entry by its text (never a file name: those end in .md)


def text_key(data: bytes) -> str:
    """A session file's entry by its text (its bytes as a store or the repository holds them):
    ``text:<size>:<sha256>``, the size first so that a file of another size is never hashed."""
    import hashlib

    return f"{TEXT}{len(data)}:{hashlib.sha256(data).hexdigest()}"


def texts_removed(record: Record) -> set[str]:
    """The session texts ``record`` says are removed, by ``text_key``, and each one's size prefix
    (``text:<size>:``) for ``holds_text``."""
    found = {name for name in removed(record, "sessions") if name.startswith(TEXT)}
    return found | {name[: name.find(":", len(TEXT)) + 1] for name in found}


def holds_text(texts: set[str], data: bytes) -> bool:
    """Whether ``data`` is one of ``texts`` (``texts_removed``): hashed only when one has its size."""
    return f"{TEXT}{len(data)}:" in texts and text_key(data) in texts


def items_gone(record: Record, retired: dict[str, str]) -> set[str]:
    """The items removed by either record: this record's (what arrived by sync or was noted here)
    and ``retired`` (``state/removed.json``, key -> the day this machine retired or resolved it),
    the newer of the two winning as sync merges them: a retirement here counts unless the record
    brought the item back on that day or later."""
    gone = removed(record, "items")
    for key, day in retired.items():
        entry = record.items.get(key)
        if entry is None or entry[1] or entry[0][:10] < day:
            gone.add(key)
    return gone


class Removed(records.Record):
    """What this machine retired or resolved (``state/removed.json``, ``paths.REMOVED``): ``keys``,
    an item's ``items.key`` -> the day it went, oldest first. Machine-local, it never travels:
    ``items_gone`` weighs it against the record that does."""

    __slots__ = ("keys",)

    def __init__(self, keys: dict[str, str] | None = None) -> None:
        self.keys: dict[str, str] = keys if keys is not None else {}

    @classmethod
    def parse(cls, data: object) -> Removed:
        """The record in a JSON value as read; any other shape holds nothing. A key written before
        the key folded punctuation inside an item is read as today's key."""
        from keeper.memory.items import key

        found = data.get("keys") if isinstance(data, dict) else None
        if not isinstance(found, dict):
            return cls()
        clock = datetime.now(timezone.utc)
        latest, today = (clock + timedelta(days=1)).strftime("%Y-%m-%d"), clock.strftime("%Y-%m-%d")  # local days
        days = {k: _stamp(f"{v}T00:00:00", latest, today) for k, v in list(found.items())[-MAX_ENTRIES:]}
        return cls({key(k): day[:10] for k, day in days.items() if day and len(k) <= MAX_NAME})

    def dump(self) -> str:
        return json.dumps({"keys": self.keys}, ensure_ascii=False)


def retired(folder: str) -> dict[str, str]:
    """What this machine retired or resolved in a memory folder (``Removed``): key -> the day."""
    return Removed.parse(read_json(os.path.join(folder, paths.STATE_DIR, paths.REMOVED))).keys


def path_of(folder: str) -> str:
    return os.path.join(folder, paths.STATE_DIR, paths.REMOVALS)


def read(folder: str) -> Record:
    return parse(read_json(path_of(folder)))


def write(folder: str, record: Record) -> None:
    atomic_write(path_of(folder), dumps(record).decode("utf-8"))


def machine() -> str | None:
    """This machine's id in sync (the suffix its session files carry in the repository), or None
    when no remote is recorded: then there is nobody to tell and nothing is recorded."""
    try:
        found = read_json(paths.sync_file()).get("machine")
    except OSError:
        return None
    return found if isinstance(found, str) and found else None


def tree_name(name: str, machine_id: str) -> str:
    """A session file's name in the repository: its maker's machine id added once."""
    stem = name[:-3]
    return name if "@" in stem else f"{stem}@{machine_id}.md"


def note(folder: str, sessions: Mapping[str, bytes | None], items: list[str], removed_now: bool) -> None:
    """Record, for a store with a sync remote, that these session files (their file names here:
    their bytes, None when unread) and items (by key) were removed (or brought back) now: each session file by its
    name in the repository and by its text, so a copy of it under any name goes too. Call under
    the project lock."""
    machine_id = machine()
    if machine_id is None or not (sessions or items):
        return
    stamp = now()
    record = read(folder)
    for name, data in sessions.items():
        record.sessions[tree_name(name, machine_id)] = (stamp, removed_now)
        if data is not None:
            record.sessions[text_key(data)] = (stamp, removed_now)
    for item in items:
        record.items[item] = (stamp, removed_now)
    write(folder, record)
