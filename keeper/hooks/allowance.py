"""The launchers' allowance: how many more tool uses they may count without Python, per session.

PostToolUse runs on every tool use, and in almost every call there is nothing to decide. So the
launchers (``bin/keeper`` with ``launcher/count.bash``, and ``bin/keeper.exe``) answer it
themselves while no save request can be due, and Keeper stays the one owner of the rules: each
time it handles a PostToolUse it writes, for that session, the most the launcher may count
before it must call Keeper again.

Where the files live. The launcher cannot know the project, so it keeps nothing of its own beyond
this record: ``$CLAUDE_PLUGIN_DATA/counter/<session id>`` (a session id of 1-64 letters, digits,
``_`` and ``-`` only, so it is the file-safe id Keeper uses too). The record names Keeper's own
tally for the session (``keeper.store.counters``); the launcher appends its one byte ``u`` there
with ``O_APPEND``, exactly as Keeper would, so there is nothing to fold back: the log, the session
file and ``keeper status`` are the same as without the launcher. The launcher tells Keeper where
the record goes and what to key it by through the environment of the call that falls through:
``KEEPER_COUNTER`` (the record's path), ``KEEPER_COUNTER_KEY`` (the launcher's key, below) and
``KEEPER_COUNTED`` (the tally it already appended this use to, when it did).

The record, one field a line::

    keeper-allowance 1
    <key>            the launcher's own key: the payload's cwd and the environment that chooses
                     the store and the settings (KEEPER_*, HOME, XDG_*, CLAUDE_PROJECT_DIR)
    <limit>          the largest tally size, in bytes, after its own append, at which the launcher
                     may answer {} itself
    <tally>          the tally to append to
    <hook log>       the project's hook log (one line per call, for ``keeper status``)
    <python>         the interpreter Keeper ran on: the launcher requires it still there, so an
                     environment that is gone (an update, a set-up under way) sends every call to Keeper
    +<file>          a settings file that existed: the launcher requires it still older than the record
    =<size>          and (the line after) the <size> bytes Keeper read from it, then a line break: the
                     launcher requires it to hold those bytes still (a file replaced by one with an
                     older mtime, as ``mv``, ``cp -p`` and ``rsync -a`` leave it, differs in its bytes)
    -<file>          a settings file that did not: the launcher requires it still absent
                     (the last ``+<file>`` is Keeper's own ``__init__.py``, its version: see ``watched_files``)
    end

Every line is written as the file system's bytes (``os.fsencode``): a store under a folder whose name
is not UTF-8 gets its allowance like any other.

Why a stale or foreign record can never hold back a due save request:

- The limit is an upper bound Keeper computed from the session's real tally and its settings at
  that moment: with ``n`` tool uses since the last save or request, the next ``save_every - n - 1``
  uses cannot make a request due, and each byte appended since (a use, a save, a prompt, a
  request) is at most one use, while a save or a request only puts the next one further off. So
  a launcher that finds its own byte within the limit knows no request is due; one that does not
  (the limit reached, or bytes of hooks finishing together) calls Keeper, which decides under the
  tally's lock (``counters.Locked``) so that exactly one of them asks.
- The record holds only while everything that chose the tally and the settings is unchanged: the
  key (another cwd, another ``KEEPER_SAVE_EVERY`` or ``KEEPER_HOME``, another ``CLAUDE_PROJECT_DIR``
  means another key) and every settings file Keeper read (edited, replaced, created or removed
  since the record was written means the launcher calls Keeper; the record is dated from before
  Keeper read them, so an edit made while it did counts as one made after, and it holds their bytes,
  so a file put back with an older mtime is seen too). A record that is missing, damaged,
  unfinished (no ``end``), of another format, or that names a tally that is gone or a link, is no
  allowance at all.
- The launcher counts only a plain PostToolUse or PostToolUseFailure: a session id it can use as
  it is, no subagent, nothing that could be ``keeper save``, a payload it read whole. Everything
  else comes here, as before.

What it does not watch: a repository created, or a ``.claude/keeper.yaml`` added in a folder
between the working directory and the repository's top, under a running session; Keeper notices
when it next runs for the session, at most ``save_every`` tool uses later.

Records of ended sessions are removed when Keeper writes a session's first record and finds them
older than a week.
"""

from __future__ import annotations

import os
import sys
import time

from keeper.store import config, counters, paths

FORMAT = "keeper-allowance 1"
KNOWN_MARKS = frozenset(b"ukrsfp")
STALE_SECONDS = 7 * 24 * 3600
# The record is dated from before Keeper read the settings, less a file system's coarse clock tick:
# a settings file edited after they were read is never older than the record.
CLOCK_SLACK = 0.05
MAX_SETTINGS = 16 << 10  # bytes of one settings file the record may hold; a longer one: Keeper counts every use

TYPE_CHECKING = False
if TYPE_CHECKING:
    from keeper.store.resolve import Resolved


class Handoff:
    """What the launcher passed along when it called Keeper for a PostToolUse (nothing otherwise)."""

    __slots__ = ("counted", "key", "record")

    def __init__(self, record: str, key: str, counted: str) -> None:
        self.record, self.key, self.counted = record, key, counted

    @classmethod
    def take(cls) -> Handoff:
        """Read and remove the launcher's variables: nothing Keeper starts inherits them."""
        found = [os.environ.pop(name, "") for name in ("KEEPER_COUNTER", "KEEPER_COUNTER_KEY", "KEEPER_COUNTED")]
        return cls(*found)

    def grant(self, log: bytes, at: Resolved, tally: str, read_at: float, cwd: str) -> None:
        """Write the session's record from the tally as it stands (call under the tally's lock), for
        the settings read at ``read_at`` (``time.time()``) or later, and the payload's ``cwd``."""
        if not self.record or not os.path.isabs(self.record):
            return
        if not names_its_folder(cwd):
            _remove(self.record)
            return
        limit = len(log) + counters.uses_until_reminder(log, at.cfg.save_every) - 1
        head = [FORMAT, self.key, str(limit), tally, counters.hook_log_path(at.project.state), sys.executable]
        try:
            lines = [os.fsencode(line) for line in head]  # a name as the file system holds it, UTF-8 or not
            settings = settings_lines(watched_files(at))
        except ValueError:  # a name no file system could hold
            settings = None
        if settings is None or not set(log) <= KNOWN_MARKS or any(c in line for line in lines for c in b"\n\r\x00"):
            _remove(self.record)  # a damaged tally, or a name a line cannot hold: Keeper counts every use
            return
        write_record(self.record, b"".join(line + b"\n" for line in lines) + settings + b"end\n", read_at - CLOCK_SLACK)


def names_its_folder(cwd: str) -> bool:
    """Whether the launcher's key names the folder Keeper started from: the first of
    ``$CLAUDE_PROJECT_DIR`` and the payload's ``cwd`` (``resolve.start_folder``), a folder whose path
    holds no link (Keeper finds the project from the real path: a link retargeted under a running
    session would move it to another project while the key stays the same). Else no record."""
    first = os.environ.get("CLAUDE_PROJECT_DIR", "") or cwd
    try:
        real = os.path.realpath(first)
    except (OSError, ValueError):
        return False
    absolute = os.path.isabs(first) and os.path.normcase(real) == os.path.normcase(os.path.abspath(first))
    return absolute and os.path.isdir(first)


VERSION_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__init__.py")


def watched_files(at: Resolved) -> list[str]:
    """The files whose change must reach Keeper: the settings ``config.load`` reads, the pins, and
    Keeper's own version file: a keeper that pip, pipx or uv installed anew runs on the same Python,
    and the record's rules are the release's that wrote it (written anew, the file is newer than the
    record; put back with an older mtime, its bytes name another version)."""
    return [*config.files(at.project.checkout), paths.pins_file(), VERSION_FILE]


def settings_lines(files: list[str]) -> bytes | None:
    """The record's lines for the settings files: ``+<file>`` and ``=<size>`` then its bytes for one
    that exists (a file replaced by one with an older mtime, as ``mv``, ``cp -p`` and ``rsync -a``
    leave it, differs in its bytes), ``-<file>`` for one that does not; None when a name or a file
    cannot be held (a line break in a name, a NUL or more than ``MAX_SETTINGS`` bytes in a file)."""
    out: list[bytes] = []
    for path in files:
        name = os.fsencode(path)
        if b"\n" in name or b"\r" in name:
            return None
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_SETTINGS + 1)
        except FileNotFoundError:
            out.append(b"-" + name + b"\n")
            continue
        except OSError:
            return None
        if len(data) > MAX_SETTINGS or b"\x00" in data:
            return None
        out += [b"+" + name + b"\n", b"=%d\n" % len(data), data + b"\n"]
    return b"".join(out)


def write_record(path: str, text: bytes, dated: float) -> None:
    """Replace the record in one step (no fsync: a record lost in a crash only means a slower call)."""
    folder = os.path.dirname(path)
    fresh = not os.path.exists(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(text)
        os.utime(tmp, (dated, dated))
        os.replace(tmp, path)
    except (OSError, ValueError):  # ValueError: a name the file system cannot encode
        _remove(tmp)
        _remove(path)  # never leave an older record standing in for this one
        return
    if fresh:
        _sweep(folder)


def _sweep(folder: str) -> None:
    """Remove records of sessions not heard of for a week, and with a Stop's or a prompt's record its
    twins (``<session>.stop.<nonce>.<n>``, ``keeper.hooks.idle``; ``<session>.prompt.<nonce>.<n>``,
    ``keeper.hooks.quietprompt``: they carry another file's mtime)."""
    cutoff = time.time() - STALE_SECONDS
    try:
        entries = [entry for entry in os.scandir(folder) if entry.is_file(follow_symlinks=False)]
        heard = {entry.name: entry.stat(follow_symlinks=False).st_mtime for entry in entries}
    except OSError:
        return
    for entry in entries:
        owner = entry.name
        for kind in (".stop", ".prompt"):
            if kind + "." in owner:
                owner = owner.split(kind + ".", 1)[0] + kind
        if heard.get(owner, 0.0) < cutoff:
            _remove(entry.path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
