"""``keeper clear`` and ``keeper restore``: cleaning up that is never irreversible by accident.

Cleared files are moved, not deleted, into ``<root>/trash/<project-id>/<YYYYmmdd-HHMMSS>/`` with
their relative paths and a manifest; ``keeper restore`` moves the newest (or a named) backup
back without overwriting anything. Backups older than ``trash_days`` are purged by later clears.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import date, datetime, timedelta

from keeper import paths, sessions
from keeper.errors import KeeperError
from keeper.fsutil import atomic_write, ensure_dir, project_lock


def trash_dir(project: paths.Project) -> str:
    return os.path.join(paths.data_root(), "trash", project.id)


def old_session_files(project: paths.Project, older_than_days: int, today: date | None = None) -> list[str]:
    """Session files whose start date (from the name, else the mtime) is older than the cutoff."""
    cutoff = (today or date.today()) - timedelta(days=older_than_days)
    found = []
    for path in sessions.list_files(project):
        day = sessions.date_of(path)
        try:
            started = date.fromisoformat(day) if day else date.fromtimestamp(os.stat(path).st_mtime)
        except (ValueError, OSError):
            continue
        if started < cutoff:
            found.append(path)
    return found


def all_files(project: paths.Project) -> list[str]:
    """Everything Keeper keeps for the project (the lock file excepted)."""
    found: list[str] = []
    for folder, _, names in os.walk(project.dir):
        found.extend(os.path.join(folder, n) for n in names if os.path.join(folder, n) != project.lock)
    return sorted(found)


CLEAR_WHAT = ("old", "all")


def files_to_clear(project: paths.Project, what: str, older_than_days: int) -> list[str]:
    """What ``clear old`` (session files older than the cutoff) or ``clear all`` would move."""
    if what not in CLEAR_WHAT:
        raise KeeperError(f"cannot clear {what!r}: say 'old' or 'all'.")
    if older_than_days < 0:
        raise KeeperError("--older-than must be 0 or more days.")
    return all_files(project) if what == "all" else old_session_files(project, older_than_days)


def clear(project: paths.Project, files: list[str], reason: str, keep_days: int) -> str:
    """Move ``files`` to a new backup, purge backups past ``keep_days``, and return the backup."""
    backup = move_to_trash(project, files, reason)
    purge_expired(project, keep_days)
    return backup


def move_to_trash(project: paths.Project, files: list[str], reason: str) -> str:
    """Move ``files`` into a new backup folder and return its path."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = os.path.join(trash_dir(project), stamp)
    suffix = 1
    while os.path.exists(backup):
        suffix += 1
        backup = os.path.join(trash_dir(project), f"{stamp}-{suffix}")
    with project_lock(project.lock):
        moved = []
        for path in files:
            rel = os.path.relpath(path, project.dir)
            target = os.path.join(backup, rel)
            ensure_dir(os.path.dirname(target))
            try:
                shutil.move(path, target)
            except FileNotFoundError:
                continue
            moved.append(rel)
        atomic_write(
            os.path.join(backup, "manifest.json"),
            json.dumps({"project": project.id, "reason": reason, "files": moved, "root": project.root}, indent=1),
        )
    return backup


def backups(project: paths.Project) -> list[str]:
    try:
        names = sorted(os.listdir(trash_dir(project)))
    except OSError:
        return []
    return [os.path.join(trash_dir(project), n) for n in names]


def restore(project: paths.Project, name: str | None = None) -> tuple[list[str], list[str]]:
    """Move a backup's files back; a file that exists again is kept and the backup copy skipped."""
    available = backups(project)
    if not available:
        raise KeeperError(f"nothing to restore: no backups in {trash_dir(project)}.")
    backup = available[-1]
    if name:
        chosen = [b for b in available if os.path.basename(b) == name]
        if not chosen:
            listing = ", ".join(os.path.basename(b) for b in available)
            raise KeeperError(f"no backup named {name!r}; available: {listing}.")
        backup = chosen[0]
    restored: list[str] = []
    kept: list[str] = []
    with project_lock(project.lock):
        for folder, _, names in os.walk(backup):
            for n in names:
                source = os.path.join(folder, n)
                rel = os.path.relpath(source, backup)
                if rel == "manifest.json":
                    continue
                target = os.path.join(project.dir, rel)
                if os.path.exists(target):
                    kept.append(rel)
                    continue
                ensure_dir(os.path.dirname(target))
                shutil.move(source, target)
                restored.append(rel)
        sessions.forget_newest(project.state)  # restored session files join the newest list when it is rebuilt
    if not kept:
        shutil.rmtree(backup, ignore_errors=True)
    return restored, kept


def purge_expired(project: paths.Project, keep_days: int) -> int:
    """Delete backups older than ``keep_days`` for good."""
    cutoff = time.time() - keep_days * 86400
    expired = [b for b in backups(project) if os.path.getmtime(b) < cutoff]
    for backup in expired:
        shutil.rmtree(backup, ignore_errors=True)
    return len(expired)
