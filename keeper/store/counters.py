"""Keeper's two append-only counting logs: each session's tool-use tally, each project's hook calls.

Both append a few bytes with ``O_APPEND`` and never rewrite, so the hot path costs one small write.

- The tally (``state/sessions/<session>.tally``): each PostToolUse (or PostToolUseFailure) appends ``u``
  (a tool use), or ``k`` for the tool use that ran ``keeper save``; the save itself ``s``; a save
  reminder ``r``; Stop's request for a final save ``f``; each prompt ``p`` (a turn starts). Most
  ``u`` are appended by the launchers without Python (``keeper.hooks.allowance``). On POSIX an
  ``O_APPEND`` write is atomic, so no use is lost. PostToolUse decides under the tally's lock
  (``Locked``), so a threshold crossed by hooks finishing together is answered exactly once.
  Windows appends under ``msvcrt.locking`` of byte 0. Microsoft documents that a locked range
  cannot be read or written by other processes, and that ``LK_LOCK`` retries once a second, ten
  times: a hook would stall a whole second whenever two overlap. So the lock is taken with
  ``LK_NBLCK`` (fails at once) and retried every few milliseconds, and readers retry too.
- The hook log (``state/hooks.stats``): one ``event<TAB>characters injected<TAB>ms`` line per hook
  call, for ``keeper status``; it restarts past 1 MiB, the old one kept as ``.1``.

Standard library only: this runs on every tool use.
"""

from __future__ import annotations

import os
import sys

from keeper.store import fsutil

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from keeper.store.paths import Project

USE, SAVE_USE, SAVE, REMIND, FINAL_ASK, TURN = b"u", b"k", b"s", b"r", b"f", b"p"
SAVED = (SAVE, SAVE_USE)  # either one means the work so far was saved
HOOK_LOG_MAX_BYTES = 1 << 20

# -- the tool-use tally ------------------------------------------------------------------------


def tally_path(project: Project, session: str) -> str:
    return project.session_file(session, "tally")


def append(path: str, marks: bytes) -> bytes:
    """Append ``marks`` to a tally and return the log up to and including them."""
    fd = fsutil.open_append(path, readable=True)
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            # a refused LK_NBLCK raises OSError (EACCES on Windows, errno 0 under Wine's CRT)
            fsutil.shared(lambda: msvcrt.locking(fd, msvcrt.LK_NBLCK, 1), refusal=OSError)
            try:
                end = os.lseek(fd, 0, os.SEEK_END)
                os.write(fd, marks)
                os.lseek(fd, 0, os.SEEK_SET)
                return os.read(fd, end + len(marks))
            finally:
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        os.write(fd, marks)
        end = os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, 0, os.SEEK_SET)
        return _read_exactly(fd, end)
    finally:
        os.close(fd)


class Locked:
    """A tally held against every other Keeper process that decides on it (``with Locked(path) as
    tally``), so that of PostToolUse hooks finishing together exactly one asks for a save, whichever
    of them counted its own use. The launchers append without it: a lone ``O_APPEND`` byte needs
    none, and a decision made under it reads the whole log. A class, not ``@contextmanager``:
    ``contextlib`` costs a hook ~2 ms to import."""

    def __init__(self, path: str) -> None:
        self.fd = fsutil.open_append(path, readable=True)

    def __enter__(self) -> Locked:
        try:
            if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
                import msvcrt

                os.lseek(self.fd, 0, os.SEEK_SET)  # the byte counters.append and keeper.exe lock, polled as there
                fsutil.shared(lambda: msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1), refusal=OSError)
            else:
                import fcntl

                fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            raise
        return self

    def append(self, marks: bytes) -> bytes:
        """Append ``marks``; return the whole log, theirs included."""
        os.write(self.fd, marks)
        return self.read()

    def read(self) -> bytes:
        end = os.lseek(self.fd, 0, os.SEEK_END)
        os.lseek(self.fd, 0, os.SEEK_SET)
        return _read_exactly(self.fd, end)

    def __exit__(self, *exc_info: object) -> None:
        try:
            if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
                import msvcrt

                os.lseek(self.fd, 0, os.SEEK_SET)
                msvcrt.locking(self.fd, msvcrt.LK_UNLCK, 1)
        finally:
            os.close(self.fd)  # on POSIX this releases the flock


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read(path: str) -> bytes:
    """The whole log; empty when missing (an appender's lock on byte 0 is waited out on Windows)."""
    try:
        return fsutil.read_bytes(path)
    except OSError:
        return b""


def _last(log: bytes, marks: tuple[bytes, ...]) -> int:
    return max((log.rfind(mark) for mark in marks), default=-1)


def uses_since(log: bytes, *marks: bytes) -> int:
    """Tool uses after the last of ``marks`` (all uses when none occurred)."""
    return log.count(USE, _last(log, marks) + 1)


def unsaved(log: bytes) -> int:
    """Tool uses since the work was last saved."""
    return uses_since(log, *SAVED)


def uses_until_reminder(log: bytes, every: int) -> int:
    """How many more tool uses make ``reminder_due`` hold (0 or less: it holds now). A save or a
    request only ever puts it further off; the launchers' allowance rests on that."""
    return every - uses_since(log, *SAVED, REMIND, FINAL_ASK)


def reminder_due(log: bytes, every: int) -> bool:
    """PostToolUse asks every ``every`` unsaved tool uses, counted from a save or the last request."""
    return uses_until_reminder(log, every) <= 0


def final_ask_due(log: bytes, minimum: int, every: int) -> bool:
    """Whether Stop should ask for a save before the turn ends.

    Never in a turn that saved. Otherwise once ``minimum`` tool uses are unsaved; but after a
    request that was not acted on (a reminder or an earlier final ask since the last save), only
    once ``every`` more tool uses have gone unsaved: asking each turn would be nagging.
    """
    if minimum <= 0 or _last(log, SAVED) > log.rfind(TURN):
        return False
    since_save = _last(log, SAVED)
    last_request = _last(log, (REMIND, FINAL_ASK))
    if last_request > since_save:
        return uses_since(log, REMIND, FINAL_ASK) >= every
    return unsaved(log) >= minimum


def total_uses(log: bytes) -> int:
    return log.count(USE) + log.count(SAVE_USE)


def saves(log: bytes) -> int:
    return log.count(SAVE)


# -- hook calls per project --------------------------------------------------------------------


def hook_log_path(state_dir: str) -> str:
    return os.path.join(state_dir, "hooks.stats")


def record_hook(state_dir: str, event: str, injected: int, took_ms: float = 0.0) -> None:
    """Count one hook call; never raises (statistics must not break a hook)."""
    path = hook_log_path(state_dir)
    try:
        fd = fsutil.open_append(path)
        try:
            os.write(fd, f"{event}\t{injected}\t{took_ms:.1f}\n".encode())
            if os.fstat(fd).st_size > HOOK_LOG_MAX_BYTES:
                os.replace(path, path + ".1")
        finally:
            os.close(fd)
    except (OSError, fsutil.OutsideStore):
        pass


def hook_summary(state_dir: str) -> dict[str, dict[str, Any]]:
    """Per event over the kept history: calls, characters injected (all, and the last call's), and
    the slowest recent calls' time in Keeper (ms)."""
    found: dict[str, dict[str, Any]] = {}
    for name in (hook_log_path(state_dir) + ".1", hook_log_path(state_dir)):
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        for line in lines:
            event, _, rest = line.partition("\t")
            size, _, took = rest.partition("\t")
            if not event or not size.isdigit():
                continue
            entry = found.setdefault(event, {"calls": 0, "injected_bytes": 0, "last_injected": 0, "recent_ms": []})
            entry["calls"] += 1
            entry["injected_bytes"] += int(size)
            if int(size):
                entry["last_injected"] = int(size)
            try:
                entry["recent_ms"] = [*entry["recent_ms"], float(took)][-50:]
            except ValueError:
                pass
    for entry in found.values():
        recent = entry.pop("recent_ms")
        entry["slowest_recent_ms"] = round(max(recent), 1) if recent else None
    return found
