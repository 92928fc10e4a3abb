"""Where each memory item came from and what happened to it since: the provenance record.

Beside memory.md (which never holds any of it) each memory folder keeps ``provenance.jsonl``: one
JSON object a line, one *event* of one item (``items.key``): ``added``, ``confirmed`` (saved again),
``echoed`` (saved again unchanged after Keeper had shown it in that session: not new evidence),
``edited`` (its text changed by hand), ``retired``, ``resolved``, ``restored``, and ``used`` (a
session Keeper showed it to drew on it: a use receipt, ``keeper.capture.receipts``, which names
where the use was seen; never evidence). An event names the
item's text and section, when, and the session that made it; once a save, a ``session`` line gives
that session's facts: the machine, the branch and commit where known, the session's file and
transcript, and the files the session had changed (relative to the project's root).

Events are facts that never change, so two records merge by the union of their lines (``merge``):
sync, import and a hand edit of memory.md that reorders items lose nothing, and an item is found
by its identity, never by its place. The record is durable (export and sync carry it), so it is
read as what it is, text from anyone: each line once, at the boundary (``checked``), into an event
whose every field is of its type and within its bound; a damaged line is skipped (and logged), an
event dated past this machine's clock is not acted on, and every reading is linear in the record.

An item's evidence events carry what its text claims about the code (``claims``, see
``keeper.store.claims``) and a session's line the lines it wrote (``wrote``); whether those still
hold is ``keeper.store.stale``'s to judge, by content.
"""

from __future__ import annotations

import os
import time

from keeper import jsonio
from keeper.store import claims, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from keeper.markdown import Document

SESSION = "session"  # not an item's event: the facts of the session that saved (one line per save)
EVIDENCE = ("added", "confirmed", "edited", "restored")  # events that date what an item rests on
REMOVALS = ("retired", "resolved")
USED = "used"  # a use receipt: kept apart from an item's history (``uses``), so receipts never crowd it
MAX_USES = 32  # receipts of one item kept by ``uses``: the newest
KEPT = 50_000  # newest events a record keeps
MAX_RECORD = 32 << 20  # and at most this many characters of them (50,000 events as Keeper writes them are far less)
MAX_FILES = 60  # changed files kept on one session line
MAX_SESSION_FILES = 10 * MAX_FILES  # changed files known of one session, whatever its saves
MAX_HISTORY = 64  # events of one item's history kept: its oldest and its newest
SKEW = 600.0  # seconds another machine's clock may run ahead of this one's
ID_CHARS = 8


def record_file(folder: str) -> str:
    """The provenance record of a memory folder (a project's, or the global one)."""
    return os.path.join(folder, paths.PROVENANCE_FILE)


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
    "where": 64,
}  # every known field but ``files`` is a text


def _texts(value: object, count: int, size: int) -> list[str]:
    """At most ``count`` non-empty texts of a list, each cut to ``size``."""
    return [v[:size] for v in value[:count] if isinstance(v, str) and v] if isinstance(value, list) else []


def _claims(value: object) -> list[dict[str, Any]]:
    """An item's claims about the code (``keeper.store.claims``), each of its shape and bounds."""
    found: list[dict[str, Any]] = []
    for claim in value[: claims.MAX_CLAIMS] if isinstance(value, list) else ():
        if not isinstance(claim, dict) or claim.get("kind") not in claims.KINDS:
            continue
        name, want = claim.get("name"), claim.get("value")
        if isinstance(name, str) and name:
            kept: dict[str, Any] = {"kind": claim["kind"], "name": name[: claims.MAX_NAME]}
            if isinstance(want, str):
                kept["value"] = want[: claims.MAX_NAME]
            kept["in"] = _texts(claim.get("in"), claims.MAX_IN, MAX_PATH)
            if claim.get("defined") is True:
                kept["defined"] = True
            found.append(kept)
    return found


def _wrote(value: object) -> dict[str, list[str]]:
    """A session's written-lines fingerprints: file -> line hashes, bounded."""
    if not isinstance(value, dict):
        return {}
    files = [(k, v) for k, v in value.items() if isinstance(k, str) and k][:MAX_FILES]
    return {k[:MAX_PATH]: _texts(v, claims.LINES_KEPT, 32) for k, v in files}


SHAPED = {"claims": _claims, "wrote": _wrote}  # the fields that are not texts, each with its reader


class Event:
    """One event of a record, as read at the boundary (``parse``, ``read``): immutable, every field
    of its type and within its bound, None where the line has none. Only this module makes one (from
    a line ``checked`` accepted), so a reader never meets a field of another type. ``kind`` is the
    line's ``event``, ``before`` its ``from`` (an edited item's former key)."""

    __slots__ = ("_line",)
    _line: dict[str, Any]

    @classmethod
    def _of(cls, line: dict[str, Any]) -> Event:
        event = object.__new__(cls)
        object.__setattr__(event, "_line", line)  # the checked line, held by this event alone
        return event

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a provenance event is read as it is, never changed")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self._line == other._line

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Event({self._line!r})"

    def as_dict(self) -> dict[str, Any]:
        """The event as its line holds it (what ``--json`` shows and the record writes): a copy."""
        found = dict(self._line)
        for name in ("files", "claims"):
            if name in found:
                found[name] = list(found[name])
        return found

    @property
    def at(self) -> str:
        return self._line["at"]  # type: ignore[no-any-return]

    @property
    def kind(self) -> str:
        return self._line["event"]  # type: ignore[no-any-return]

    @property
    def item(self) -> str:
        return self._line["item"]  # type: ignore[no-any-return]

    @property
    def text(self) -> str | None:
        return self._line.get("text")

    @property
    def before(self) -> str | None:
        """An edited item's former key (the line's ``from``)."""
        return self._line.get("from")

    @property
    def section(self) -> str | None:
        return self._line.get("section")

    @property
    def why(self) -> str | None:
        return self._line.get("why")

    @property
    def session(self) -> str | None:
        return self._line.get("session")

    @property
    def project(self) -> str | None:
        return self._line.get("project")

    @property
    def machine(self) -> str | None:
        return self._line.get("machine")

    @property
    def branch(self) -> str | None:
        return self._line.get("branch")

    @property
    def commit(self) -> str | None:
        return self._line.get("commit")

    @property
    def record(self) -> str | None:
        return self._line.get("record")

    @property
    def transcript(self) -> str | None:
        return self._line.get("transcript")

    @property
    def where(self) -> str | None:
        return self._line.get("where")

    @property
    def files(self) -> tuple[str, ...]:
        """The files a session changed (paths in its project)."""
        return tuple(self._line.get("files", ()))

    @property
    def claims(self) -> tuple[dict[str, Any], ...] | None:
        """What an item's text claims about the code (``keeper.store.claims``); None for evidence
        saved before Keeper noted claims (or that arrived without them)."""
        found = self._line.get("claims")
        return None if found is None else tuple(found)

    @property
    def wrote(self) -> dict[str, list[str]]:
        """A session's written-lines fingerprints: file -> line hashes."""
        return dict(self._line.get("wrote") or {})


def _event(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{") or len(line) > MAX_LINE:
        return None
    try:
        found = jsonio.loads(line)
    except (ValueError, RecursionError):
        return None
    return checked(found) if isinstance(found, dict) else None


def checked(found: dict[str, Any]) -> dict[str, Any] | None:
    """An event as the record may hold it, each field of its type and within its bound; None when
    it lacks a readable ``at`` (a date), ``event`` (a word) or ``item`` (an item's event names one).
    The line as data, for the union of records; readers get it as an ``Event``."""
    at, kind, item = found.get("at"), found.get("event"), found.get("item")
    if not (isinstance(at, str) and isinstance(kind, str) and isinstance(item, str)):
        return None
    if not (kind.isascii() and kind.isidentifier() and len(kind) <= FIELDS["event"]) or len(at) > FIELDS["at"]:
        return None
    if _when(at) is None:
        return None  # not a date
    if kind != SESSION and not item:
        return None  # an item's event names no item
    if all(type(v) is str and len(v) <= FIELDS.get(k, -1) for k, v in found.items()):
        return found  # every field a known text within its bound: what Keeper writes
    event: dict[str, Any] = {}
    others = 0
    for name, value in found.items():
        if name == "files":
            if isinstance(value, list):
                event[name] = [f[:MAX_PATH] for f in value[:MAX_FILES] if isinstance(f, str) and f]
        elif name in SHAPED:
            event[name] = SHAPED[name](value)
        elif name in FIELDS:
            if isinstance(value, str):
                event[name] = value[: FIELDS[name]]
        elif (
            others < MAX_OTHER
            and len(name) <= 40
            and (value is None or isinstance(value, (str, int, float)))
            and name != "others"
        ):
            event[name] = value[:MAX_PATH] if isinstance(value, str) else value
            others += 1
    return event


def _checked_lines(text: str | None) -> list[dict[str, Any]]:
    return [e for e in (_event(line) for line in (text or "").splitlines()) if e is not None]


def parse(text: str | None) -> list[Event]:
    """The events a record's text holds, in order; a damaged line is skipped, a damaged field left out."""
    return [Event._of(e) for e in _checked_lines(text)]


def read(folder: str, items: set[str] | None = None, later: list[Event] | None = None) -> list[Event]:
    """A folder's events as this machine may act on them: damaged lines skipped (and logged, once a
    read), events dated past this machine's clock (plus ``SKEW``) left for their time to come
    (``later`` gets them: what is worked out without them holds only until then).

    With ``items``, only what ``by_item`` and ``session_facts`` need for those (``_about``): every
    session's facts and the items' events, with those of the items they were edited from."""
    path = record_file(folder)
    try:
        with open(path, "rb") as fh:
            fh.seek(max(os.fstat(fh.fileno()).st_size - MAX_RECORD, 0))  # a larger one: its newest lines
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    if items is not None:
        lines = _about(lines, set(items))
    events = [Event._of(e) for e in (_event(line) for line in lines) if e is not None]
    skipped = sum(1 for line in lines if line.strip()) - len(events)
    latest = time.time() + SKEW
    found = [e for e in events if (_when(e.at) or 0.0) <= latest]
    if later is not None and len(found) < len(events):
        later += [e for e in events if (_when(e.at) or 0.0) > latest]
    if skipped or len(found) < len(events):
        from keeper.store import log

        ahead = len(events) - len(found)
        log.write("provenance", "WARNING", f"{path}: {skipped} damaged line(s) skipped, {ahead} dated ahead of now")
    return found


def _about(lines: list[str], items: set[str]) -> list[str]:
    """The lines, in order, that may hold a session's facts or an event of one of ``items`` or of an
    item one of them was edited from (followed until no new one turns up). A JSON text without a
    backslash holds each of its strings literally, so a line that names none of them, holds no
    ``"session"`` as a value and no backslash holds none of those events: it is left unparsed. In a
    JSON text a string followed by ``": "`` is a key: a line whose every ``"session"`` is one, as
    Keeper writes them, is told without looking for a colon before each."""
    name, as_key = '"session"', '"session": '
    chosen = {
        i
        for i, line in enumerate(lines)
        if "\\" in line or (line.count(name) != line.count(as_key) and _valued(line, name))
    }
    fresh, looked = set(chosen), set()
    while items:
        looked |= items
        fresh |= {i for k in items for i, line in enumerate(lines) if k in line} - chosen
        chosen |= fresh
        edits = (_event(lines[i]) for i in fresh)
        items = {f for e in edits if e is not None and isinstance(f := e.get("from"), str)} - looked
        fresh = set()
    return [lines[i] for i in sorted(chosen)]


def _valued(line: str, text: str) -> bool:
    """Whether ``text`` occurs in a JSON line as a value (after a colon), not only as a key."""
    at = line.find(text)
    while at >= 0:
        if line[:at].rstrip().endswith(":"):
            return True
        at = line.find(text, at + 1)
    return False


def _line(event: dict[str, Any]) -> str:
    return jsonio.dumps(dict(sorted(event.items())))


def merge(*texts: str | None) -> str:
    """Several records as one: the union of their events, oldest first, each once.

    Commutative, associative and idempotent, so every machine and every order of sync and import
    ends with the same bytes.
    """
    lines = {_line(e) for text in texts for e in _checked_lines(text)}
    kept: list[str] = []
    size = 0
    for line in reversed(sorted(lines)[-KEPT:]):  # keys sorted, "at" first: newest last
        size += len(line) + 1
        if size > MAX_RECORD:
            break
        kept.append(line + "\n")
    return "".join(reversed(kept))


def arrived(before: str | None, after: str) -> list[Event]:
    """The events of ``after`` (a record merged with one that arrived) that ``before`` did not hold,
    as this machine may act on them (none dated past its clock): what a landing brought new, once."""
    had = set((before or "").splitlines())
    latest = time.time() + SKEW
    fresh = (_event(line) for line in after.splitlines() if line not in had)
    return [Event._of(e) for e in fresh if e is not None and (_when(e["at"]) or 0.0) <= latest]


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


def append(folder: str, events: list[dict[str, Any]], patterns: Iterable[str] = ()) -> None:
    """Add events to a folder's record (call under the folder's lock), redacted with ``patterns``
    (and the built-in rules): every text Keeper writes passes through ``redact`` first.

    The bytes are always ``merge(current, new)``'s; when the record is as Keeper last wrote it and
    the new lines sort after its last, they are appended (``_extend``) instead of parsing, sorting
    and rewriting the whole record at every save and Stop."""
    if not events:
        return
    from keeper import redact
    from keeper.store.fsutil import atomic_write, ensure_dir, read_text

    ensure_dir(folder)
    clean = [redact.redact_values(e, patterns) for e in events]
    lines = "".join(_line(e) + "\n" for e in clean if isinstance(e, dict))  # a dict stays a dict
    if _extend(folder, sorted({_line(e) for e in _checked_lines(lines)})):  # each line as merge would write it
        return
    merged = merge(read_text(record_file(folder), exact=True), lines)
    atomic_write(record_file(folder), merged)
    if max(map(len, merged.split("\n"))) <= MAX_LINE:  # else a next merge skips a line: not its output
        atomic_write(_seal_file(folder), _seal(merged.encode("utf-8")), durable=False)


def _seal_file(folder: str) -> str:
    return os.path.join(folder, paths.STATE_DIR, paths.RECORD_SEAL)


def _seal(data: bytes, digest: Any = None) -> str:
    """What the seal holds for a record ``merge`` made (or ``_extend`` grew): this version (another may
    write its lines otherwise), its size and its BLAKE2b (``digest``: one running over ``data``).
    Derived from the bytes, so it never goes stale: a hand edit, sync, import, an older Keeper or a
    torn append leaves bytes it does not match."""
    from keeper import __version__

    return f"{__version__} {len(data)} {(digest or _digest(data)).hexdigest()}\n"


def _digest(data: bytes) -> Any:
    """A running BLAKE2b of ``data``: the builtin module (hashlib would load OpenSSL, ~12 ms a hook),
    twice as fast here as its SHA-256."""
    try:
        from _blake2 import blake2b
    except ImportError:  # a Python built without it
        from hashlib import blake2b
    return blake2b(data)


def _extend(folder: str, fresh: list[str]) -> bool:
    """Add ``fresh`` (sorted, unique, each as ``_line`` writes it) to the record when that gives
    ``merge``'s bytes without parsing it, and say whether it did: the record matches its seal (so it
    is merge's output: sorted, unique, canonical lines, ending with a newline) and every fresh line
    sorts after its last (merge sorts by the line, "at" first: an older event takes the full merge).
    The lines are appended, flushed and fsynced before the seal moves (a torn append leaves a record
    its seal does not match, which the next call merges, skipping the torn line); a record at
    ``KEPT`` or ``MAX_RECORD`` loses its oldest lines, as merge cuts it, in one rewrite."""
    from keeper.store.fsutil import atomic_write, open_append, read_text

    seal = read_text(_seal_file(folder))
    if seal is None or not fresh or len(fresh) > KEPT or max(map(len, fresh)) > MAX_LINE:
        return False  # a line a next read would skip: the seal promises a record that is its own merge
    added = "".join(line + "\n" for line in fresh).encode("ascii")  # jsonio writes ASCII
    if len(added) > MAX_RECORD:
        return False
    with os.fdopen(open_append(record_file(folder), readable=True), "rb+") as fh:
        data = fh.read()
        last = data[data.rfind(b"\n", 0, -1) + 1 : -1]  # b"" for an empty record
        if data and last >= added[: added.index(b"\n")]:
            return False
        digest = _digest(data)
        if seal != _seal(data, digest):
            return False
        cut = _cut(data, len(fresh), len(added))
        if not cut:
            fh.write(added)
            fh.flush()
            os.fsync(fh.fileno())
            digest.update(added)
    data = data[cut:] + added
    if cut:
        atomic_write(record_file(folder), data)
    atomic_write(_seal_file(folder), _seal(data, None if cut else digest), durable=False)
    return True


def _cut(data: bytes, lines: int, size: int) -> int:
    """Where ``merge``'s bounds cut a record's oldest lines when ``lines`` newer lines of ``size``
    bytes follow them: the newest ``KEPT`` lines, then the newest of those within ``MAX_RECORD``."""
    cut = 0
    for _ in range(data.count(b"\n") + lines - KEPT):
        cut = data.index(b"\n", cut) + 1
    while len(data) - cut + size > MAX_RECORD:
        cut = data.index(b"\n", cut) + 1
    return cut


def by_item(events: Iterable[Event]) -> dict[str, list[Event]]:
    """Each item's events, oldest first; an item edited from another carries that one's events too.
    At most ``MAX_HISTORY`` each (the oldest and the newest), so the work is linear in the events,
    however long a chain of edits."""
    found: dict[str, list[Event]] = {}
    for event in events:
        if event.kind in (SESSION, USED):
            continue
        before = event.before if event.kind == "edited" else None
        mine = found.setdefault(event.item, [])
        if before is not None and before in found and before != event.item:
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


def uses(events: Iterable[Event]) -> dict[str, list[Event]]:
    """Each item's use receipts, oldest first (at most ``MAX_USES``, the newest)."""
    found: dict[str, list[Event]] = {}
    for event in events:
        if event.kind == USED:
            mine = found.setdefault(event.item, [])
            mine.append(event)
            if len(mine) > 2 * MAX_USES:
                del mine[:MAX_USES]
    return {item: mine[-MAX_USES:] for item, mine in found.items()}


def session_facts(events: Iterable[Event]) -> dict[str, Event]:
    """Each session's facts (machine, branch, commit, session file, transcript), newest last, and
    every file it changed by any of its saves (at most ``MAX_SESSION_FILES``)."""
    found: dict[str, dict[str, Any]] = {}
    files: dict[str, set[str]] = {}
    for event in events:
        if event.kind != SESSION:
            continue
        name = event.session or ""
        found.setdefault(name, {}).update(event.as_dict())
        mine = files.setdefault(name, set())
        mine.update(event.files[: max(MAX_SESSION_FILES - len(mine), 0)])
    return {name: Event._of({**known, "files": sorted(files[name])}) for name, known in found.items()}


def described(event: Event | None, sessions: dict[str, Event]) -> Event | None:
    """An item's event with its session's facts (``keeper why``'s origin)."""
    if event is None:
        return None
    facts = sessions.get(event.session or "")
    if facts is None:
        return event
    mine = {k: v for k, v in facts.as_dict().items() if k not in ("at", "event", "item")}
    return Event._of({**mine, **event.as_dict()})


CHECKED = ("decisions", "issues", "feedback", "user", "tool", "reference")  # the sections of items


def listed(text: str | Document, firsts: dict[str, str] | None = None) -> list[tuple[str, str, str, str | None]]:
    """``(section, key, text, date)`` of every item of memory.md's item sections, in file order;
    ``firsts`` gets each item's first line (as markdown shows it) -> key. ``text`` may come parsed."""
    from keeper.markdown import Document, bare
    from keeper.memory import document
    from keeper.memory.items import key

    doc = Document.parse(text.lstrip("\ufeff")) if isinstance(text, str) else text
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
    return next((e for e in history if e.kind in EVIDENCE), history[0] if history else None)


def is_removed(history: list[Event]) -> bool:
    """Whether an item's newest removal or evidence is a removal (looked for from the newest)."""
    for event in reversed(history):
        if event.kind in REMOVALS:
            return True
        if event.kind in EVIDENCE:
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


def _when(at: str) -> float | None:
    if at not in _STAMPS:
        _STAMPS[at] = _local(at)
    return _STAMPS[at]


def stamp_of(event: Event) -> float | None:
    """An event's time as seconds since the epoch (by its UTC offset, else as local time)."""
    return _when(event.at)


def shown_at(event: Event) -> str:
    """An event's time as this machine's local ``YYYY-MM-DD HH:MM``: a save made in Tokyo shows in
    Los Angeles at the hour it was there."""
    when = stamp_of(event)
    if when is None:
        return event.at.replace("T", " ")[:16]
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
