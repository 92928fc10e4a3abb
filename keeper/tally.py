"""Per-session tool-use tally: one append-only byte log, exact under parallel hooks.

Each PostToolUse appends ``u`` (a tool use); a save appends ``s``; a save reminder ``r``; Stop's
one-time request for a final save ``f``. On POSIX an ``O_APPEND`` write is atomic, and each hook
reads only the prefix up to its own write, so two hooks finishing together still see distinct
counts and a threshold is crossed exactly once. Windows appends under ``msvcrt.locking``.
Standard library only: this runs on every tool use.
"""

from __future__ import annotations

import os
import sys

USE, SAVE, REMIND, FINAL_ASK = b"u", b"s", b"r", b"f"


def path_for(state_dir: str, session: str) -> str:
    return os.path.join(state_dir, session + ".tally")


def append(path: str, marks: bytes) -> bytes:
    """Append ``marks`` and return the log up to and including them."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    except FileNotFoundError:
        from keeper.fsutil import ensure_dir

        ensure_dir(os.path.dirname(path))
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
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
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def uses_since(log: bytes, *marks: bytes) -> int:
    """Tool uses after the last of ``marks`` (all uses when none occurred)."""
    start = max((log.rfind(mark) for mark in marks), default=-1)
    return log.count(USE, start + 1)


def total_uses(log: bytes) -> int:
    return log.count(USE)


def saves(log: bytes) -> int:
    return log.count(SAVE)
