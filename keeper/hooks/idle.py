"""A Stop with nothing new since the last record, known from a few stats: the record's machinery
(``keeper.capture``: the transcript reader, the redactor, provenance) is not even imported.

Stop fires after every reply, and most replies after the first change nothing the session file
holds. Bringing the record up to date (``keeper.capture.record.update``) is idempotent: with the same
inputs it writes nothing. So when a Stop's update found nothing to write, its inputs are kept as a
key, ``state/sessions/<session>.idle``: the tally's size, the reply's digest, the transcript
named and every file the update reads or that says the record changed, each by its (mtime, size,
inode). A later Stop whose key is the same would find nothing to write either, and skips it.

Never stale: the key is taken *before* the update that proved it idle, so a write that came
during or after that update changes a stamp the next Stop compares. Anything the key cannot
see (no transcript named, an end marker to clear) gives no key, and the update runs as before.

The plugin's launcher goes further (``launcher/stop.bash``, docs/counter.md): when it passed a
Stop on and Keeper found it idle with nothing to ask, ``Launcher.vouch`` writes what that decision
rested on in a form bash can check with builtins alone (the reply as the payload spells it, the
tally's size, each file older than the record and of the mtime Keeper saw, the settings' bytes),
and the same Stop again is answered without Python. The record is dated from before Keeper read
anything, as the counter's allowance (``keeper.hooks.allowance``), so nothing written since can
pass; whatever Keeper does not vouch for, it withdraws.
"""

from __future__ import annotations

import os
import stat
import sys

from keeper.store import fsutil, identity, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    from keeper.hooks.entry import Event
    from keeper.store.resolve import Resolved

    P = TypeVar("P", bound="Passed")

TAG = "keeper-idle 1"
LAUNCHER_TAG = "keeper-stop 1"
MAX_REPLY = 60 << 10  # bytes of a reply the launcher's record may hold (the launcher reads payloads under 64 KiB)


class Key:
    """What a Stop's update rests on: ``text`` to keep and compare, and the stats it was made of
    (each watched file's ``os.stat_result``, or None where there is none) for the launcher's record."""

    __slots__ = ("stats", "text")

    def __init__(self, text: str, stats: list[tuple[str, os.stat_result | None]]) -> None:
        self.text, self.stats = text, stats


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None


def _stamp(found: os.stat_result | None) -> str:
    """A file's (mtime, size, inode), "-" when there is none."""
    return "-" if found is None else f"{found.st_mtime_ns}:{found.st_size}:{found.st_ino}"


def watched(project: paths.Project, session: str, transcript: str) -> list[str]:
    """The files whose stats the key holds: the transcript first, then the session's own files, its
    session file (``sessions/`` itself before it has one: other sessions' files leave it alone)."""
    files = [project.session_file(session, kind) for kind in ("json", "start", "shown", "receipts")]
    name = fsutil.read_json(files[0]).get("file") if os.path.exists(files[0]) else None
    own = project.sessions
    if isinstance(name, str) and name.endswith(".md") and os.path.basename(name) == name and "\\" not in name:
        own = os.path.join(project.sessions, name)
    return [transcript, *files, own, project.memory]


def stop_key(project: paths.Project, session: str, seen: bytes, reply: str, transcript: str) -> Key | None:
    """What a Stop's update rests on, or None where it cannot be told from stats alone."""
    if not transcript.endswith(".jsonl") or "\n" in transcript:
        return None  # the update would look for another (the state's, the start marker's)
    if os.path.exists(project.session_file(session, "end")):
        return None  # the update clears it: a session thought over turns out alive
    if not os.path.exists(os.path.join(project.state, paths.OPEN_SESSIONS, session)) and os.path.isdir(
        os.path.join(project.state, paths.OPEN_SESSIONS)
    ):
        return None  # the update marks it open again
    stats = [(path, _stat(path)) for path in watched(project, session, transcript)]
    held = stats[0][1]
    if held is None or not stat.S_ISREG(held.st_mode):
        return None  # the update would look for another transcript
    digest = identity.sha256_hex(reply.encode("utf-8", "surrogatepass"))[:16] if reply.strip() else ""
    stamps = " ".join(_stamp(found) for _, found in stats)
    # the tally's size, not only its counts: the launcher's record can compare a size, and a tally only grows
    return Key(f"{TAG}\n{len(seen)} {digest} {stamps}\n{transcript}\n", stats)


def unchanged(project: paths.Project, session: str, key: Key) -> bool:
    """Whether the last idle Stop of this session rested on exactly ``key``."""
    try:
        with open(project.session_file(session, "idle"), encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read(len(key.text) + 1) == key.text
    except (OSError, ValueError):
        return False


def remember(project: paths.Project, session: str, key: Key) -> None:
    """Keep ``key``: an update that rested on it found nothing to write."""
    from keeper.store.fsutil import atomic_write

    try:
        atomic_write(project.session_file(session, "idle"), key.text)
    except (OSError, ValueError):
        pass  # only a shortcut: the next Stop runs the update and tries again


class Passed:
    """What ``bin/keeper`` passed along when it called Keeper for a hook it could not answer itself:
    where its record goes (``VARIABLE``) and its key; nothing otherwise. Each launcher answer's
    record (the Stop's here, the prompt's in ``quietprompt``) is written by a subclass's ``vouch``."""

    __slots__ = ("key", "record")
    VARIABLE = ""

    def __init__(self, record: str, key: str) -> None:
        self.record, self.key = record, key

    @classmethod
    def take(cls: type[P]) -> P:
        """Read and remove the launcher's variables: nothing Keeper starts inherits them."""
        return cls(os.environ.pop(cls.VARIABLE, ""), os.environ.pop("KEEPER_LAUNCHER_KEY", ""))

    def withdraw(self) -> None:
        """Remove the launcher's record (and its twins) for a hook Keeper does not vouch for."""
        if self.record and os.path.isabs(self.record):
            for path in [*twins_of(self.record), self.record]:
                remove(path)


class Launcher(Passed):
    """The launcher's record for a Stop (``launcher/stop.bash``)."""

    __slots__ = ()
    VARIABLE = "KEEPER_LAUNCHER_STOP"

    def vouch(self, at: Resolved, key: Key, seen: bytes, reply: str, event: Event, started: float) -> None:
        """Write the launcher's record for a Stop found idle whose reply is ``{}``: the next Stop with
        this payload's reply, this tally and these files unchanged is answered without Python
        (``launcher/stop.bash`` reads it; docs/counter.md writes it down). ``started``: before any
        setting was read, as the allowance is dated."""
        if not self.record or not os.path.isabs(self.record) or not self.key:
            return
        from _json import encode_basestring

        from keeper.hooks import allowance
        from keeper.store import counters

        if not allowance.names_its_folder(event.cwd):  # the key would not name the project
            self.withdraw()
            return
        transcript = event.transcript_path

        try:  # reply and transcript as Claude Code's JSON spells them (JSON.stringify: ", \\ and controls escaped)
            said, named = (str(encode_basestring(text))[1:-1].encode("utf-8") for text in (reply, transcript))
            lines = [os.fsencode(LAUNCHER_TAG), os.fsencode(self.key), named, said]
            lines += [os.fsencode(line) for line in (_tally_of(at), str(len(seen)))]
            lines += [os.fsencode(line) for line in (counters.hook_log_path(at.project.state), sys.executable)]
            settings = allowance.settings_lines(allowance.watched_files(at))
            files = _files(at, key)
        except (UnicodeError, ValueError):  # a lone surrogate in the reply, a name no file system holds
            return
        if settings is None or len(said) > MAX_REPLY or any(c in line for line in lines for c in b"\n\r\x00"):
            return
        earlier = twins_of(self.record)
        try:
            os.makedirs(os.path.dirname(self.record), exist_ok=True)
        except OSError:
            return
        twins = file_lines(self.record, [(path, None if found is None else found.st_mtime_ns) for path, found in files])
        if twins is None:
            return
        body = b"".join(line + b"\n" for line in lines) + settings + twins + b"end\n"
        allowance.write_record(self.record, body, started - allowance.CLOCK_SLACK)
        for path in earlier:
            remove(path)


def _tally_of(at: Resolved) -> str:
    return at.project.session_file(at.session, "tally")


def _files(at: Resolved, key: Key) -> list[tuple[str, os.stat_result | None]]:
    """Every file the launcher checks beyond the settings: the key's, then what ``entry.handle``
    and ``stop_key`` look at (the end marker, a session's start where 0.3 kept it, its open marker)."""
    project, session = at.project, at.session
    opened = os.path.join(project.state, paths.OPEN_SESSIONS, session)
    found = _stat(opened)
    marker = (opened, found) if found is not None else (os.path.dirname(opened), None)
    absent = [project.session_file(session, "end"), os.path.join(project.state, f"{session}.start")]
    return [*key.stats, marker, *((path, None) for path in absent)]


def file_lines(record: str, files: list[tuple[str, int | None]]) -> bytes | None:
    """The record's file lines: ``+<file>`` and ``@<twin>`` (a file of this name's mtime, to the
    nanosecond, given here as Keeper read it: a file replaced by an older one differs) for one that
    exists, ``-<file>`` for one that does not (None); the twins made now, under names of this record
    alone. None when one cannot be. Shared by the prompt's record (``keeper.hooks.quietprompt``)."""
    if any(mtime is not None and mtime % 1_000_000_000 == 0 for _, mtime in files):
        return None  # a file system that dates to the second: a write just after this read keeps the mtime
    out: list[bytes] = []
    nonce = os.urandom(4).hex()
    for i, (path, mtime) in enumerate(files):
        name = os.fsencode(path)
        if b"\n" in name or b"\r" in name:
            return None
        if mtime is None:
            out.append(b"-" + name + b"\n")
            continue
        twin = f"{record}.{nonce}.{i}"
        try:
            with open(twin, "wb"):
                pass
            os.utime(twin, ns=(mtime, mtime))
        except OSError:
            return None
        out += [b"+" + name + b"\n", b"@" + os.fsencode(twin) + b"\n"]
    return b"".join(out)


def twins_of(record: str) -> list[str]:
    """The twins the record names now (removed once it is replaced)."""
    try:
        with open(record, "rb") as fh:
            text = fh.read()
    except OSError:
        return []
    prefix = os.fsencode(record) + b"."
    return [os.fsdecode(line[1:]) for line in text.split(b"\n") if line.startswith(b"@" + prefix)]


def remove(path: str) -> None:
    """Remove a record or twin if it is there."""
    try:
        os.unlink(path)
    except OSError:
        pass
