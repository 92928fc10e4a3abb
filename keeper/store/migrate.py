"""The store's format and its migrations: each runs once per store, under its lock, keeping a backup.

The store records its format in ``<root>/format.json``: the number of migrations applied and their
names (after simonw/llm's ``migrations.py``). A migration is a plain function registered with
``@migration``, in order, never renamed or removed once released; it is handed a ``Backup`` that
copies each file before it changes and lists the files it makes, under
``<root>/backups/<migration>-<time>/`` (``manifest.json`` says which is which). Stores of 0.1.0
and 0.2.0 have no ``format.json``: format 0. A store of a newer format than this code is read as
it is and never changed; ``keeper doctor`` says to upgrade.

Apart from the registry, one move runs lazily per folder, because only a session in that folder
knows its root: before worktrees shared one memory, a project's id hashed the nearest folder
holding ``.git``, so each linked worktree had a store of its own. The first time such a folder is
resolved under the new rule, its old store is taken over: each entry moves across whole when the
new store has none by that name; on a clash, session files move in under free names, the old
``memory.md`` becomes a session file (so recall still finds its text) and anything else goes to
the trash. Nothing is deleted but the old, empty folder and its lock file.
"""

from __future__ import annotations

import os
import time

from keeper.errors import KeeperError
from keeper.records import Record
from keeper.store import identity, log, paths
from keeper.store.fsutil import HOOK_LOCK_TIMEOUT, atomic_write, ensure_dir, project_lock, read_json, read_text
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

LOCK = ".lock"
BACKUPS_DIR = "backups"  # <root>/backups/<migration>-<time>/: what each migration changed, as it was


class Backup:
    """What one migration changes, kept as it was: call ``keep(path)`` before writing ``path``.

    Its ``manifest.json`` (written, never read back by Keeper) names the migration and lists, by
    path in the store, the files it ``changed`` (copied here first), ``created`` and ``moved``.
    """

    def __init__(self, root: str, name: str) -> None:
        self.root, self.name = root, name
        self.folder = os.path.join(root, BACKUPS_DIR, f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")
        self.changed: list[str] = []
        self.created: list[str] = []
        self.moved_to: dict[str, str] = {}

    def keep(self, path: str) -> None:
        """Copy ``path`` (inside the store) into the backup, or note that the migration creates it."""
        import shutil  # only where a migration runs: a session start that finds nothing to migrate
        # costs no import (json and shutil take ~8 ms)

        rel = os.path.relpath(path, self.root)
        (self.changed if os.path.isfile(path) else self.created).append(self._rel(path))
        if os.path.isfile(path):
            ensure_dir(os.path.dirname(os.path.join(self.folder, rel)))
            shutil.copy2(path, os.path.join(self.folder, rel))
        self._write()

    def moved(self, pairs: list[tuple[str, str]]) -> None:
        """Note files the migration renamed, ``(from, to)``: a rename changes no bytes, so nothing
        is copied, and the manifest says where each went."""
        for source, target in pairs:
            self.moved_to[self._rel(source)] = self._rel(target)
        self._write()

    def _rel(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def _write(self) -> None:
        import json

        manifest = {"migration": self.name, "changed": self.changed, "created": self.created, "moved": self.moved_to}
        ensure_dir(self.folder)
        atomic_write(os.path.join(self.folder, "manifest.json"), json.dumps(manifest, indent=2))


MIGRATIONS: list[tuple[str, Callable[[str, Backup], str]]] = []


def migration(fn: Callable[[str, Backup], str]) -> Callable[[str, Backup], str]:
    """Register ``fn(root, backup) -> summary`` as the next migration, named by its function; its
    summary is what it did (logged), or ``""`` when the store held nothing for it."""
    MIGRATIONS.append((fn.__name__, fn))
    return fn


def format_file(root: str) -> str:
    return os.path.join(root, paths.STORE_FORMAT)


class Format(Record):
    """``format.json``: the store's format (the number of migrations applied), their names, and the
    Keeper that wrote it. Format 0 and none for a store of 0.1.0 or 0.2.0, or a damaged record."""

    __slots__ = ("applied", "keeper", "number")

    def __init__(self, number: int = 0, applied: list[str] | None = None, keeper: str = "") -> None:
        self.number, self.applied, self.keeper = number, applied if applied is not None else [], keeper

    @classmethod
    def parse(cls, data: object) -> Format:
        found = data if isinstance(data, dict) else {}
        number, applied, keeper = found.get("format"), found.get("applied"), found.get("keeper")
        return cls(
            number if isinstance(number, int) and not isinstance(number, bool) and number >= 0 else 0,
            [name for name in applied if isinstance(name, str)] if isinstance(applied, list) else [],
            keeper if isinstance(keeper, str) else "",
        )

    def dump(self) -> str:
        import json  # only where a migration runs or a new store is stamped

        return json.dumps({"format": self.number, "applied": self.applied, "keeper": self.keeper}, indent=2) + "\n"


def store_format(root: str) -> Format:
    """The store's format and the migrations it has had."""
    return Format.parse(read_json(format_file(root)))


def upgrade(root: str | None = None, timeout: float = HOOK_LOCK_TIMEOUT) -> list[str]:
    """Apply, in order, each migration this store has not had, under the store's lock; say what each
    did. Nothing for a store that does not exist yet (see ``stamp``) or of a newer format."""

    root = root or paths.data_root()
    found = store_format(root)
    number, applied = found.number, found.applied
    if (number == len(MIGRATIONS) and len(applied) == number) or number > len(MIGRATIONS):
        return []
    if not os.path.isdir(root):
        return []
    done: list[str] = []
    with project_lock(os.path.join(root, LOCK), timeout):
        found = store_format(root)  # another process may have migrated while this one waited
        number, applied = found.number, found.applied
        if number > len(MIGRATIONS):
            return []
        for position, (name, fn) in enumerate(MIGRATIONS, 1):
            if name in applied:
                continue
            summary = fn(root, Backup(root, name))
            applied.append(name)
            _write_format(root, position, applied)
            if summary:  # a migration with nothing to do in this store says nothing
                log.write("format", "INFO", f"store format {position} ({name}): {summary}")
                done.append(f"{name}: {summary}")
    return done


def _write_format(root: str, number: int, applied: list[str]) -> None:
    from keeper import __version__

    atomic_write(format_file(root), Format(number, applied, __version__).dump())


def stamp(root: str | None = None) -> None:
    """Mark a store this process created as being in this code's format: nothing in it to migrate."""
    root = root or paths.data_root()
    if os.path.isdir(root) and not os.path.exists(format_file(root)):
        _write_format(root, len(MIGRATIONS), [name for name, _ in MIGRATIONS])


def upgrade_quietly() -> bool:
    """``upgrade`` for hooks and commands, which go on whatever happens: a failure is logged and
    retried by the next call. True when there is no store yet: the caller then ``stamp``s the one it makes."""
    root = paths.data_root()
    try:
        if not os.path.isdir(root):
            return True
        upgrade(root)
    except (OSError, KeeperError) as exc:
        log.write("format", "WARN", f"could not bring the store to format {len(MIGRATIONS)} yet ({exc}); will retry")
    return False


def _session_order(name: str) -> tuple[str, int]:
    """Session files oldest first: ``YYYY-MM-DD_HHMM.md``, then its clashes ``-2``, ``-3`` … of that minute."""
    suffix = name[15:-3]
    return name[:15], int(suffix[1:]) if suffix[:1] == "-" and suffix[1:].isdigit() else 1


@migration
def removal_records(root: str, backup: Backup) -> str:
    """0.1.0 and 0.2.0 kept no record of the items they resolved or retired (``state/removed.json``),
    which an import or a sync relies on so as not to bring them back. Rebuilt from the session files'
    ``Resolved:`` and ``Retired:`` lines, oldest first, less what was added back later or is in
    ``memory.md`` now; merged with any record there is."""
    from keeper.memory.items import key, strip_date
    from keeper.store import removals

    recorded = 0
    projects = os.path.join(root, paths.PROJECTS_DIR)
    for name in sorted(os.listdir(projects)) if os.path.isdir(projects) else []:
        folder = os.path.join(projects, name)
        sessions = os.path.join(folder, paths.SESSIONS_DIR)
        if not os.path.isdir(sessions):
            continue
        record: dict[str, str] = {}
        for file in sorted((f for f in os.listdir(sessions) if f.endswith(".md")), key=_session_order):
            for line in (read_text(os.path.join(sessions, file)) or "").splitlines():
                label, _, item = line[2:].partition(": ") if line.startswith("- ") else ("", "", "")
                if label in ("Resolved", "Retired") and item.strip():
                    day = item.rstrip()[-11:-1] if item.rstrip() != strip_date(item.rstrip()) else file[:10]
                    record.pop(key(item), None)
                    record[key(item)] = day
                elif label in ("Decision", "Issue"):
                    record.pop(key(item), None)
        memory = read_text(os.path.join(folder, paths.MEMORY_FILE)) or ""
        present = {key(line[2:]) for line in memory.splitlines() if line.startswith("- ")}
        record = {k: v for k, v in record.items() if k not in present}
        if not record:
            continue
        path = os.path.join(folder, paths.STATE_DIR, paths.REMOVED)
        with project_lock(os.path.join(folder, LOCK)):
            existing = removals.Removed.parse(read_json(path)).keys
            merged = {**record, **existing}
            if merged == existing:
                continue
            backup.keep(path)
            ensure_dir(os.path.dirname(path))
            atomic_write(path, removals.Removed(merged).dump())
            recorded += len(merged) - len(existing)
    return f"{count(recorded, 'removed item')} recorded from the session files" if recorded else ""


@migration
def session_state_folder(root: str, backup: Backup) -> str:
    """Up to 0.3.0 each session's own files (``<session id>.<kind>``: its state, tally, items shown,
    start and end markers) lay in ``state/`` beside Keeper's records, so a session named ``memory``
    overwrote ``state/memory.json``. Each moves into ``state/sessions/`` by a rename, under the
    project's lock (a hook of the old release appending to a tally meanwhile appends to the file
    moved), never over a file already there; Keeper's records stay."""
    moved = left = 0
    projects = os.path.join(root, paths.PROJECTS_DIR)
    for name in sorted(os.listdir(projects)) if os.path.isdir(projects) else []:
        folder = os.path.join(projects, name)
        state = os.path.join(folder, paths.STATE_DIR)
        if not any(_session_file(entry) for entry in _listing(state)):
            continue
        target = os.path.join(state, paths.SESSION_STATE)
        pairs: list[tuple[str, str]] = []
        with project_lock(os.path.join(folder, LOCK)):
            ensure_dir(target)
            for entry in sorted(n for n in _listing(state) if _session_file(n)):
                source, dest = os.path.join(state, entry), os.path.join(target, entry)
                if os.path.lexists(dest):
                    left += 1
                elif os.path.isfile(source) and not os.path.islink(source):
                    os.rename(source, dest)
                    pairs.append((source, dest))
        if pairs:
            backup.moved(pairs)
            moved += len(pairs)
    said = [f"{count(moved, 'session state file')} moved into state/{paths.SESSION_STATE}/"] if moved else []
    said += [f"{left} left in state/, a newer one being in state/{paths.SESSION_STATE}/"] if left else []
    return "; ".join(said)


@migration
def session_twins(root: str, backup: Backup) -> str:
    """Up to 0.4.0 a session that reached a store by two roads (``keeper import`` and ``keeper
    sync``) was kept twice, under its plain name and under a machine's suffix, the same text; on
    every later exchange more copies came. Of the files of a project that hold the same text (which
    records the session's id and start), one stays: the one whose name in the sync repository is
    the shortest, then sorts first (no ``-imported`` suffix where one has none), the same choice on
    every machine, so the next sync carries the removal of the others everywhere and no machine
    removes the one another kept. A copy whose text differs is kept."""
    from keeper.store.removals import tree_name
    from keeper.store.sessions import forget_newest

    machine = read_json(os.path.join(root, paths.SYNC_FILE)).get("machine")
    machine = machine if isinstance(machine, str) else ""
    removed = 0
    projects = os.path.join(root, paths.PROJECTS_DIR)
    for name in sorted(os.listdir(projects)) if os.path.isdir(projects) else []:
        folder = os.path.join(projects, name)
        sessions = os.path.join(folder, paths.SESSIONS_DIR)
        names = sorted(n for n in _listing(sessions) if paths.safe_session_name(n))
        if len(names) < 2:
            continue
        with project_lock(os.path.join(folder, LOCK)):
            groups: dict[str, list[str]] = {}
            for file in names:
                path = os.path.join(sessions, file)
                text = read_text(path, exact=True) if os.path.isfile(path) and not os.path.islink(path) else None
                if text is not None:
                    groups.setdefault(text, []).append(file)
            twins = [
                f for group in groups.values() for f in sorted(group, key=lambda n: _rank(tree_name(n, machine)))[1:]
            ]
            for file in twins:
                backup.keep(os.path.join(sessions, file))
                os.remove(os.path.join(sessions, file))
            if twins:
                forget_newest(os.path.join(folder, paths.STATE_DIR))
            removed += len(twins)
    return f"{count(removed, 'session file')} removed, each the same text as one kept" if removed else ""


def _rank(name: str) -> tuple[int, str]:
    return len(name), name


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _session_file(name: str) -> bool:
    """Whether a name in ``state/`` is one of a session's files: ``<file-safe id>.<kind>``, not a record."""
    stem, _, kind = name.rpartition(".")
    return kind in paths.SESSION_KINDS and identity.safe_session_id(stem) == stem and name not in paths.RECORDS


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
