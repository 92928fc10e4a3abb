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
from typing import NamedTuple

from keeper.errors import KeeperError
from keeper.records import Record, texts
from keeper.store import paths, removals, sessions
from keeper.store.fsutil import (
    atomic_write,
    ensure_dir,
    is_temp,
    project_lock,
    read_bytes,
    read_json,
    read_text,
    shared,
)
from keeper.text import count

MANIFEST = "manifest.json"


class Manifest(Record):
    """A backup's ``manifest.json``: the project, why it was made (``clear old``, a sync's removal…),
    the files moved (relative to the project's folder), its root, and when it was made (the latest
    of the clock and the files' mtimes, see ``_created``; None when not recorded)."""

    __slots__ = ("created", "files", "project", "reason", "root")

    def __init__(
        self,
        project: str = "",
        reason: str = "",
        files: list[str] | None = None,
        root: str = "",
        created: float | None = None,
    ) -> None:
        self.project, self.reason, self.files, self.root, self.created = project, reason, files or [], root, created

    @classmethod
    def parse(cls, data: object) -> Manifest:
        found = data if isinstance(data, dict) else {}
        project, reason, root = texts(found, "project", "reason", "root")
        files, created = found.get("files"), found.get("created")
        return cls(
            project,
            reason,
            [f for f in files if isinstance(f, str)] if isinstance(files, list) else [],
            root,
            float(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else None,
        )

    def dump(self) -> str:
        fields = {"project": self.project, "reason": self.reason, "files": self.files, "root": self.root}
        return json.dumps({**fields, "created": self.created}, indent=1)


def manifest_of(backup: str) -> Manifest:
    return Manifest.parse(read_json(os.path.join(backup, MANIFEST)))


def trash_dir(project: paths.Project) -> str:
    return project.trash


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
    """Everything Keeper keeps for the project but the lock, the search index (derived: a clear
    deletes it, so cleared text does not linger in it, and a recall using it is not pulled apart),
    temp files (a write in flight elsewhere: moving it would strand it in the trash) and the records
    of removals (the project's folder in the sync repository, its removals, what tell the other
    machines the project was cleared, and the items retired or resolved here, which a sync has yet
    to tell them: cleared with the rest, a retirement made since the last sync would be undone) and
    the root record (which project the folder is: without it, and before any sync recorded the
    project's folder in the repository, a sync could not tell which repository's removals these
    are, and the clear never reached the machines an archive had carried the memory to)."""
    skip = {
        project.lock,
        *project.index_files,
        project.sync_record,
        removals.path_of(project.dir),
        project.removed,
        project.root_record,
    }
    found: list[str] = []
    for folder, _, names in os.walk(project.dir):
        found.extend(os.path.join(folder, n) for n in names if os.path.join(folder, n) not in skip and not is_temp(n))
    return sorted(found)


CLEAR_WHAT = ("old", "all")


def files_to_clear(project: paths.Project, what: str, older_than_days: int) -> list[str]:
    """What ``clear old`` (session files older than the cutoff) or ``clear all`` would move."""
    if what not in CLEAR_WHAT:
        raise KeeperError(f"cannot clear {what!r}: say 'old' or 'all'.")
    if older_than_days < 0:
        raise KeeperError("--older-than must be 0 or more days.")
    return all_files(project) if what == "all" else old_session_files(project, older_than_days)


def described(rels: list[str]) -> str:
    """What a clear moves, as the user knows it: memory.md and session files, counted; the state
    files Keeper keeps beside them (counters, records) only named ("Move 7 files" was one session)."""
    names = [rel.replace(os.sep, "/") for rel in rels]
    memory = paths.MEMORY_FILE in names
    found = sum(1 for rel in names if rel.startswith(paths.SESSIONS_DIR + "/"))
    others = len(names) - found - memory
    parts = ([paths.MEMORY_FILE] if memory else []) + ([count(found, "session file")] if found else [])
    if others:
        parts.append("Keeper's own state for them" if parts else count(others, "state file"))
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def nothing_to_clear(project: paths.Project, what: str, older_than_days: int) -> str:
    """Why a clear found nothing, in words: no memory yet, or no session file that old."""
    if what == "all":
        return f"project '{project.name}' holds no memory yet"
    held = len(sessions.list_files(project))
    if not held:
        return f"project '{project.name}' has no session files yet"
    cutoff = date.today() - timedelta(days=older_than_days)
    when = "today" if older_than_days == 0 else f"{cutoff.isoformat()} ({count(older_than_days, 'day')} ago)"
    return f"no session file of '{project.name}' started before {when} (of {count(held, 'session file')})"


class Backup(NamedTuple):
    """A backup as ``keeper restore --list`` shows it: its name (what ``keeper restore`` takes), when
    it was made, what made it and the files it holds."""

    name: str
    made: str
    reason: str | None
    files: list[str]


def about(backup: str) -> Backup:
    name = os.path.basename(backup)
    try:
        made = datetime.strptime(name[:15], "%Y%m%d-%H%M%S").strftime("%Y-%m-%d %H:%M")
    except ValueError:
        made = datetime.fromtimestamp(_mtime(backup)).strftime("%Y-%m-%d %H:%M")
    held = [
        os.path.relpath(os.path.join(folder, n), backup)
        for folder, _, names in os.walk(backup)
        for n in names
        if os.path.join(folder, n) != os.path.join(backup, MANIFEST)
    ]
    return Backup(name, made, manifest_of(backup).reason or None, sorted(held))


def listing(backup: str) -> str:
    """One line of ``keeper restore --list``."""
    found = about(backup)
    by = f"{found.reason}: " if found.reason else ""
    return f"{found.name}  {found.made}  {by}{described(found.files)}"


def clear(project: paths.Project, files: list[str], reason: str, keep_days: int) -> str:
    """Move ``files`` to a new backup, purge backups past ``keep_days``, and return the backup.

    The search index is rebuilt from the files, so after a clear it is dropped: what was cleared
    must not stay findable through it.
    """
    backup = move_to_trash(project, files, reason, recorded=True)
    for path in project.index_files:
        try:
            os.remove(path)
        except OSError:
            pass  # in use on Windows: the index notices the files are gone and forgets them itself
    purge_expired(project, keep_days)
    return backup


def _new_backup(project: paths.Project) -> str:
    """A backup folder no other clear shares: ``mkdir`` fails when the name is taken, so two clears
    in the same second get two folders (a shared one let a restore delete the other's files)."""
    base = trash_dir(project)
    ensure_dir(base)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    suffix = 1
    while True:
        path = os.path.join(base, stamp if suffix == 1 else f"{stamp}-{suffix}")
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            suffix += 1


def _move(source: str, target: str) -> bool:
    """Move one file without ever replacing another; whether it moved (False: source gone)."""
    ensure_dir(os.path.dirname(target))
    if os.path.lexists(target):
        return False
    try:
        # same file system: atomic, and the file is never in two places (Windows: once no one holds it)
        shared(lambda: os.rename(source, target))
    except FileNotFoundError:
        return False
    except OSError:
        shutil.copy2(source, target)  # another file system: copy first, delete the original after
        os.remove(source)
    return True


def move_to_trash(project: paths.Project, files: list[str], reason: str, recorded: bool = False) -> str:
    """Move ``files`` into a new backup folder, under the project lock, and return its path.

    ``recorded``: a removal made here (a clear), so with a sync remote it is recorded to travel to
    the other machines (``store.removals``); a sync moving what another machine removed is not.
    """
    with project_lock(project.lock):
        if recorded:
            _note(project, files, removed_now=True)
        backup = _new_backup(project)
        moved = [
            os.path.relpath(path, project.dir)
            for path in files
            if _move(path, os.path.join(backup, os.path.relpath(path, project.dir)))
        ]
        created = max([time.time(), *(_mtime(p) for p in [project.memory, *files])])
        atomic_write(os.path.join(backup, MANIFEST), Manifest(project.id, reason, moved, project.root, created).dump())
    return backup


def backups(project: paths.Project) -> list[str]:
    try:
        names = sorted(n for n in os.listdir(trash_dir(project)) if not n.startswith("."))
    except OSError:
        return []
    return [os.path.join(trash_dir(project), n) for n in names]


def restore(project: paths.Project, name: str | None = None) -> tuple[list[str], list[str]]:
    """Move a backup's files back; a file that exists again is kept and the backup copy stays.

    All of it under the project lock; the backup folder goes only once it is empty, so nothing a
    concurrent clear put there can be lost.
    """
    with project_lock(project.lock):
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
        for folder, _, names in os.walk(backup):
            for n in names:
                source = os.path.join(folder, n)
                rel = os.path.relpath(source, backup)
                if rel == MANIFEST:
                    continue
                if _move(source, os.path.join(project.dir, rel)):
                    restored.append(rel)
                elif os.path.exists(source):
                    kept.append(rel)
        _note(project, [os.path.join(project.dir, rel) for rel in restored], removed_now=False)
        sessions.forget_newest(project.state)  # restored session files join the newest list when it is rebuilt
        if not kept:
            _remove_empty(backup)
    return restored, kept


def _note(project: paths.Project, files: list[str], removed_now: bool) -> None:
    """Record for sync the session files and the memory.md items among ``files`` as removed or
    brought back; a restore also takes its items out of the record of retirements, so the next save
    or import keeps them."""
    from keeper.memory.merge import item_keys

    names = {os.path.basename(f): f for f in files if os.path.dirname(f) == project.sessions and f.endswith(".md")}
    texts = {name: _bytes(path) for name, path in names.items()}
    items = sorted(item_keys(read_text(project.memory))) if project.memory in files else []
    removals.note(project.dir, texts, items, removed_now)
    if items and not removed_now:
        record = removals.Removed.parse(read_json(project.removed))
        if any(k in record.keys for k in items):
            kept = removals.Removed({k: v for k, v in record.keys.items() if k not in items})
            atomic_write(project.removed, kept.dump())


def _bytes(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except OSError:
        return None


def _remove_empty(backup: str) -> None:
    """Remove a restored backup: its manifest and its folders, which must be empty by now."""
    try:
        os.remove(os.path.join(backup, MANIFEST))
    except OSError:
        pass
    for folder, _, _ in sorted(os.walk(backup), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(folder)  # fails, and keeps the folder, if anything is still in it
        except OSError:
            pass


def _created(backup: str, now: float) -> float:
    """When a backup was made, as its age must be judged: the latest of its name's stamp (its folder's
    mtime changes as files come and go), the time its manifest recorded, and the mtimes of the files
    in it; none later than ``now``.

    A clock can be wrong when a backup is made, so the manifest records the latest of the clock, the
    memory.md's mtime and the moved files' mtimes (a file keeps its mtime when moved): a backup made
    while the clock was behind (named 2001) after a save last week counts from last week, not 2001.
    A time in the future counts as now: nothing is purged on a date this clock has not reached.
    """
    stamp = os.path.basename(backup)[:15]
    try:
        created = datetime.strptime(stamp, "%Y%m%d-%H%M%S").timestamp()
    except ValueError:
        created = os.path.getmtime(backup)
    recorded = manifest_of(backup).created
    if recorded is not None:
        created = max(created, recorded)
    for folder, _, names in os.walk(backup):
        for name in names:
            created = max(created, _mtime(os.path.join(folder, name)))
    return min(created, now)


def _mtime(path: str) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def purge_expired(project: paths.Project, keep_days: int) -> int:
    """Delete backups older than ``keep_days`` for good: the one deletion, and only of the trash."""
    now = time.time()
    cutoff = now - keep_days * 86400
    with project_lock(project.lock):
        expired = [b for b in backups(project) if _created(b, now) < cutoff]
        for backup in expired:
            shutil.rmtree(backup, ignore_errors=True)
    return len(expired)
