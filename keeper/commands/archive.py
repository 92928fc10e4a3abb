"""``keeper export`` and ``keeper import``: the store's memory in one zip, and back without loss.

An archive holds only what cannot be rebuilt: each project's ``memory.md``, its session files and
``state/memory.json`` (the record of which memory.md lines Keeper wrote: without it a restored
store would take Keeper's own state and recent-context lines for a person's and keep them for
ever), the global ``memory.md``, and a manifest. Indexes, counters, hook stats, caches, logs and
the trash are derived or local to a machine and stay out.

Import trusts nothing in the archive. Only Keeper's own layout is read (anything else is named and
skipped, never extracted by its name), every member is read in chunks against a size cap whatever
its header claims, and the whole archive is read and checked before the first byte is written.
What it holds then lands through the one landing path sync uses too (``keeper.exchange.landing``):
nothing is overwritten, a session already here under any name is recognised, memory.md is merged.
"""

from __future__ import annotations

import json
import os
import re
import stat

from keeper import __version__
from keeper.commands import common
from keeper.errors import KeeperError
from keeper.records import Record
from keeper.store import identity, paths, repo
from keeper.store.fsutil import atomic_write, project_lock
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import zipfile
    from typing import Any

    from keeper.exchange.landing import Incoming, Landed

MANIFEST = "keeper-export.json"
FORMAT = 1  # the manifest's "format": an archive from a newer layout is refused, not misread
PROVENANCE = paths.OWNED_LINES
MAX_MEMBER = paths.MAX_FILE  # bytes of one member, decompressed: memory files are text, far smaller
MAX_TOTAL = 256 << 20  # bytes of all members read, decompressed
MAX_MEMBERS = 20_000
_CHUNK = 1 << 16


class _Skip(Exception):
    """A member that is not one of Keeper's files; the message says why."""


class ProjectFiles:
    """One project's files as an archive carries them (text, already checked)."""

    __slots__ = ("memory", "origins", "provenance", "sessions")

    def __init__(self) -> None:
        self.memory: str | None = None
        self.provenance: str | None = None
        self.origins: str | None = None  # provenance.jsonl: where each item came from (keeper.store.provenance)
        self.sessions: dict[str, str] = {}

    def is_empty(self) -> bool:
        return self.memory is None and not self.sessions

    def redact(self, folder: paths.Project) -> None:
        """Every text redacted as a save into ``folder`` is (the built-in rules and its patterns), as
        what a sync pushes is: memory.md is edited by hand and a pattern may be newer than a save;
        an import of the archive would redact it so anyway."""
        from keeper import redact
        from keeper.exchange.landing import patterns

        rules = patterns(folder)
        self.memory, self.origins = (
            redact.redact(t, rules) if t is not None else None for t in (self.memory, self.origins)
        )
        self.sessions = {name: redact.redact(text, rules) for name, text in self.sessions.items()}
        if self.provenance is not None:
            owned = json.loads(self.provenance)
            hidden = redact.redact_values(owned, rules)
            self.provenance = self.provenance if hidden == owned else json.dumps(hidden, ensure_ascii=False)


class Listed(Record):
    """One project as the manifest lists it: for a person reading the archive, and its repository
    (``key``: its folder's name in a sync repository, ``origin.…`` or ``pin.…``; None for a project
    of one machine), by which import finds the same repository's project here whatever its path."""

    __slots__ = ("id", "key", "name", "root", "sessions")

    def __init__(self, id: str, name: str | None, root: str | None, sessions: int, key: str | None = None) -> None:
        self.id, self.name, self.root, self.sessions, self.key = id, name, root, sessions, key


class Manifest(Record):
    """The archive's ``keeper-export.json``: its layout's ``format`` (0 when not given), the Keeper that
    made it, when, its scope, the projects it holds and whether the global memory is in it. Import
    reads the format and the maker; the rest is for people."""

    __slots__ = ("created", "format", "has_global", "keeper", "projects", "scope")

    def __init__(
        self,
        format: int = 0,
        keeper: str | None = None,
        created: str = "",
        scope: str = "",
        projects: list[Listed] | None = None,
        has_global: bool = False,
    ) -> None:
        self.format, self.keeper, self.created, self.scope = format, keeper, created, scope
        self.projects, self.has_global = projects or [], has_global

    @classmethod
    def parse(cls, data: object) -> Manifest:
        found = data if isinstance(data, dict) else {}
        made, keeper, created, scope, listed = (
            found.get(k) for k in ("format", "keeper", "created", "scope", "projects")
        )
        projects = [
            Listed(
                p["id"],
                p.get("name") if isinstance(p.get("name"), str) else None,
                p.get("root") if isinstance(p.get("root"), str) else None,
                p["sessions"] if isinstance(p.get("sessions"), int) and not isinstance(p.get("sessions"), bool) else 0,
                _shared(p.get("key")),
            )
            for p in (listed if isinstance(listed, list) else [])
            if isinstance(p, dict) and isinstance(p.get("id"), str)
        ]
        return cls(
            made if isinstance(made, int) and not isinstance(made, bool) else 0,
            keeper if isinstance(keeper, str) else None,
            created if isinstance(created, str) else "",
            scope if isinstance(scope, str) else "",
            projects,
            found.get("global") is True,
        )

    def dump(self) -> str:
        listed = [
            {"id": p.id, "name": p.name, "root": p.root, "sessions": p.sessions, **({"key": p.key} if p.key else {})}
            for p in self.projects
        ]
        fields = {"format": self.format, "keeper": self.keeper, "created": self.created, "scope": self.scope}
        return (
            json.dumps({**fields, "projects": listed, "global": self.has_global}, indent=1, ensure_ascii=False) + "\n"
        )


def _shared(key: object) -> str | None:
    """A project key of a repository shared between machines (``sync.mirror``), else None."""
    from keeper.sync import mirror

    return key if isinstance(key, str) and mirror.is_key(key) and not key.startswith("local.") else None


def _key_here(folder: str) -> str | None:
    """The repository a project folder of this store is (``sync.mirror.key_for``), if it is shared."""
    from keeper.store import projects, resolve
    from keeper.sync import mirror

    root = resolve.recorded_root(folder)
    if root and os.path.isdir(root):
        project = paths.Project(root, os.path.basename(folder), folder)
        return _shared(mirror.key_for(project, mirror.allowed_pins(), mirror.machine()))
    return _shared(projects.sync_record(folder).key)


class Archive:
    """What an archive holds that Keeper can use, and the members it refused with the reason."""

    def __init__(self) -> None:
        self.manifest = Manifest()
        self.projects: dict[str, ProjectFiles] = {}
        self.global_memory: str | None = None
        self.global_origins: str | None = None
        self.refused: list[tuple[str, str]] = []


def place(name: str) -> tuple[str, str, str]:
    """Where an archive member belongs: ``(kind, project id, file name)``; _Skip for anything else.

    Kinds: ``manifest``, ``global``, ``memory``, ``provenance``, ``origins``, ``session``.
    """
    if "\\" in name:
        raise _Skip("a backslash in the name (a Windows path)")
    if name.startswith("/"):
        raise _Skip("an absolute path")
    if re.match(r"[A-Za-z]:", name):
        raise _Skip("a drive letter")
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise _Skip("an empty, '.' or '..' part in the path")
    if parts == [MANIFEST]:
        return "manifest", "", MANIFEST
    pid = ""
    if parts[0] == paths.PROJECTS_DIR and len(parts) >= 3:
        try:
            pid = identity.check_pinned_name(parts[1], "archive")
        except KeeperError:
            raise _Skip(f"project id {parts[1]!r} is not a safe folder name") from None
    found = paths.file_kind(name)  # the store's own list of what it holds
    in_sessions = pid != "" and len(parts) == 4 and parts[2] == paths.SESSIONS_DIR
    if in_sessions and (found != paths.SESSION or not paths.safe_session_name(parts[-1])):
        raise _Skip("not a safe session file name")
    if found is not None:
        return _MEMBER_KINDS[found] if pid or found != paths.MEMORY else "global", pid, parts[-1]
    if pid and parts[2:] == [paths.STATE_DIR, PROVENANCE]:
        return "provenance", pid, PROVENANCE  # which memory.md lines Keeper wrote: machine-local, yet carried
    raise _Skip("not a file Keeper exports")


# An archive's name for each kind of durable file (``paths.file_kind``).
_MEMBER_KINDS = {paths.MEMORY: "memory", paths.PROVENANCE: "origins", paths.SESSION: "session"}


def _text(data: bytes, kind: str) -> str:
    """A member's bytes as the text Keeper keeps; _Skip for what is not UTF-8 (or JSON where due)."""
    if len(data) > MAX_MEMBER:
        raise _Skip(f"larger than {MAX_MEMBER >> 20} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Skip("not UTF-8 text (memory files are text)") from None
    if kind in ("manifest", "provenance"):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # nested past Python's limit: refused like any bad JSON
            raise _Skip("not valid JSON") from None
        if not isinstance(value, dict):
            raise _Skip("not a JSON object")
    return text


def _add(archive: Archive, kind: str, pid: str, name: str, text: str) -> None:
    if kind == "manifest":
        archive.manifest = Manifest.parse(json.loads(text))
    elif kind == "global":
        archive.global_memory = text
    elif kind == "origins" and not pid:
        archive.global_origins = text
    else:
        files = archive.projects.setdefault(pid, ProjectFiles())
        if kind == "memory":
            files.memory = text
        elif kind == "provenance":
            files.provenance = text
        elif kind == "origins":
            files.origins = text
        else:
            files.sessions[name] = text


# -- export ------------------------------------------------------------------------------------


def _take(archive: Archive, member: str, path: str) -> None:
    """Add a store file to the export as ``member``, if it exists; what import would refuse is left out."""
    if not os.path.isfile(path):
        return
    try:
        kind, pid, name = place(member)
        with open(path, "rb") as fh:
            text = _text(fh.read(MAX_MEMBER + 1), kind)
    except _Skip as why:
        archive.refused.append((path, str(why)))
        return
    _add(archive, kind, pid, name, text)


def _take_project(archive: Archive, folder: str, pid: str) -> None:
    """Add one project's files (``paths.durable_files``) and the record of which memory.md lines are
    Keeper's, read under its lock (a save writes memory.md and memory.json together), redacted."""
    if not os.path.isdir(folder):
        return
    at = f"{paths.PROJECTS_DIR}/{pid}"
    with project_lock(os.path.join(folder, paths.LOCK_FILE)):
        for kind, path in paths.durable_files(folder, at):
            _take(archive, f"{at}/{os.path.relpath(path, folder).replace(os.sep, '/')}", path)
            if kind == paths.MEMORY:
                record = os.path.join(folder, paths.STATE_DIR, PROVENANCE)
                _take(archive, f"{at}/{paths.STATE_DIR}/{PROVENANCE}", record)
    if pid in archive.projects:
        archive.projects[pid].redact(paths.Project("", pid, folder))


def _title(text: str | None) -> str | None:
    """The project name memory.md's title gives (``# Project Memory: <name>``)."""
    from keeper.markdown import Document

    found = Document.parse(text).title() if text else None
    prefix = "Project Memory:"
    return found.title[len(prefix) :].strip() if found and found.title.startswith(prefix) else None


def collect(project: paths.Project | None) -> Archive:
    """The files an export carries: one project's, or every project's and the global memory."""
    archive = Archive()
    base = paths.projects_dir()
    if project is not None:
        ids = [project.id]
    else:
        try:
            ids = sorted(n for n in os.listdir(base) if os.path.isdir(os.path.join(base, n)))
        except FileNotFoundError:
            ids = []
        for _, path in paths.durable_files(paths.global_dir(), paths.GLOBAL_DIR):
            _take(archive, f"{paths.GLOBAL_DIR}/{os.path.basename(path)}", path)
        _redact_global(archive)
    for pid in ids:
        try:
            identity.check_pinned_name(pid, "store")
        except KeeperError:
            archive.refused.append((os.path.join(base, pid), "not a project id Keeper makes"))
            continue
        _take_project(archive, os.path.join(base, pid), pid)
    archive.projects = {pid: files for pid, files in archive.projects.items() if not files.is_empty()}
    return archive


def _redact_global(archive: Archive) -> None:
    """The global memory and its record redacted as a global save is (the global patterns)."""
    from keeper.exchange.landing import GLOBAL

    files = ProjectFiles()
    files.memory, files.origins = archive.global_memory, archive.global_origins
    files.redact(paths.Project("", GLOBAL, paths.global_dir()))
    archive.global_memory, archive.global_origins = files.memory, files.origins


def _members(archive: Archive) -> list[tuple[str, str]]:
    found = [(MANIFEST, archive.manifest.dump())]
    if archive.global_memory is not None:
        found.append((f"global/{paths.MEMORY_FILE}", archive.global_memory))
    if archive.global_origins is not None:
        found.append((f"global/{paths.PROVENANCE_FILE}", archive.global_origins))
    for pid, files in sorted(archive.projects.items()):
        if files.memory is not None:
            found.append((f"projects/{pid}/{paths.MEMORY_FILE}", files.memory))
            if files.provenance is not None:
                found.append((f"projects/{pid}/{paths.STATE_DIR}/{PROVENANCE}", files.provenance))
        if files.origins is not None:
            found.append((f"projects/{pid}/{paths.PROVENANCE_FILE}", files.origins))
        found += [(f"projects/{pid}/{paths.SESSIONS_DIR}/{n}", t) for n, t in sorted(files.sessions.items())]
    return found


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([folder, path]) == folder
    except ValueError:  # on another drive
        return False


def export(project: paths.Project | None, out: str | None) -> dict[str, Any]:
    """Write the archive (atomically, 0600) and return what it holds, for the report."""
    import io
    import zipfile
    from datetime import datetime

    now = datetime.now()
    archive = collect(project)
    if not archive.projects and archive.global_memory is None:
        where = f"project {project.id}" if project else f"the store at {paths.data_root()}"
        raise KeeperError(f"nothing to export: {where} holds no memory yet.")
    default = f"keeper-export-{now:%Y%m%d-%H%M%S}.zip"
    folder, avoided = (os.getcwd(), None) if out else default_folder()
    target = os.path.abspath(out) if out else os.path.join(folder, default)
    if os.path.isdir(target):
        target = os.path.join(target, default)
    store = os.path.realpath(paths.data_root())
    if _inside(os.path.realpath(target), store):
        raise KeeperError(f"cannot write {target}: it is inside the store; choose a place outside {store}.")
    if not os.path.isdir(os.path.dirname(target)):
        raise KeeperError(f"cannot write {target}: its folder does not exist; create it or choose another --out.")
    archive.manifest = Manifest(
        FORMAT,
        __version__,
        now.astimezone().isoformat(timespec="seconds"),
        "project" if project else "store",
        [
            Listed(
                pid,
                _title(files.memory) or (project.name if project else None),
                project.root if project else None,
                len(files.sessions),
                _key_here(os.path.join(paths.projects_dir(), pid)),
            )
            for pid, files in sorted(archive.projects.items())
        ],
        archive.global_memory is not None,
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in _members(archive):
            info = zipfile.ZipInfo(name, date_time=now.timetuple()[:6])
            info.external_attr = (stat.S_IFREG | 0o600) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text.encode("utf-8"))
    atomic_write(target, buffer.getvalue())
    return {
        "archive": target,
        "bytes": len(buffer.getvalue()),
        "projects": len(archive.projects),
        "sessions": sum(len(f.sessions) for f in archive.projects.values()),
        "global": archive.global_memory is not None,
        "left_out": [{"path": p, "reason": r} for p, r in archive.refused],
        "not_into_repository": avoided,
    }


def default_folder() -> tuple[str, str | None]:
    """Where an export goes without ``--out``: the working directory, except inside a repository,
    whose files are committed and pushed (an archive of one's memory there would travel with the
    code): then the Downloads folder, else the home folder. Also returns the repository avoided."""
    here = os.getcwd()
    repository = repo.work_tree(here)
    if repository is None:
        return here, None
    home = os.path.expanduser("~")
    downloads = os.path.join(home, "Downloads")
    return (downloads if os.path.isdir(downloads) else home), repository


def export_lines(data: dict[str, Any]) -> list[str]:
    extra = " and the global memory" if data["global"] else ""
    lines = [
        f"Exported {count(data['projects'], 'project')} with {count(data['sessions'], 'session file')}{extra} "
        f"to {data['archive']} ({data['bytes']:,} bytes)"
    ]
    if data.get("not_into_repository"):
        lines.append(
            f"  (not into the repository at {data['not_into_repository']}, where it could be committed; "
            "--out FILE writes it elsewhere)"
        )
    lines += [f"  ! left out {item['path']}: {item['reason']}" for item in data["left_out"]]
    return lines


# -- import ------------------------------------------------------------------------------------


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, room: int) -> bytes:
    """A member's real bytes, counted as they come out: headers can lie about sizes (zip bombs)."""
    parts: list[bytes] = []
    size = 0
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                return b"".join(parts)
            size += len(chunk)
            if size > MAX_MEMBER:
                raise KeeperError(f"{info.filename} unpacks to more than {MAX_MEMBER >> 20} MiB")
            if size > room:
                raise KeeperError(f"its files unpack to more than {MAX_TOTAL >> 20} MiB in all")
            parts.append(chunk)


def _load(zf: zipfile.ZipFile) -> Archive:
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise KeeperError(f"it holds {len(infos):,} entries, more than the {MAX_MEMBERS:,} Keeper accepts")
    seen: set[str] = set()
    for info in infos:
        key = info.filename.casefold()  # two names one case-insensitive disk cannot tell apart count too
        if key in seen:
            raise KeeperError(f"it holds {info.filename!r} twice, so which one is meant is unclear")
        seen.add(key)
    archive = Archive()
    room = MAX_TOTAL
    for info in infos:
        if info.is_dir():
            continue
        try:
            if stat.S_ISLNK(info.external_attr >> 16):
                raise _Skip("a symbolic link")
            kind, pid, name = place(info.filename)
            if info.flag_bits & 0x1:
                raise _Skip("encrypted")
            data = _read_member(zf, info, room)
            room -= len(data)
            text = _text(data, kind)
        except _Skip as why:
            archive.refused.append((info.filename, str(why)))
            continue
        _add(archive, kind, pid, name, text)
    made = archive.manifest.format
    if made > FORMAT:
        raise KeeperError(f"it was made by a newer Keeper (format {made}); upgrade Keeper to import it")
    return archive


def read_archive(path: str) -> Archive:
    """Read and check a whole archive before anything is written; KeeperError rejects all of it."""
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(path) as zf:
            return _load(zf)
    except KeeperError as exc:
        raise KeeperError(f"{path}: {exc}; nothing was imported.") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as exc:
        raise KeeperError(f"{path} is not a zip archive Keeper can read ({exc}); nothing was imported.") from None


def _incoming(files: ProjectFiles, folder: paths.Project) -> Incoming:
    """An archive's files for one folder as they land (``exchange.landing``): redacted exactly as a
    save into that folder is, so what it carries reaches memory and Claude's context only as a save
    would have written it."""
    from keeper.exchange.landing import Incoming, patterns

    owned = json.loads(files.provenance) if files.memory is not None and files.provenance is not None else None
    return Incoming.arrived(patterns(folder), files.memory, files.sessions, files.origins, owned)


def as_dict(landed: Landed) -> dict[str, Any]:
    """What importing one project (or the global memory) did, or would do with ``--dry-run``."""
    merge = landed.merge
    return {
        "id": landed.id,
        "dir": landed.dir,
        "memory": landed.memory or None,
        "memory_added": merge.added if merge else {},
        "memory_new_sections": merge.new_sections if merge else [],
        "memory_state_replaced": bool(merge and merge.state_replaced),
        "sessions_added": landed.added,
        "sessions_identical": landed.identical,
        "sessions_renamed": [{"from": a, "to": b} for a, b in landed.renamed],
        "sessions_removed": landed.removed,
    }


def targets(archive: Archive, only: str | None, into: paths.Project | None) -> list[tuple[ProjectFiles, paths.Project]]:
    """Which of the archive's projects go where: each to the project of the same repository here
    (its manifest's key), else to its own id; or one (``--project``) into the project
    ``--project-dir`` names, since an id made from a folder's path differs on another machine. The
    global memory comes along only with the whole archive."""
    chosen = dict(archive.projects)
    listing = ", ".join(sorted(chosen)) or "none"
    if only is not None:
        if only not in chosen:
            raise KeeperError(f"the archive holds no project {only!r}; it holds: {listing}.")
        chosen = {only: chosen[only]}
    keys = {p.id: p.key for p in archive.manifest.projects if p.key}
    here = _folders_by_key() if keys and into is None else {}
    base = paths.projects_dir()
    found = [
        (files, here.get(keys.get(pid, "")) or paths.Project("", pid, os.path.join(base, pid)))
        for pid, files in sorted(chosen.items())
    ]
    if only is None and into is None and archive.global_memory is not None:
        g = ProjectFiles()
        g.memory, g.origins = archive.global_memory, archive.global_origins
        found.append((g, paths.Project("", "global", paths.global_dir())))
    if into is not None:
        if len(chosen) != 1:
            raise KeeperError(f"the archive holds {len(chosen)} projects ({listing}); pick one with --project ID.")
        found = [(found[0][0], into)]
    return found


def _folders_by_key() -> dict[str, paths.Project]:
    """This store's projects of shared repositories, by key: where a project of the same repository
    lands, whatever its id (made from a folder's path) was on the machine that exported it."""
    found: dict[str, paths.Project] = {}
    base = paths.projects_dir()
    try:
        names = sorted(n for n in os.listdir(base) if os.path.isdir(os.path.join(base, n)))
    except OSError:
        return found
    for name in names:
        key = _key_here(os.path.join(base, name))
        if key is not None:
            found.setdefault(key, paths.Project("", name, os.path.join(base, name)))
    return found


def _note_repositories(archive: Archive, results: list[Landed]) -> None:
    """A project of a shared repository that landed in a folder of its own (no project here is that
    repository yet) records its key, as a sync would: sync then keeps it as that repository's memory,
    and the clone's first session here takes it over (``sync.mirror.adopt``, asked by the mark
    ``paths.WAITING`` where no remote is recorded), one folder in all."""
    from keeper.store import projects

    keys = {p.id: p.key for p in archive.manifest.projects if p.key}
    for result in results:
        key, record = keys.get(result.id), os.path.join(result.dir, paths.STATE_DIR, paths.PROJECT_SYNC)
        if key and _key_here(result.dir) is None and os.path.isdir(result.dir):
            atomic_write(record, projects.SyncRecord(key).dump())
            if not os.path.exists(os.path.join(result.dir, paths.STATE_DIR, paths.ROOT_RECORD)):
                atomic_write(paths.waiting_file(), key + "\n")  # for the clone's first session (``mirror.adopt``)


def import_archive(path: str, only: str | None, into: paths.Project | None, dry_run: bool) -> dict[str, Any]:
    """Import an archive (or say what importing it would do); return the report."""
    archive = read_archive(path)
    from keeper.exchange.landing import land

    results = [
        land(folder, _incoming(files, folder), dry_run=dry_run) for files, folder in targets(archive, only, into)
    ]
    if into is not None and not dry_run:  # the folder is this clone's project: sync finds its repository by it
        from keeper.store import resolve

        resolve.remember_root(into, check=True)
    elif not dry_run:
        _note_repositories(archive, results)
    return {
        "archive": os.path.abspath(path),
        "dry_run": dry_run,
        "made_by": archive.manifest.keeper,
        "projects": [as_dict(r) for r in results],
        "refused": [{"name": n, "reason": r} for n, r in archive.refused],
    }


def import_lines(data: dict[str, Any]) -> list[str]:
    verb = "Would import" if data["dry_run"] else "Imported"
    lines = [f"{verb} {data['archive']}" + (" (dry run: nothing was written)" if data["dry_run"] else "")]
    for item in data["projects"]:
        parts = []
        if item["memory"] == "merged":
            changes = [f"+{n} {title or 'top'}" for title, n in item["memory_added"].items()]
            changes += [f"new section {title}" for title in item["memory_new_sections"]]
            if item["memory_state_replaced"]:
                changes.append("Current State from the archive (newer)")
            parts.append(f"memory.md merged ({', '.join(changes)})")
        elif item["memory"]:
            parts.append(f"memory.md {item['memory']}")
        if item["sessions_added"]:
            parts.append(f"{count(len(item['sessions_added']), 'session file')} added")
        if item["sessions_identical"]:
            parts.append(f"{len(item['sessions_identical'])} already there")
        parts += [f"{r['from']} differs, added as {r['to']}" for r in item["sessions_renamed"]]
        if item["sessions_removed"]:
            parts.append(f"{count(len(item['sessions_removed']), 'session file')} removed here before, left out")
        lines.append(f"  {item['id']} ({item['dir']}): {'; '.join(parts) or 'nothing to import'}")
    if not data["projects"]:
        lines.append("  nothing Keeper can import")
    lines += [f"  ! refused {item['name']}: {item['reason']}" for item in data["refused"]]
    return lines


def run_export(args: argparse.Namespace) -> int:
    project = common.resolve_args(args).project if args.project_dir else None
    data = export(project, args.out)
    common.emit(args, data, lambda: export_lines(data))
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Exit 1 when the archive held files Keeper refused (the rest was imported), so scripts can tell."""
    into = common.resolve_args(args).project if args.project_dir else None
    if into is not None and not args.dry_run:
        from keeper.sync import mirror

        mirror.adopt(into)  # a clone whose repository's memory a sync or an import brought first: that is its memory
    data = import_archive(args.archive, args.project, into, args.dry_run)
    common.emit(args, data, lambda: import_lines(data))
    return 1 if data["refused"] else 0
