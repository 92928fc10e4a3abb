"""One line per event in ``<root>/logs/keeper.log``: why a hook did what it did, and what failed.

Plain ``open(..., "a")`` rather than ``logging`` (14 ms to import). The file rotates at 1 MiB,
keeping one old generation, so it never grows without bound.
"""

from __future__ import annotations

import os
import time

from keeper.store import paths

MAX_BYTES = 1 << 20


def log_file() -> str:
    return paths.log_file()


def write(event: str, level: str, message: str) -> None:
    """Append one line; never raise (a full disk must not break a hook)."""
    try:
        from keeper.redact import redact  # only when something is logged: it compiles regexes
        from keeper.store import fsutil

        path = log_file()
        try:
            if os.stat(path).st_size > MAX_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        event = "".join(event.split())[:80] or "-"
        line = redact(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {os.getpid()} {event} {level} {' '.join(message.split())}")
        fd = fsutil.open_append(path)  # 0600, never through a link
        try:
            os.write(fd, (line[:2200] + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def last_error() -> str | None:
    """The newest ERROR line, for ``keeper status``."""
    try:
        with open(log_file(), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 65536))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    errors = [ln for ln in lines if " ERROR " in ln]
    return errors[-1] if errors else None
