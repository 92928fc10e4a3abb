"""Where each memory item came from and what happened to it since: the provenance record.

Beside memory.md (which never holds any of it) each memory folder keeps ``provenance.jsonl``: one
JSON object a line, one *event* of one item (``items.key``): ``added``, ``confirmed`` (saved again),
``echoed`` (saved again unchanged after Keeper had shown it in that session: not new evidence),
``edited`` (its text changed by hand), ``retired``, ``resolved``, ``restored``. An event names the
item's text and section, when, and the session that made it; once a save, a ``session`` line gives
that session's facts: the machine, the branch and commit where known, the session's file and
transcript, and the files the session had changed (relative to the project's root).

Events are facts that never change, so two records merge by the union of their lines (``merge``):
sync, import and a hand edit of memory.md that reorders items lose nothing, and an item is found
by its identity, never by its place. The record is durable (export and sync carry it).

An item's evidence events carry what its text claims about the code (``claims``, see
``keeper.store.claims``) and a session's line the lines it wrote (``wrote``); whether those still
hold is ``keeper.store.stale``'s to judge, by content.
"""

from __future__ import annotations

import os
import time

from keeper import jsonio
from keeper.store import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    Event = dict[str, Any]

SESSION = "session"  # not an item's event: the facts of the session that saved (one line per save)
EVIDENCE = ("added", "confirmed", "edited", "restored")  # events that date what an item rests on
REMOVALS = ("retired", "resolved")
KEPT = 50_000  # newest events a record keeps
MAX_FILES = 60  # changed files kept on one session line
ID_CHARS = 8


def record_file(folder: str) -> str:
    """The provenance record of a memory folder (a project's, or the global one)."""
    return os.path.join(folder, paths.PROVENANCE_FILE)


def shown_file(project: paths.Project, session: str) -> str:
    """The ids of the items a session's start-up context showed (machine-local, derived): a save
    that only restates one of them is an echo."""
    return project.session_file(session, "shown")


def shown_id(item_key: str) -> str:
    """An item's id in the list of items shown at a session's start: its ``item_id`` (SHA-256 from
    the builtin module, which the start has loaded already: ~1 µs an item, where ``zlib`` took
    0.2 ms to import)."""
    return item_id(item_key)


def item_id(item_key: str) -> str:
    """A short, stable id for an item: the first hex digits of its key's SHA-256."""
    from keeper.store.identity import sha256_hex  # without loading OpenSSL

    return sha256_hex(item_key.encode("utf-8", "surrogatepass"))[:ID_CHARS]


def _event(line: str) -> Event | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        found = jsonio.loads(line)
    except (ValueError, RecursionError):
        return None
    ok = isinstance(found, dict) and isinstance(found.get("item"), str) and isinstance(found.get("at"), str)
    return found if ok and isinstance(found.get("event"), str) else None


def parse(text: str | None) -> list[Event]:
    """The events a record's text holds, in order; a damaged line is skipped."""
    return [e for e in (_event(line) for line in (text or "").splitlines()) if e is not None]


def read(folder: str) -> list[Event]:
    try:
        with open(record_file(folder), encoding="utf-8", errors="replace") as fh:
            return parse(fh.read())
    except OSError:
        return []


def _line(event: Event) -> str:
    return jsonio.dumps(dict(sorted(event.items())))


def merge(*texts: str | None) -> str:
    """Several records as one: the union of their events, oldest first, each once.

    Commutative, associative and idempotent, so every machine and every order of sync and import
    ends with the same bytes.
    """
    lines = {_line(e) for text in texts for e in parse(text)}
    ordered = sorted(lines)  # keys sorted, "at" first: oldest first
    return "".join(line + "\n" for line in ordered[-KEPT:])


def is_record(path: str) -> bool:
    """Whether a store or repository path (``/``-separated) is a provenance record."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] == paths.PROVENANCE_FILE


def merge_bytes(ours: bytes | None, theirs: bytes | None, patterns: Iterable[str] = ()) -> bytes:
    """``merge`` for records as bytes (what sync's repository holds), redacted with ``patterns``:
    what leaves is redacted, the other side's lines included."""
    from keeper import redact

    text = merge(*(d.decode("utf-8", "replace") for d in (ours, theirs) if d is not None))
    return merge(redact.redact(text, patterns)).encode("utf-8")


def take(source: str, target: str) -> None:
    """Move a folder's record into another memory folder, merged with the record it may hold."""
    from keeper.store.fsutil import atomic_write, read_text

    there = record_file(source)
    text = read_text(there, exact=True)
    if text is not None:
        atomic_write(record_file(target), merge(text, read_text(record_file(target), exact=True)))
        os.unlink(there)


def append(folder: str, events: list[Event], patterns: Iterable[str] = ()) -> None:
    """Add events to a folder's record (call under the folder's lock), redacted with ``patterns``
    (and the built-in rules): every text Keeper writes passes through ``redact`` first."""
    if not events:
        return
    from keeper import redact
    from keeper.store.fsutil import atomic_write, ensure_dir, read_text

    ensure_dir(folder)
    current = read_text(record_file(folder), exact=True)
    clean = [redact.redact_values(e, patterns) for e in events]
    lines = "".join(_line(e) + "\n" for e in clean if isinstance(e, dict))  # a dict stays a dict
    atomic_write(record_file(folder), merge(current, lines))


def by_item(events: Iterable[Event]) -> dict[str, list[Event]]:
    """Each item's events, oldest first; an item edited from another carries that one's events too."""
    found: dict[str, list[Event]] = {}
    for event in events:
        if event["event"] == SESSION:
            continue
        before = event.get("from") if event["event"] == "edited" else None
        mine = found.setdefault(event["item"], [])
        if isinstance(before, str) and before in found and before != event["item"]:
            mine[:0] = [e for e in found[before] if e not in mine]
        mine.append(event)
    return found


def session_facts(events: Iterable[Event]) -> dict[str, Event]:
    """Each session's facts (machine, branch, commit, session file, transcript), newest last, and
    every file it changed by any of its saves."""
    found: dict[str, Event] = {}
    for event in events:
        if event["event"] != SESSION:
            continue
        known = found.setdefault(str(event.get("session") or ""), {})
        files = {f for f in [*known.get("files", []), *(event.get("files") or [])] if isinstance(f, str)}
        known.update(event)
        known["files"] = sorted(files)
    return found


def described(event: Event | None, sessions: dict[str, Event]) -> Event | None:
    """An item's event with its session's facts (``keeper why``'s origin)."""
    if event is None:
        return None
    facts = {
        k: v for k, v in sessions.get(str(event.get("session") or ""), {}).items() if k not in ("at", "event", "item")
    }
    return {**facts, **event}


CHECKED = ("decisions", "issues", "feedback", "user", "tool", "reference")  # the sections of items


def listed(text: str, firsts: dict[str, str] | None = None) -> list[tuple[str, str, str, str | None]]:
    """``(section, key, text, date)`` of every item of memory.md's item sections, in file order;
    ``firsts`` gets each item's first line (as markdown shows it) -> key."""
    from keeper.markdown import Document, bare
    from keeper.memory import document
    from keeper.memory.items import key

    doc = Document.parse(text.lstrip("\ufeff"))
    found: list[tuple[str, str, str, str | None]] = []
    for name in CHECKED:
        section = doc.find(document.SECTIONS[name][1])
        if section is None:
            continue
        for index, _ in section.bullets():
            lines = section.lines[index : section.item_span(index)]
            item = document.item_text(lines)
            found.append((name, key(item), item, document.date_of_item(lines)))
            if firsts is not None:
                firsts.setdefault(bare(lines[0]).rstrip("\r\n"), found[-1][1])
    return found


def origin(history: list[Event]) -> Event | None:
    """The event an item came from: its first ``added`` (or ``restored``, ``edited``), else its first."""
    return next((e for e in history if e["event"] in EVIDENCE), history[0] if history else None)


def is_removed(history: list[Event]) -> bool:
    last = [e for e in history if e["event"] in (*REMOVALS, *EVIDENCE)]
    return bool(last) and last[-1]["event"] in REMOVALS


def relative_files(files: Iterable[str], root: str) -> list[str]:
    """Changed files as paths inside ``root`` (``/``-separated, portable); others are left out."""
    found: list[str] = []
    top = os.path.abspath(root)
    for path in files:
        full = os.path.abspath(os.path.join(top, path))
        try:
            inside = os.path.commonpath([full, top]) == top and full != top
        except ValueError:
            inside = False
        if inside:
            found.append(os.path.relpath(full, top).replace(os.sep, "/"))
    return sorted(set(found))[:MAX_FILES]


def _local(stamp: str) -> float | None:
    """``YYYY-MM-DD[THH:MM:SS[.ffffff][+HH:MM|Z]]`` as seconds since the epoch: by its UTC offset when
    it carries one (events from 0.5 on), else as local time (as 0.4 wrote them); None for anything
    else. By hand: ``time.strptime`` imports ``re``, ``locale`` and ``calendar``, more than the whole check."""
    digits = [stamp[0:4], stamp[5:7], stamp[8:10], stamp[11:13] or "0", stamp[14:16] or "0", stamp[17:19] or "0"]
    if not all(part.isdigit() and part.isascii() for part in digits) or stamp[4:5] != "-" or stamp[7:8] != "-":
        return None
    year, month, day, hour, minute, second = (int(part) for part in digits)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 62):
        return None
    offset = _offset(stamp[19:].lstrip(".0123456789"))
    if offset is not None:
        return float(_days(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset)
    try:
        return time.mktime((year, month, day, hour, minute, second, 0, 0, -1))
    except (ValueError, OverflowError):
        return None


def _offset(tail: str) -> int | None:
    """``+09:00``, ``-08:00`` or ``Z`` in seconds east of UTC; None when a stamp carries none."""
    if tail == "Z":
        return 0
    hours, minutes = tail[1:3], tail[4:6]
    if len(tail) != 6 or tail[0] not in "+-" or tail[3] != ":" or not (hours + minutes).isdigit():
        return None
    return (1 if tail[0] == "+" else -1) * (int(hours) * 3600 + int(minutes) * 60)


def _days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a date of the proleptic Gregorian calendar (without ``calendar``)."""
    year -= month <= 2
    era = year // 400
    within = year - era * 400
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + within * 365 + within // 4 - within // 100 + of_year - 719468


_STAMPS: dict[str, float | None] = {}  # the events of one save share their time: each is worked out once


def stamp_of(event: Event) -> float | None:
    """An event's time as seconds since the epoch (by its UTC offset, else as local time)."""
    at = str(event.get("at"))
    if at not in _STAMPS:
        _STAMPS[at] = _local(at)
    return _STAMPS[at]


def shown_at(event: Event) -> str:
    """An event's time as this machine's local ``YYYY-MM-DD HH:MM``: a save made in Tokyo shows in
    Los Angeles at the hour it was there."""
    when = stamp_of(event)
    if when is None:
        return str(event.get("at", "")).replace("T", " ")[:16]
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
