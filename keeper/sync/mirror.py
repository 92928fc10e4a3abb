"""How the store maps into the sync repository, and which project a folder of it is on each machine.

The repository holds ``keeper-sync.json`` (what makes it a Keeper store), ``global/memory.md`` and
``projects/<key>/memory.md`` and ``projects/<key>/sessions/<name>.md``. A project's key is the same
on every machine for the same repository, whatever its path:

- ``pin.NAME``: a project pinned (and allowed) as NAME;
- ``origin.<slug>-<hash>``: a git project, by its ``origin`` remote normalised (no scheme, no
  credentials, no ``.git``, the host in lower case) and, for a sub-project, its folder in the
  repository; read from git's own config file as text, never by running git in the user's
  repository;
- ``local.<machine>.<id>``: anything else (no hosted origin, no pin), by this machine's id and the
  folder's local id: backed up under this machine, never listed or materialised on another one, and
  never merged with a folder at the same path elsewhere.

The key is kept in the project's ``state/sync.remote.json`` with the commit it last matched, so a
project keeps its key after its folder is moved or deleted. Session files carry the machine they
were made on (``2026-11-24_0930@a1b2c3.md``) in the repository, so two machines never collide on a
name; locally a session made here keeps its plain name.
"""

from __future__ import annotations

import os

from keeper.store import identity, paths, pins, projects, provenance, removals, resolve
from keeper.store.fsutil import read_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MARKER = paths.SYNC_MARKER
MARKER_TEXT = '{"keeper": "memory store", "format": 1}\n'
GLOBAL = "global"


class Copy:
    """One folder of the store and the folder of the repository it syncs with."""

    __slots__ = ("dir", "key", "project", "record")

    def __init__(self, key: str, dir: str, record: str, project: paths.Project | None) -> None:
        self.key, self.dir, self.record, self.project = key, dir, record, project

    @property
    def prefix(self) -> str:
        return GLOBAL if self.key == GLOBAL else f"{paths.PROJECTS_DIR}/{self.key}"

    @property
    def memory(self) -> str:
        return os.path.join(self.dir, paths.MEMORY_FILE)

    @property
    def sessions(self) -> str:
        return os.path.join(self.dir, paths.SESSIONS_DIR)

    def __repr__(self) -> str:
        return f"Copy({self.key!r}, {self.dir!r})"


def normalise_origin(url: str) -> str | None:
    """``https://u:tok@GitHub.com/Me/Api.git`` and ``git@github.com:Me/Api`` → ``github.com/Me/Api``."""
    url = url.strip()
    if not url:
        return None
    if "://" in url:
        rest = url.split("://", 1)[1]
        host, _, path = rest.partition("/")
    elif ":" in url and "/" not in url.split(":", 1)[0]:
        host, _, path = url.partition(":")
    else:
        return None  # a local path: not the same on another machine
    host = host.rsplit("@", 1)[-1].lower()
    if host.startswith("[") and "]" in host:
        host = host[: host.index("]") + 1]
    elif host.count(":") == 1:
        host = host.split(":")[0]
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.strip("/")
    return f"{host}/{path}" if host and path else None


def _git_config(top: str) -> str | None:
    """The path of the config file of the repository whose work tree top is ``top``."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        return os.path.join(dot, "config")
    try:
        with open(dot, encoding="utf-8", errors="replace") as fh:
            line = fh.readline().strip()
    except (OSError, ValueError):
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = os.path.join(top, line[len("gitdir:") :].strip())
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as fh:
            gitdir = os.path.join(gitdir, fh.readline().strip())
    except OSError:
        pass
    return os.path.join(gitdir, "config")


def read_origin(root: str) -> tuple[str, str] | None:
    """``(normalised origin, the root's folder within the repository)`` for a project root."""
    top = root
    while not os.path.lexists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent
    config = _git_config(top)
    if config is None:
        return None
    try:
        with open(config, "rb") as fh:
            text = fh.read(256 << 10).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    in_origin = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            head = line.strip("[]").strip()
            in_origin = head.replace("'", '"') in ('remote "origin"',)
            continue
        if in_origin and "=" in line:
            name, _, value = line.partition("=")
            if name.strip().lower() == "url":
                norm = normalise_origin(value.strip().strip('"'))
                if norm:
                    sub = os.path.relpath(root, top).replace(os.sep, "/")
                    return norm, "" if sub == "." else sub
    return None


def key_for(project: paths.Project, allowed_pins: set[str], machine: str) -> str:
    """The project's folder name in the repository (see the module's help)."""
    if project.id in allowed_pins:
        return "pin." + project.id
    found = read_origin(project.root) if os.path.isdir(project.root) else None
    if found:
        norm, sub = found
        name = sub.rsplit("/", 1)[-1] if sub else norm.rsplit("/", 1)[-1]
        digest = identity.sha256_hex(f"{norm}\n{sub}".encode("utf-8", "surrogatepass"))[:12]
        return f"origin.{identity.slugify(name)}-{digest}"
    return f"local.{machine}.{project.id}"


def allowed_pins() -> set[str]:
    return {pin.name for pin in pins.read().allowed}


def is_key(name: str) -> bool:
    kind, dot, rest = name.partition(".")
    return bool(dot) and kind in ("pin", "origin", "local") and _safe(rest)


def _safe(name: str) -> bool:
    return bool(name) and os.path.basename(name) == name and name not in (".", "..") and "\\" not in name


def local_dir_for(key: str) -> str:
    """Where a key no project of this machine claims lands: ``projects/<name>``, the name the pin or
    the id would use here, so a later pin or clone finds it."""
    return os.path.join(paths.projects_dir(), key.partition(".")[2])


def _holds_memory(folder: str) -> bool:
    if os.path.isfile(os.path.join(folder, paths.MEMORY_FILE)):
        return True
    try:
        with os.scandir(os.path.join(folder, paths.SESSIONS_DIR)) as entries:
            return any(is_session(e.name) for e in entries)
    except OSError:
        return False


def local_copies(machine: str) -> list[Copy]:
    """The global memory and every project of this store that holds memory, each with its key (a
    key recorded before keys of unshared projects named their machine is made anew, and so is this
    machine's own ``local.`` key once its folder has a hosted origin or an allowed pin)."""
    copies = [Copy(GLOBAL, paths.global_dir(), "", None)]
    pinned = allowed_pins()
    try:
        names = sorted(os.listdir(paths.projects_dir()))
    except OSError:
        names = []
    for name in names:
        folder = os.path.join(paths.projects_dir(), name)
        if not os.path.isdir(folder):
            continue
        key = projects.sync_record(folder).key
        root = resolve.recorded_root(folder)
        project = paths.Project(root or folder, name, folder)
        if not is_key(key) or (key.startswith("local.") and not _mine(key, machine)):
            if not _holds_memory(folder) and not root:
                continue  # neither memory nor a project of this machine (a cleared or empty folder)
            key = key_for(project, pinned, machine)
        elif key.startswith("local.") and root:
            key = key_for(project, pinned, machine)  # its folder may have an origin or a pin now: shared from here on
        copies.append(Copy(key, folder, os.path.join(folder, paths.STATE_DIR, paths.PROJECT_SYNC), project))
    return copies


def _mine(key: str, machine: str) -> bool:
    return key.startswith(f"local.{machine}.")


def machine() -> str:
    """This machine's id in sync (``sync.json``); empty before the first ``--remote``."""
    found = read_json(paths.sync_file()).get("machine")
    return found if isinstance(found, str) else ""


def is_session(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".") and "/" not in name and "\\" not in name


tree_name = removals.tree_name  # a session file's name in the repository: its maker's machine id added once


def store_name(name: str, machine: str) -> str:
    """A session file's name in this store: a session made here keeps its plain name."""
    suffix = f"@{machine}.md"
    return name[: -len(suffix)] + ".md" if name.endswith(suffix) else name


def _holder(key: str) -> str | None:
    """The folder that holds a repository's memory no project of this machine claims yet: the one a
    sync made (``local_dir_for``), else one ``keeper import`` filled under the exporting machine's
    id; a folder with a recorded root is a project of this machine's own."""
    first = local_dir_for(key)
    return next((folder for folder, k in _unclaimed(first) if k == key), None)


def _unclaimed(first: str = "") -> Iterator[tuple[str, str]]:
    """The store's folders that hold a repository's memory no project of this machine claims (a
    recorded key, no recorded root), with their keys; ``first`` looked at first."""
    try:
        others = sorted(os.path.join(paths.projects_dir(), n) for n in os.listdir(paths.projects_dir()))
    except OSError:
        others = []
    for folder in [first, *(f for f in others if f != first)] if first else others:
        key = projects.sync_record(folder).key
        if key and not os.path.exists(os.path.join(folder, paths.STATE_DIR, paths.ROOT_RECORD)):
            yield folder, key


def adopt(project: paths.Project) -> bool:
    """Give a project new on this machine the memory its repository already has here by sync or
    by ``keeper import`` (an archive of that repository imported before any project here was it).

    A clone's first session: its folder's id is new, but a sync or an import may already have
    brought its repository's memory (by origin or pin) into a folder no project of this machine
    claimed. That folder's files move into the project, with their base commit, so this session
    starts with them. Costs one stat when the project has memory (the hooks call it only once a
    remote is recorded, or while ``keeper import`` marks a project waiting, ``paths.WAITING``: the
    mark goes once none waits).
    """
    if os.path.exists(project.memory) or os.path.exists(project.sync_record):
        return False
    took = _adopt(project)
    if os.path.exists(paths.waiting_file()) and all(f == project.dir for f, _ in _unclaimed()):
        try:
            os.remove(paths.waiting_file())  # no imported project waits for its clone any more
        except OSError:
            pass
    return took


def _adopt(project: paths.Project) -> bool:
    key = key_for(project, allowed_pins(), machine())
    if key.startswith("local."):
        return False
    from keeper.store.fsutil import atomic_write, ensure_dir, project_lock

    holder = _holder(key)
    if holder is None or holder == project.dir:
        # Nothing here yet (or another project of this machine has it): the next sync fills this one.
        if os.path.exists(paths.sync_file()):
            atomic_write(project.sync_record, projects.SyncRecord(key).dump())
        return False

    with project_lock(os.path.join(holder, paths.LOCK_FILE)), project_lock(project.lock):
        if os.path.exists(project.memory) or not os.path.isdir(holder):
            return False
        ensure_dir(project.state)
        for sub in (paths.SESSIONS_DIR,):
            src = os.path.join(holder, sub)
            if os.path.isdir(src):
                ensure_dir(os.path.join(project.dir, sub))
                for name in os.listdir(src):
                    target = os.path.join(project.dir, sub, name)
                    if not os.path.lexists(target):
                        os.replace(os.path.join(src, name), target)
        os.replace(os.path.join(holder, paths.STATE_DIR, paths.PROJECT_SYNC), project.sync_record)
        # the record of removals, and which lines of memory.md are Keeper's (without it the next save
        # here would keep the other machine's Current State beside its own)
        for record in (paths.REMOVALS, paths.OWNED_LINES):
            if os.path.exists(os.path.join(holder, paths.STATE_DIR, record)):
                os.replace(os.path.join(holder, paths.STATE_DIR, record), os.path.join(project.state, record))
        if os.path.exists(os.path.join(holder, paths.MEMORY_FILE)):
            os.replace(os.path.join(holder, paths.MEMORY_FILE), project.memory)
        provenance.take(holder, project.dir)
    import shutil

    shutil.rmtree(holder, ignore_errors=True)
    return True
