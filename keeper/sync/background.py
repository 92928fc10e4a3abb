"""Syncs the hooks start and never wait for: detached, quiet, taking turns.

SessionStart and SessionEnd call ``start`` when a remote is recorded (one stat) and ``sync`` is on;
it spawns ``keeper sync --background`` in a new session with its input and output on the null
device and returns at once (no hook waits on the network or on git). That run takes the sync lock
without waiting: if another sync holds it, it leaves a mark that one more sync is wanted, which the
running one honours before it lets go of the lock (so at most one follow-up is queued however many
hooks fire); if that one ended in the meantime, this run takes its place.
A failure is logged as a warning and kept in the status file for ``keeper status``.
"""

from __future__ import annotations

import os
import sys

_CHILD = (
    "import sys; del sys.path[0]; import os, tempfile; os.chdir(tempfile.gettempdir()); "
    "from keeper.cli import main; sys.exit(main(['sync', '--background']))"
)
ROUNDS = 3


def start() -> int | None:
    """Spawn a detached ``keeper sync --background``; its process id (None when it could not start).

    ``del sys.path[0]`` first: the child starts in the hook's folder, a repository's own, and must
    not import a ``keeper`` or ``filelock`` that folder holds.
    """
    argv = [sys.executable, "-c", _CHILD]
    if sys.platform != "win32" and hasattr(os, "posix_spawn"):
        null = os.devnull
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
        ]
        try:
            return os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=actions, setsid=True)
        except (NotImplementedError, TypeError, OSError):
            pass
    import subprocess
    import tempfile

    flags = 0
    if sys.platform == "win32":
        flags = 0x00000008 | 0x00000200 | 0x08000000  # DETACHED_PROCESS | NEW_PROCESS_GROUP | NO_WINDOW
    try:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tempfile.gettempdir(),
            start_new_session=sys.platform != "win32",
            creationflags=flags,
        )
    except OSError:
        return None
    return child.pid


def run() -> int:
    """The body of ``keeper sync --background``: sync, or queue one follow-up if a sync is running."""
    from keeper.errors import KeeperError
    from keeper.store import log
    from keeper.sync import engine

    queued = engine.queued_file()
    for _ in range(ROUNDS):
        try:
            engine.sync(wait=0)
        except engine.Busy:
            try:
                with open(queued, "a", encoding="utf-8"):
                    pass
            except OSError:
                return 0
            if engine.busy():
                return 0  # the running sync will see the mark when it ends
            continue  # it ended meanwhile: take its place
        except (KeeperError, OSError) as exc:
            log.write("sync", "WARN", f"background sync failed: {exc}")
        return 0
    return 0
