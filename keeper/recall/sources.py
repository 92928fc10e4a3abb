"""The memory sources Keeper reads, the scope each belongs to, and the one safe way to read them.

Recall, automatic recall, SessionStart, status and the hub all ask here which files hold memory
for a project: the project's own memory.md and session files (scope ``project``), the global
memory (``global``), the repository's team memory (``team``, ``.claude/keeper/team.md`` in the
work tree; off with ``team: false``) and Claude Code's own auto memory of the project
(``native``, read only). Each file has an index name (``memory.md``, ``sessions/<file>``,
``global/memory.md``, ``team/team.md``, ``native/<file>``) and ``path_of`` is the only way from a
name to a file: a name that is not one of these (a tampered index, a crafted result id) leads
nowhere.

Files outside Keeper's store are untrusted: only regular files directly inside their folder are
read (no links, FIFOs, devices or folders), opened without blocking and read up to a size cap.
"""

from __future__ import annotations

import os
import stat

from keeper.store import fsutil, paths, repo

PROJECT = "project"
GLOBAL = "global"
NATIVE = "native"
TEAM = "team"
SCOPES = (PROJECT, GLOBAL, "all")  # what `keeper recall --scope` takes; team notes count as the project's

GLOBAL_NAME = f"{paths.GLOBAL_DIR}/{paths.MEMORY_FILE}"
TEAM_NAME = "team/team.md"
NATIVE_PREFIX = "native/"
NATIVE_TITLE = "Claude Code auto memory: "
NATIVE_LIMIT = 200  # files of Claude Code's auto memory read at most
MAX_BYTES = 8 << 20  # read at most this much of one of Keeper's own files: memory is text, far smaller
TEAM_BYTES = 256 << 10  # the repository's team.md: a file of any size a repository can bring
NATIVE_BYTES = 1 << 20  # one file of Claude Code's auto memory (its own files are a few KB)
LABELS = {
    GLOBAL: "[global memory] ",
    NATIVE: "[Claude Code auto memory] ",
    TEAM: "[team notes] ",
}  # how Claude is shown a result's source


def native_dir(project: paths.Project) -> str:
    """Where Claude Code keeps its own auto memory for this project (read, never written)."""
    encoded = "".join(c if c.isalnum() else "-" for c in project.root)
    return os.path.join(paths.claude_dir(), "projects", encoded, "memory")


def storable(name: str) -> bool:
    """Whether the index can hold this file name: SQLite takes UTF-8 only, and ``os.listdir`` gives
    bytes that are not UTF-8 (a name another tool wrote in Latin-1) as surrogate escapes."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _safe_name(name: str) -> bool:
    """A plain file name: no folder part, no dot file, no parent reference, a markdown file the index can name."""
    return (
        name.endswith(".md")
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and name not in (".", "..")
        and storable(name)
    )


class Sources:
    """The sources one project's recall reads: its own files, the global memory, Claude Code's
    auto memory and, when they are on (``team: true``), the repository's team notes. Made once
    where the configuration is known, and handed on as one value."""

    __slots__ = ("project", "team")

    def __init__(self, project: paths.Project, team: bool = False) -> None:
        self.project, self.team = project, team

    def outside(self) -> dict[str, str]:
        """Index name -> path of the files recall searches beside the project's own folder."""
        return _outside(self.project, self.team)

    def path_of(self, name: str) -> str | None:
        """The file of an index name, as ``path_of``, the team notes only when they are on."""
        return path_of(self.project, name) if self.team or name != TEAM_NAME else None


def _outside(project: paths.Project, team: bool) -> dict[str, str]:
    """The global memory, the team memory when ``team`` (and it is a regular file, not a link),
    and the regular files of Claude Code's auto memory folder (at most ``NATIVE_LIMIT``): links
    out of it, FIFOs, devices and folders named like files are skipped."""
    found = {GLOBAL_NAME: paths.global_memory_file()}
    if team and repo.team_file(project):
        found[TEAM_NAME] = project.team
    folder = native_dir(project)
    if os.path.islink(folder) or os.path.islink(os.path.dirname(folder)):
        return found  # the project's auto memory folder leads elsewhere: not Claude Code's for it
    try:
        names = sorted(n for n in os.listdir(folder) if _safe_name(n))
    except (OSError, ValueError):
        names = []
    kept = [n for n in names[: NATIVE_LIMIT * 2] if repo.regular(os.path.join(folder, n))][:NATIVE_LIMIT]
    found.update((NATIVE_PREFIX + n, os.path.join(folder, n)) for n in kept)
    return found


def path_of(project: paths.Project, name: str) -> str | None:
    """The file an index name stands for, or None when the name is not one a source can have."""
    if name == paths.MEMORY_FILE:
        return project.memory
    if name == GLOBAL_NAME:
        return paths.global_memory_file()
    if name == TEAM_NAME:
        return repo.team_file(project)
    folder, _, file = name.partition("/")
    if not _safe_name(file):
        return None
    if folder == paths.SESSIONS_DIR:
        return os.path.join(project.sessions, file)
    if folder + "/" == NATIVE_PREFIX:
        return os.path.join(native_dir(project), file)
    return None


def scope_of(name: str) -> str:
    """``global``, ``team`` or ``native`` for those sources' files, else ``project``."""
    if name == GLOBAL_NAME:
        return GLOBAL
    if name == TEAM_NAME:
        return TEAM
    return NATIVE if name.startswith(NATIVE_PREFIX) else PROJECT


def title_of(name: str) -> str | None:
    """The heading a file's sections carry, where it is not the file's own ``#`` heading."""
    return NATIVE_TITLE + name[len(NATIVE_PREFIX) :] if name.startswith(NATIVE_PREFIX) else None


def read_named(path: str, name: str | None) -> str | None:
    """The file of this index name as its source allows: Keeper's own files up to ``MAX_BYTES``;
    files Keeper did not write (team.md, the auto memory) less, and only when they are text."""
    if name == TEAM_NAME:
        return read(path, TEAM_BYTES, text_only=True)
    if name is not None and name.startswith(NATIVE_PREFIX):
        return read(path, NATIVE_BYTES, text_only=True)
    return read(path)


def in_scope(name: str, scope: str) -> bool:
    """Whether recall with ``--scope scope`` searches the file of this index name."""
    return scope == "all" or (scope == GLOBAL) == (name == GLOBAL_NAME)


def name_of(project: paths.Project, path: str) -> str | None:
    """The index name of a file a result came from; None when it belongs to no source."""
    if path == project.memory:
        return paths.MEMORY_FILE
    if path == paths.global_memory_file():
        return GLOBAL_NAME
    if path == project.team:
        return TEAM_NAME
    folder, file = os.path.split(path)
    if folder == project.sessions:
        return f"{paths.SESSIONS_DIR}/{file}"
    if folder == native_dir(project):
        return NATIVE_PREFIX + file
    return None


def read(path: str, limit: int = MAX_BYTES, text_only: bool = False) -> str | None:
    """A source file's text, or None: only a regular file (not a link), opened without blocking,
    at most ``limit`` bytes of it (a cut falls on a line end); with ``text_only``, only when those
    bytes read as text (``_text_lines``). Undecodable bytes are replaced."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = fsutil.shared(lambda: os.open(path, flags))  # a file being replaced on Windows is waited for
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1 or limit]
    if text_only and b"\0" in data:
        found = _text_lines(data)
        if found is None:
            return None
        data = found
    return data.decode("utf-8", errors="replace")


def _text_lines(data: bytes) -> bytes | None:
    """A note that holds a NUL here and there (a teammate's editor, a merge gone wrong) without the
    lines that hold one: one such line no longer hides every other team note. None for a binary
    file named like a note: NUL bytes in more than one of every hundred."""
    if data.count(b"\0") * 100 > len(data):
        return None
    return b"".join(line for line in data.splitlines(keepends=True) if b"\0" not in line)
