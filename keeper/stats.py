"""Hook activity per project, for ``keeper status``: how often each hook ran and what it injected.

Each hook call appends one short line (``event<TAB>bytes``) with ``O_APPEND``: no lock, no read,
one small write on the hot path. The file restarts past 1 MiB (the old one kept as ``.1``).
"""

from __future__ import annotations

import os

MAX_BYTES = 1 << 20


def path_for(state_dir: str) -> str:
    return os.path.join(state_dir, "hooks.stats")


def record(state_dir: str, event: str, injected: int) -> None:
    """Count one hook call; never raises (statistics must not break a hook)."""
    path = path_for(state_dir)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{event}\t{injected}\n".encode())
            if os.fstat(fd).st_size > MAX_BYTES:
                os.replace(path, path + ".1")
        finally:
            os.close(fd)
    except OSError:
        pass


def summary(state_dir: str) -> dict[str, dict[str, int]]:
    """``{event: {"calls": n, "injected_bytes": n, "last_injected": n}}`` over the kept history."""
    found: dict[str, dict[str, int]] = {}
    for name in (path_for(state_dir) + ".1", path_for(state_dir)):
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        for line in lines:
            event, _, size = line.partition("\t")
            if not event or not size.isdigit():
                continue
            entry = found.setdefault(event, {"calls": 0, "injected_bytes": 0, "last_injected": 0})
            entry["calls"] += 1
            entry["injected_bytes"] += int(size)
            if int(size):
                entry["last_injected"] = int(size)
    return found
