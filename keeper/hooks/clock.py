"""The clock as a session start shows it: how long ago memory.md was saved, and whether to believe its time.

Kept apart so the start's kept answer (``keeper.hooks.startcache``) keys on exactly what the
context builder shows, without loading it.
"""

from __future__ import annotations

import os
import time

from keeper.store import paths
from keeper.text import age

FUTURE_SLACK = 120.0  # seconds a file's time may run ahead of this clock (another machine, a share)


def saved(project: paths.Project) -> tuple[str, bool]:
    """How long ago memory.md was last written (``never``), and whether its time runs ahead of this
    clock (then it orders nothing: ``briefing.unsaved_sessions``)."""
    try:
        written = os.stat(project.memory).st_mtime
    except (OSError, ValueError):
        return "never", False
    now = time.time()
    return age(now - written), written > now + FUTURE_SLACK
