"""Every project in the store, as ``keeper projects`` and the Memory Hub list them.

A project's store is named by a hash of its root, so the root itself comes from the record
``resolve.remember_root`` keeps in ``state/project.json``; a store older than that record shows no
root until Keeper next runs there. A project whose root folder is gone can still be cleared and
restored by its id (``keeper clear all --project ID``), which ``find`` resolves here.
"""

from __future__ import annotations

import os
import time

from keeper import jsonio
from keeper.errors import KeeperError
from keeper.memory import document
from keeper.records import Record, texts
from keeper.store import paths, removals, resolve
from keeper.store.fsutil import read_json, read_text
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TITLE = "# Project Memory:"


class Info:
    """One project as listed: who it is, where it lives, how much it holds and when it was last used."""

    def __init__(self, project: paths.Project, name: str, recorded: bool) -> None:
        self.project = project
        self.name = name
        self.root: str | None = project.root if recorded else None
        self.root_exists: bool | None = os.path.isdir(project.root) if recorded else None
        self.memory_text = read_text(project.memory)
        self.session_files: list[str] = []
        self.bytes = 0
        self.last_activity: float | None = None
        self.open_issues = len(document.items(self.memory_text, "issues"))
        self.decisions = len(document.items(self.memory_text, "decisions"))

    @property
    def id(self) -> str:
        return self.project.id

    @property
    def clear_command(self) -> str | None:
        """How to remove a project whose folder is gone (``--project-dir`` cannot name it any more)."""
        return f"keeper clear all --project {self.id} --yes" if self.root_exists is False else None

    def as_dict(self) -> dict[str, Any]:
        last = self.last_activity
        return {
            "name": self.name,
            "id": self.id,
            "root": self.root,
            "root_exists": self.root_exists,
            "store": self.project.dir,
            "sessions": len(self.session_files),
            "bytes": self.bytes,
            "last_activity": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(last)) if last else None,
            "open_issues": self.open_issues,
            "decisions": self.decisions,
            "clear_command": self.clear_command,
        }


def projects_dir() -> str:
    return paths.projects_dir()


def _holds_anything(folder: str) -> bool:
    """Whether a project folder holds memory: its memory.md or a session file. Folders that hold
    only derived or machine-local files (``clear all`` leaves empty ones; a recall or a hook in a
    folder where nothing was ever saved leaves an index or a counter) are no project to list."""
    if os.path.isfile(os.path.join(folder, paths.MEMORY_FILE)):
        return True
    try:
        with os.scandir(os.path.join(folder, paths.SESSIONS_DIR)) as entries:
            return any(e.name.endswith(".md") and not e.name.startswith(".") and e.is_file() for e in entries)
    except OSError:
        return False


def _project(project_id: str) -> tuple[paths.Project, bool]:
    """The project stored under ``project_id``, with its recorded root (else its store folder)."""
    folder = os.path.join(projects_dir(), project_id)
    root = resolve.recorded_root(folder)
    if root:
        return paths.Project(root=root, id=project_id, dir=folder), True
    return paths.Project(root=folder, id=project_id, dir=folder), False


def _name(project: paths.Project, text: str | None, recorded: bool) -> str:
    """memory.md's ``# Project Memory: <name>`` title, else the root folder's name, else the id."""
    for line in (text or "").splitlines()[:5]:
        if line.startswith(TITLE) and line[len(TITLE) :].strip():
            return line[len(TITLE) :].strip()
    return project.name if recorded else project.id


def info(project_id: str) -> Info:
    """Everything listed about one stored project (one stat per file it holds)."""
    project, recorded = _project(project_id)
    text = read_text(project.memory)
    found = Info(project, _name(project, text, recorded), recorded)
    newest: list[float] = []
    for folder, _, names in os.walk(project.dir):
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            relpath = os.path.join(paths.PROJECTS_DIR, project_id, os.path.relpath(path, project.dir))
            if paths.kind(relpath) == paths.DURABLE:
                found.bytes += st.st_size  # what the memory is: the index, counters and caches are not
            if paths.file_kind(relpath.replace(os.sep, "/")) == paths.SESSION:
                found.session_files.append(path)
                newest.append(st.st_mtime)
            elif path == project.memory:
                newest.append(st.st_mtime)
    found.session_files.sort()
    found.last_activity = max(newest, default=None)
    return found


def list_all() -> list[Info]:
    """Every project that holds something, the most recently active first."""
    try:
        names = sorted(os.listdir(projects_dir()))
    except OSError:
        return []
    machine = removals.machine()
    found = [
        info(n)
        for n in names
        if _holds_anything(os.path.join(projects_dir(), n))
        and not _another_machines(os.path.join(projects_dir(), n), machine)
    ]
    return sorted(found, key=lambda p: (-(p.last_activity or 0), p.name.lower()))


class SyncRecord(Record):
    """``state/sync.remote.json`` (``paths.PROJECT_SYNC``): the project's folder in the sync
    repository (``key``, ``sync.mirror.is_key``) and the commit it last synced with; "" for either
    when not recorded (a damaged record reads as none)."""

    __slots__ = ("commit", "key")

    def __init__(self, key: str = "", commit: str = "") -> None:
        self.key, self.commit = key, commit

    @classmethod
    def parse(cls, data: object) -> SyncRecord:
        return cls(*texts(data, "key", "commit"))

    def dump(self) -> str:
        return jsonio.dumps({"key": self.key, "commit": self.commit} if self.commit else {"key": self.key})


def sync_record(folder: str) -> SyncRecord:
    """The sync record of a project's store folder."""
    return SyncRecord.parse(read_json(os.path.join(folder, paths.STATE_DIR, paths.PROJECT_SYNC)))


def _another_machines(folder: str, machine: str | None) -> bool:
    """A folder an older sync brought from another machine's unshared project (no hosted origin, no
    pin): it is that machine's alone, so this machine does not list it. This machine's own unshared
    projects (``local.<machine>.<id>``, ``machine`` being this store's id in sync) are listed, root
    recorded or not (an imported project, or one of a store older than the root record)."""
    if os.path.exists(os.path.join(folder, paths.STATE_DIR, paths.ROOT_RECORD)):
        return False
    key = sync_record(folder).key
    if not key.startswith("local."):
        return False
    return not (machine and key.startswith(f"local.{machine}."))


def find(project_id: str) -> paths.Project:
    """The stored project with this id, for commands that name it with ``--project ID``.

    Its folder may be gone (that is why ``--project`` exists); a project with a backup in the
    trash counts too, so ``keeper restore --project ID`` works after ``clear all``.
    """
    safe = project_id and os.path.basename(project_id) == project_id and project_id not in (".", "..")
    trash = paths.trash_dir(project_id)
    if not safe or not (os.path.isdir(os.path.join(projects_dir(), project_id)) or os.path.isdir(trash)):
        known = ", ".join(p.id for p in list_all()) or "none"
        raise KeeperError(f"no project {project_id!r} in the store; `keeper projects` lists them (known: {known}).")
    return _project(project_id)[0]


def size(n: int) -> str:
    """A byte count as people read it: ``512 B``, ``3.4 KB``, ``1.2 MB``."""
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MB"


def lines(found: list[Info]) -> list[str]:
    """``keeper projects`` as text."""
    if not found:
        return [f"No projects in {projects_dir()} yet: Keeper adds one the first time it runs in a project."]
    out = [f"{count(len(found), 'project')} in {projects_dir()}, most recently active first:"]
    for p in found:
        data = p.as_dict()
        last = (data["last_activity"] or "never").replace("T", " ")[:16]
        out += ["", f"{p.name}  ({p.id})" + ("  [root folder gone]" if p.root_exists is False else "")]
        if p.root is None:
            out.append("  root      not recorded yet (noted the next time Keeper runs in that project)")
        else:
            out.append(f"  root      {p.root}" + ("  (no longer exists)" if p.root_exists is False else ""))
        out.append(
            f"  holds     {count(data['sessions'], 'session')}, {size(p.bytes)}; {count(p.open_issues, 'open issue')}; "
            f"last active {last}"
        )
        if p.clear_command:
            out.append(f"  clear it  {p.clear_command}   (restorable: keeper restore --project {p.id})")
    return out
