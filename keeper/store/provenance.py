"""Where each memory item came from, what happened to it since, and whether it may be stale.

Beside memory.md (which never holds any of it) each memory folder keeps ``provenance.jsonl``: one
JSON object a line, one *event* of one item (``items.key``): ``added``, ``confirmed`` (saved again),
``echoed`` (saved again unchanged after Keeper had shown it in that session: not new evidence),
``edited`` (its text changed by hand), ``retired``, ``resolved``, ``restored``. An event names the
item's text and section, when, and the session that made it; once a save, a ``session`` line gives
that session's facts: the machine, the branch and commit where known, the session's file and
transcript, and the files the session had changed (relative to the project's root).

Events are facts that never change, so two records merge by the union of their lines (``merge``):
sync, import and a hand edit of memory.md that reorders items lose nothing, and an item is found
by its identity, never by its place. The record is durable (export and sync carry it), so it is
read as what it is, text from anyone: each line once, at the boundary (``checked``), into an event
whose every field is of its type and within its bound; a damaged line is skipped (and logged), an
event dated past this machine's clock is not acted on, and every reading is linear in the record.

Staleness needs no model and no git: an item whose evidence (the files its sessions changed, the
repository paths its text names) was changed after it, by mtime, or is gone, may be stale. The
check is bounded (``MAX_STATS``) and uses the standard library only: SessionStart runs it.
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
MAX_RECORD = 32 << 20  # and at most this many characters of them (50,000 events as Keeper writes them are far less)
MAX_STATS = 400  # file stats one staleness check may make, whatever the memory's size
MAX_FILES = 60  # changed files kept on one session line
MAX_SESSION_FILES = 10 * MAX_FILES  # changed files known of one session, whatever its saves
MAX_HISTORY = 64  # events of one item's history kept: its oldest and its newest
SKEW = 600.0  # seconds another machine's clock may run ahead of this one's
ID_CHARS = 8
_PUNCT = "`'\"()[]{}<>,;:!?*"
_DAY = 86400.0


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


# The one boundary: every field a line may hold, of its type and within its bound. A record
# arrives by import and sync from parties Keeper does not control, so a field of another type is
# dropped, a text is cut to its bound, and a line without its ``at``, ``event`` and ``item`` is
# skipped; whatever the line, reading it costs time linear in its length.
MAX_LINE = 256 << 10  # characters of one line: Keeper writes far less (one item's text, MAX_FILES paths)
MAX_TEXT = 16 << 10  # an item's text, key or former key
MAX_PATH = 1024  # one changed file's path
MAX_OTHER = 8  # fields of a later version kept on a line (scalars only), for the union to carry
FIELDS = {
    "at": 40,
    "event": 24,
    "item": MAX_TEXT,
    "text": MAX_TEXT,
    "from": MAX_TEXT,
    "section": 64,
    "why": 1000,
    "session": 256,
    "project": 256,
    "machine": 256,
    "branch": 256,
    "commit": 64,
    "record": 256,
    "transcript": MAX_PATH,
}  # every known field but ``files`` is a text


def _event(line: str) -> Event | None:
    line = line.strip()
    if not line.startswith("{") or len(line) > MAX_LINE:
        return None
    try:
        found = jsonio.loads(line)
    except (ValueError, RecursionError):
        return None
    return checked(found) if isinstance(found, dict) else None


def checked(found: dict[str, Any]) -> Event | None:
    """An event as the record may hold it, each field of its type and within its bound; None when
    it lacks a readable ``at`` (a date), ``event`` (a word) or ``item`` (an item's event names one)."""
    at, kind, item = found.get("at"), found.get("event"), found.get("item")
    if not (isinstance(at, str) and isinstance(kind, str) and isinstance(item, str)):
        return None
    if not (kind.isascii() and kind.isidentifier() and len(kind) <= FIELDS["event"]) or len(at) > FIELDS["at"]:
        return None
    if stamp_of(found) is None:
        return None  # not a date
    if kind != SESSION and not item:
        return None  # an item's event names no item
    if all(type(v) is str and len(v) <= FIELDS.get(k, -1) for k, v in found.items()):
        return found  # every field a known text within its bound: what Keeper writes
    event: Event = {}
    others = 0
    for name, value in found.items():
        if name == "files":
            if isinstance(value, list):
                event[name] = [f[:MAX_PATH] for f in value[:MAX_FILES] if isinstance(f, str) and f]
        elif name in FIELDS:
            if isinstance(value, str):
                event[name] = value[: FIELDS[name]]
        elif others < MAX_OTHER and len(name) <= 40 and (value is None or isinstance(value, (str, int, float))):
            event[name] = value[:MAX_PATH] if isinstance(value, str) else value
            others += 1
    return event


def parse(text: str | None) -> list[Event]:
    """The events a record's text holds, in order; a damaged line is skipped, a damaged field left out."""
    return [e for e in (_event(line) for line in (text or "").splitlines()) if e is not None]


def read(folder: str) -> list[Event]:
    """A folder's events as this machine may act on them: damaged lines skipped (and logged, once a
    read), events dated past this machine's clock (plus ``SKEW``) left for their time to come."""
    path = record_file(folder)
    try:
        with open(path, "rb") as fh:
            fh.seek(max(os.fstat(fh.fileno()).st_size - MAX_RECORD, 0))  # a larger one: its newest lines
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    events = [e for e in (_event(line) for line in lines) if e is not None]
    skipped = sum(1 for line in lines if line.strip()) - len(events)
    latest = time.time() + SKEW
    found = [e for e in events if (stamp_of(e) or 0.0) <= latest]
    if skipped or len(found) < len(events):
        from keeper.store import log

        ahead = len(events) - len(found)
        log.write("provenance", "WARNING", f"{path}: {skipped} damaged line(s) skipped, {ahead} dated ahead of now")
    return found


def _line(event: Event) -> str:
    return jsonio.dumps(dict(sorted(event.items())))


def merge(*texts: str | None) -> str:
    """Several records as one: the union of their events, oldest first, each once.

    Commutative, associative and idempotent, so every machine and every order of sync and import
    ends with the same bytes.
    """
    lines = {_line(e) for text in texts for e in parse(text)}
    kept: list[str] = []
    size = 0
    for line in reversed(sorted(lines)[-KEPT:]):  # keys sorted, "at" first: newest last
        size += len(line) + 1
        if size > MAX_RECORD:
            break
        kept.append(line + "\n")
    return "".join(reversed(kept))


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
    """Each item's events, oldest first; an item edited from another carries that one's events too.
    At most ``MAX_HISTORY`` each (the oldest and the newest), so the work is linear in the events,
    however long a chain of edits."""
    found: dict[str, list[Event]] = {}
    for event in events:
        if event["event"] == SESSION:
            continue
        before = event.get("from") if event["event"] == "edited" else None
        mine = found.setdefault(event["item"], [])
        if isinstance(before, str) and before in found and before != event["item"]:
            if mine:  # the item's own events so far are not carried twice (none in a chain of edits)
                held = {id(e) for e in mine}
                mine[:0] = [e for e in found[before] if id(e) not in held]
            else:
                mine[:0] = found[before]
        mine.append(event)
        if len(mine) > MAX_HISTORY:
            half = MAX_HISTORY // 2
            mine[half:] = mine[-half:]
    return found


def session_facts(events: Iterable[Event]) -> dict[str, Event]:
    """Each session's facts (machine, branch, commit, session file, transcript), newest last, and
    every file it changed by any of its saves (at most ``MAX_SESSION_FILES``)."""
    found: dict[str, Event] = {}
    files: dict[str, set[str]] = {}
    for event in events:
        if event["event"] != SESSION:
            continue
        name = str(event.get("session") or "")
        found.setdefault(name, {}).update(event)
        mine = files.setdefault(name, set())
        mine.update(event.get("files", ())[: max(MAX_SESSION_FILES - len(mine), 0)])
    for name, known in found.items():
        known["files"] = sorted(files[name])
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
    """Whether an item's newest removal or evidence is a removal (looked for from the newest)."""
    for event in reversed(history):
        if event["event"] in REMOVALS:
            return True
        if event["event"] in EVIDENCE:
            return False
    return False


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


def named_paths(text: str) -> list[str]:
    """Repository paths an item's text names: words with a ``/`` that are not URLs nor absolute,
    such as ``src/cache.py`` or ``docs/``; at most eight."""
    found: list[str] = []
    for word in text.split():
        word = word.strip(_PUNCT).rstrip(".")
        if "/" not in word or "://" in word or word.startswith(("/", "~", "$", "-", "\\")) or ".." in word.split("/"):
            continue
        if len(word) > 200 or not any(ch.isalnum() for ch in word):
            continue
        word = word.rstrip("/")
        if word and word not in found:
            found.append(word)
    return found[:8]


def _local(stamp: str) -> float | None:
    """``YYYY-MM-DD[THH:MM:SS]`` local time as seconds since the epoch; None for anything else.
    By hand: ``time.strptime`` imports ``re``, ``locale`` and ``calendar``, more than the whole check."""
    digits = [stamp[0:4], stamp[5:7], stamp[8:10], stamp[11:13] or "0", stamp[14:16] or "0", stamp[17:19] or "0"]
    if not all(part.isdigit() and part.isascii() for part in digits) or stamp[4:5] != "-" or stamp[7:8] != "-":
        return None
    year, month, day, hour, minute, second = (int(part) for part in digits)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 62):
        return None
    try:
        return time.mktime((year, month, day, hour, minute, second, 0, 0, -1))
    except (ValueError, OverflowError):
        return None


_STAMPS: dict[str, float | None] = {}  # the events of one save share their time: each is worked out once


def stamp_of(event: Event) -> float | None:
    """An event's time as seconds since the epoch (local time, as it was written)."""
    at = str(event["at"])
    if at not in _STAMPS:
        _STAMPS[at] = _local(at)
    return _STAMPS[at]


def day_stamp(day: str | None) -> float | None:
    """The end of the day of a memory.md date suffix: an item dated that day saw that day's files."""
    start = _local(day[:10]) if day else None
    return start + _DAY if start is not None else None


def _gap(seconds: float) -> str:
    """``3 days after this``, ``2 hours after this``, ``5 minutes after this``, ``4 seconds after this``."""
    for unit, size in (("day", _DAY), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} after this"
    count = max(int(seconds), 0)
    return f"{count} second{'s' if count != 1 else ''} after this"


class Checker:
    """Stats files for staleness checks, each path once, at most ``MAX_STATS`` in all; ``stats`` and
    ``asked`` say what its answers rest on (``keeper.store.verdicts`` keeps them)."""

    def __init__(self, root: str, state_dir: str = "", limit: int = MAX_STATS, live: Iterable[str] = ()) -> None:
        self.root, self.state_dir, self.limit = root, state_dir, limit
        self.live = set(live)  # sessions still running (the one a compact or resume starts again)
        self.stats: dict[str, int | None] = {}  # every path stat'ed (the top folder: listed) -> mtime_ns or None
        self.asked: set[str] = set()  # the sessions whose end was looked up
        self._seen: dict[str, float | None] = {}
        self._ends: dict[str, float] = {}
        self._top: set[str] | None = None
        self._changes: dict[tuple[tuple[str, ...], float | None], tuple[dict[str, float], list[str]]] = {}

    def mtime(self, rel: str) -> float | bool | None:
        """The file's mtime; None when it is gone; False when the budget is spent (unknown)."""
        if rel in self._seen:
            return self._seen[rel]
        if len(self._seen) >= self.limit:
            return False
        found = self._stat(os.path.join(self.root, rel))
        self._seen[rel] = found
        return found

    def _stat(self, path: str) -> float | None:
        try:
            got = os.stat(path)
        except (OSError, ValueError):
            self.stats[path] = None
            return None
        self.stats[path] = got.st_mtime_ns
        return got.st_mtime

    def changes(
        self, ids: tuple[str, ...], since: float | None, sessions: dict[str, Event]
    ) -> tuple[dict[str, float], list[str]]:
        """The files the sessions ``ids`` changed that changed after ``since`` (with their mtimes)
        and those that are gone; worked out once for every item the same sessions saved together."""
        memo = (ids, since)
        if memo not in self._changes:
            changed: dict[str, float] = {}
            gone: list[str] = []
            for rel in sorted({f for s in ids for f in sessions.get(s, {}).get("files", [])}):
                found = self.mtime(rel)
                if found is False:
                    break
                if found is None:
                    gone.append(rel)
                elif since is not None and isinstance(found, float) and found > since:
                    changed[rel] = found
            self._changes[memo] = (changed, gone)
        return self._changes[memo]

    def in_repository(self, rel: str) -> bool:
        """Whether a named path's first folder is one of the root's (``src/x.py`` when ``src`` exists)."""
        if self._top is None:
            self._stat(self.root)  # before listing it: an entry added meanwhile changes what is kept
            try:
                self._top = set(os.listdir(self.root))
            except OSError:
                self._top = set()
        return rel.split("/", 1)[0] in self._top

    def session_end(self, session: str) -> float:
        """When a session of this machine ended (its end marker): what it changed itself is no news.
        A session still live (``live``: the one a compact, resume or clear starts again) has not
        ended: every change so far may be its own work (infinity). An open marker alone is not
        enough: a session killed without a Stop keeps one forever."""
        if not session or session in self._ends:
            return self._ends.get(session, 0.0)
        self.asked.add(session)
        if session in self.live:
            self._ends[session] = float("inf")
            return self._ends[session]
        if not self.state_dir:
            return 0.0
        self._ends[session] = self._stat(os.path.join(self.state_dir, paths.SESSION_STATE, session + ".end")) or 0.0
        return self._ends[session]


def evidence(history: list[Event]) -> tuple[float | None, tuple[str, ...], str]:
    """An item's newest evidence time, the sessions of all its evidence, and the newest one's session."""
    found = [e for e in history if e["event"] in EVIDENCE]
    if not found:
        return None, (), ""
    ids = tuple(sorted({str(e.get("session") or "") for e in found} - {""}))
    return stamp_of(found[-1]), ids, str(found[-1].get("session") or "")


def stale_reason(
    text: str, day: str | None, history: list[Event], check: Checker, sessions: dict[str, Event]
) -> tuple[str, float] | None:
    """Why an item may be stale (``"src/cache.py changed 2026-11-23, 3 days after this"``) and when
    the newest change was; None when nothing it rests on changed since, or nothing is known.
    ``sessions``: each session's facts (``session_facts``), the files it changed among them."""
    since, ids, session = evidence(history)
    since = since if since is not None else day_stamp(day)
    changed, gone = check.changes(ids, since, sessions)
    for rel in named_paths(text) if "/" in text else ():
        if rel in changed or rel in gone or not check.in_repository(rel):
            continue
        found = check.mtime(rel)
        if found is None:
            gone = [*gone, rel]
        elif since is not None and isinstance(found, float) and found > since:
            changed = {**changed, rel: found}
    if changed and session:
        ended = check.session_end(session)  # the saving session's own later edits are not news
        changed = {rel: m for rel, m in changed.items() if m > ended + 60}
    if gone:
        what = ", ".join(gone[:2]) + (f" and {len(gone) - 2} more" if len(gone) > 2 else "")
        saved = f" on {time.strftime('%Y-%m-%d', time.localtime(since))}" if since is not None else ""
        return (
            f"{what} {'is' if len(gone) == 1 else 'are'} gone (renamed or deleted) since this was saved{saved}",
            time.time(),
        )
    if changed and since is not None:
        newest, rel = max((m, rel) for rel, m in changed.items())
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        on = time.strftime("%Y-%m-%d", time.localtime(newest))
        return f"{rel}{more} changed {on}, {_gap(newest - since)}", newest
    return None


class Stale:
    """An item that may be stale: its text, its section, why, and when the newest change was."""

    __slots__ = ("key", "reason", "section", "text", "when")

    def __init__(self, key: str, text: str, section: str, reason: str, when: float) -> None:
        self.key, self.text, self.section, self.reason, self.when = key, text, section, reason, when

    def as_dict(self) -> dict[str, str]:
        return {"id": item_id(self.key), "text": self.text, "section": self.section, "reason": self.reason}


def stale_items(
    project: paths.Project,
    text: str | None,
    firsts: dict[str, str] | None = None,
    live: Iterable[str] = (),
    keep: bool = False,
) -> list[Stale]:
    """The items of ``text`` (the project's memory.md) that may be stale, newest change first
    (``firsts``: see ``listed``; ``live``: sessions still running, whose own edits are no news;
    ``keep``: take the verdicts of an earlier check while nothing they rest on changed, and keep
    these for the next one: ``keeper.store.verdicts``, for SessionStart)."""
    if not text:
        return []
    live = set(live)
    firsts = {} if firsts is None else firsts
    if keep:
        from keeper.store import verdicts

        want = verdicts.key(project, text)  # before reading the record
        kept = verdicts.load(project, want, live)
        if kept is not None:
            firsts.update(kept[1])
            return [Stale(*row) for row in kept[0]]
    events = read(project.dir)
    history, sessions = by_item(events), session_facts(events)
    check = Checker(project.checkout, project.state, live=live)
    found: list[Stale] = []
    for section, item_key, item, day in listed(text, firsts):
        mine = history.get(item_key, [])
        if not mine and "/" not in item:
            continue  # nothing known it rests on
        why = stale_reason(item, day, mine, check, sessions)
        if why is not None:
            found.append(Stale(item_key, item, section, why[0], why[1]))
    found.sort(key=lambda s: -s.when)
    if keep:
        rows = [(s.key, s.text, s.section, s.reason, s.when) for s in found]
        verdicts.save(project, want, live, check.asked, check.stats, rows, firsts)
    return found
