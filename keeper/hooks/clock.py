"""The clock as a session start shows it: how long ago memory.md was saved, and whether to believe its time.

Kept apart so the start's kept answer (``keeper.hooks.startcache``) keys on exactly what the
context builder shows, without loading it: ``between`` says from when until when the clock shows
what it shows now, so a kept answer is checked against two numbers without this module.
"""

from __future__ import annotations

import os
import time

from keeper.store import paths

FUTURE_SLACK = 120.0  # seconds a file's time may run ahead of this clock (another machine, a share)
JUST_NOW = 90.0  # seconds below which a save is "just now"
UNITS = (("d", 86400), ("h", 3600), ("min", 60))  # the largest whole unit is shown
MARGIN_NS = 1_000_000  # kept clear of each end of a span: far above the rounding of a float's seconds


def age(seconds: float) -> str:
    """How long ago, in the largest whole unit: ``just now``, ``5 min ago``, ``3 h ago``, ``2 d ago``."""
    if seconds < JUST_NOW:
        return "just now"
    for unit, size in UNITS:
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def age_span(seconds: float) -> tuple[float, float]:
    """The seconds ``[low, high)`` around ``seconds`` of which ``age`` says the same."""
    if seconds < JUST_NOW:
        return -float("inf"), JUST_NOW
    above = float("inf")
    for _, size in UNITS:
        if seconds >= size:
            whole = seconds // size
            return max(whole * size, JUST_NOW), min((whole + 1) * size, above)
        above = size
    return JUST_NOW, above


def written(project: paths.Project) -> float | None:
    """memory.md's modification time; None when there is none."""
    try:
        return os.stat(project.memory).st_mtime
    except (OSError, ValueError):
        return None


def says(when: float | None, now: float) -> tuple[str, bool]:
    """How long before ``now`` memory.md was written at ``when`` (``never``), and whether its time
    runs ahead of the clock (then it orders nothing: ``briefing.unsaved_sessions``)."""
    if when is None:
        return "never", False
    return age(now - when), when > now + FUTURE_SLACK


def saved(project: paths.Project) -> tuple[str, bool]:
    """What the clock says of memory.md now (``says``)."""
    return says(written(project), time.time())


def between(when: float | None, now_ns: int) -> tuple[int, int]:
    """The clock's times (ns) between which ``says`` says of ``when`` what it says at ``now_ns``:
    the span of its age and of its time running ahead or not, less ``MARGIN_NS`` at each end (near
    one, the kept answer is worked out again)."""
    if when is None:
        return 0, 1 << 63
    low, high = age_span(now_ns / 1e9 - when)
    if now_ns / 1e9 >= when - FUTURE_SLACK:
        low = max(low, -FUTURE_SLACK)
    else:
        high = min(high, -FUTURE_SLACK)
    return (
        0 if low == -float("inf") else int((when + low) * 1e9) + MARGIN_NS,
        1 << 63 if high == float("inf") else int((when + high) * 1e9) - MARGIN_NS,
    )
