"""Moving a store to the project the identity rule now names, once, and losing nothing.

Before worktrees shared one memory, a project's id hashed the nearest folder holding ``.git``, so
each linked worktree had a store of its own. The first time such a folder is resolved under the
new rule, its old store is taken over: each entry moves across whole when the new store has none
by that name; on a clash, session files move in under free names, the old ``memory.md`` becomes a
session file (so recall still finds its text) and anything else goes to the trash. Nothing is
deleted but the old, empty folder and its lock file.
"""

from __future__ import annotations

import os
import time

from keeper.errors import KeeperError
from keeper.store import identity, log, paths
from keeper.store.fsutil import HOOK_LOCK_TIMEOUT, ensure_dir, project_lock
from keeper.text import count

LOCK = ".lock"


def adopt(project: paths.Project, heir_of: str) -> None:
    """Take over the store ``heir_of`` had under the old rule, if one is left; never raises.

    The caller only asks when the two ids differ, so the usual cost is one ``isdir``. A failure is
    logged and retried by the next call; meanwhile the project works under its new id.
    """
    old_id = identity.project_id(heir_of)
    old = os.path.join(paths.projects_dir(), old_id)
    if old_id == project.id or not os.path.isdir(old):
        return
    try:
        with project_lock(project.lock, HOOK_LOCK_TIMEOUT):
            done = _take_over(old, old_id, project)
    except (OSError, KeeperError) as exc:
        log.write("migrate", "WARN", f"could not move {old} into {project.dir} yet ({exc}); will retry")
        return
    if done:
        try:  # the newest-sessions list no longer covers the files taken over: rebuilt at the next start
            os.remove(os.path.join(project.state, paths.NEWEST_SESSIONS))
        except OSError:
            pass
        log.write("migrate", "INFO", f"{heir_of} now belongs to project {project.id}: {done}")


def _take_over(old: str, old_id: str, project: paths.Project) -> str:
    """Empty ``old`` into the project's folder and remove it; say what went where. Call under the lock."""
    if not os.path.isdir(old):
        return ""  # another process took it over while this one waited for the lock
    moved: list[str] = []
    merged = 0
    kept_as = ""
    trashed: list[str] = []
    trash = os.path.join(paths.trash_dir(old_id), "migrated-" + time.strftime("%Y%m%d-%H%M%S"))
    for name in sorted(os.listdir(old)):
        if name == LOCK:
            continue
        source, target = os.path.join(old, name), os.path.join(project.dir, name)
        if not os.path.lexists(target):
            os.rename(source, target)
            moved.append(name)
        elif name == paths.SESSIONS_DIR and os.path.isdir(source) and os.path.isdir(target):
            for file in sorted(os.listdir(source)):
                _move_to_free_name(os.path.join(source, file), target, file)
                merged += 1
            os.rmdir(source)
        elif name == paths.MEMORY_FILE and os.path.isfile(source):
            day = time.strftime("%Y-%m-%d", time.localtime(os.stat(source).st_mtime))
            ensure_dir(project.sessions)
            kept_as = _move_to_free_name(source, project.sessions, f"{day}_0000-migrated-{old_id}.md")
        else:
            ensure_dir(trash)
            trashed.append(os.path.basename(_move_to_free_name(source, trash, name)))
    if os.path.lexists(os.path.join(old, LOCK)):
        os.remove(os.path.join(old, LOCK))
    os.rmdir(old)
    parts = [f"moved {', '.join(moved)} from {old}"] if moved else [f"emptied {old}"]
    if merged:
        parts.append(f"{count(merged, 'session file')} merged into {project.sessions}")
    if kept_as:
        parts.append(f"its memory.md kept as {kept_as}")
    if trashed:
        parts.append(f"{', '.join(trashed)} moved to {trash}")
    return "; ".join(parts)


def _move_to_free_name(source: str, folder: str, name: str) -> str:
    """Move ``source`` into ``folder`` as ``name``, or ``name-2``, ``-3`` … where taken; never overwrite."""
    base, ext = os.path.splitext(name)
    suffix = 1
    while True:
        target = os.path.join(folder, name if suffix == 1 else f"{base}-{suffix}{ext}")
        if not os.path.lexists(target):
            os.rename(source, target)
            return target
        suffix += 1
