"""Saving team memory: the one place Keeper writes into a repository, ``.claude/keeper/team.md``.

Only an explicit team save writes here (``keeper save --team`` or ``scope: team``), already
redacted. The repository is not Keeper's: its folders may be links (swapped in at any moment),
its team.md a link, a FIFO, a huge or a binary file. So the folders are opened one by one from
the work tree with ``O_NOFOLLOW`` and every later step works relative to the open folder, never
through its name again: no link at any level, now or mid-save, can send the write elsewhere, and
nothing lands inside ``.git``. A file Keeper cannot read as text is left alone with a message.
Beside team.md Keeper adds the one line git needs to merge it (``.gitattributes``:
``team.md merge=union``) when that file does not exist yet. Files get ordinary permissions:
teammates read them from git.
"""

from __future__ import annotations

import os
import stat

from keeper.errors import KeeperError
from keeper.memory import team
from keeper.store import paths, repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from keeper.memory.document import MergeReport, SaveInput

MAX_BYTES = 1 << 20  # a team.md larger than this is not edited by a save: it is someone's to trim
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_RACE_FREE = (
    os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd
)  # not on Windows (os.replace, the same call, is not listed)


def _refuse(message: str) -> KeeperError:
    return KeeperError(f"{message}; team memory was not saved (nothing else of this save was written either).")


def check(project: paths.Project) -> None:
    """Refuse before anything is written when team.md cannot be saved here, saying why."""
    if repo.work_tree(project.checkout) is None:
        raise _refuse(
            f"{project.checkout} is not in a git repository, and team memory is committed with the code: "
            "run the save in the repository's folder"
        )
    parts = paths.TEAM_DIR.split(os.sep)
    here = project.checkout
    for part in [*parts, paths.TEAM_FILE]:
        here = os.path.join(here, part)
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise _refuse(f"{here} is a symbolic link; Keeper writes team memory only inside the repository")
        wanted_dir = part != paths.TEAM_FILE
        if wanted_dir and not stat.S_ISDIR(st.st_mode):
            raise _refuse(f"{here} is not a folder; move it away")
        if not wanted_dir and not stat.S_ISREG(st.st_mode):
            raise _refuse(f"{here} is not a regular file; move it away")


def _open_folder(checkout: str) -> int:
    """``.claude/keeper`` of the work tree, opened without following a link at any level (made
    where missing); a descriptor the caller closes."""
    fd = os.open(checkout, _DIR_FLAGS & ~_NO_FOLLOW)  # the work tree itself may be reached by a link
    try:
        for part in paths.TEAM_DIR.split(os.sep):
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refuse(f"{os.path.join(checkout, part)} cannot be opened as a folder ({exc.strerror})") from None
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _read_at(fd: int, name: str, where: str, close: bool = False) -> str | None:
    """The text of ``name`` in the open folder (closed after with ``close``), or None when there is
    none; refused when not a regular file, too large or not text."""
    try:
        file = os.open(name, os.O_RDONLY | _NO_FOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refuse(f"{where} cannot be read ({exc.strerror})") from None
    finally:
        if close:
            os.close(fd)
    try:
        st = os.fstat(file)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(f"{where} is not a regular file; move it away")
        if st.st_size > MAX_BYTES:
            raise _refuse(f"{where} is {st.st_size // 1024} KB, more than a team memory should hold; trim it by hand")
        data = os.read(file, MAX_BYTES + 1)
    finally:
        os.close(file)
    if b"\0" in data:
        raise _refuse(f"{where} is not text (it holds NUL bytes); restore it from git")
    return data.decode("utf-8", "surrogateescape")


def _read_team(path: str) -> str | None:
    """team.md's text by its checked path (``repo.team_file``), bounded and never blocking."""
    if _RACE_FREE:
        return _read_at(os.open(os.path.dirname(path), _DIR_FLAGS), paths.TEAM_FILE, path, close=True)
    with open(path, "rb") as fh:  # Windows: no FIFO or link to meet here
        raw = fh.read(MAX_BYTES + 1)
    return None if len(raw) > MAX_BYTES or b"\0" in raw else raw.decode("utf-8", "surrogateescape")


def _write_at(fd: int, name: str, text: str) -> None:
    """Replace ``name`` in the open folder atomically: a new file beside it, then a rename."""
    umask = os.umask(0)
    os.umask(umask)
    tmp = f".{name}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW
    try:
        os.unlink(tmp, dir_fd=fd)  # left by a killed save of this pid
    except FileNotFoundError:
        pass
    file = os.open(tmp, flags, 0o666 & ~umask, dir_fd=fd)
    try:
        with os.fdopen(file, "wb") as fh:
            fh.write(text.encode("utf-8", "surrogateescape"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=fd)
        except OSError:
            pass
        raise


def _save_by_name(project: paths.Project, data: SaveInput, now: datetime) -> tuple[MergeReport, int]:
    """The same save where folders cannot be opened relative to each other (Windows): checked
    by name just before, as close to the write as the platform allows."""
    from keeper.store.fsutil import atomic_write

    check(project)
    folder = os.path.dirname(project.team)
    os.makedirs(folder, exist_ok=True)
    check(project)
    real, top = os.path.realpath(folder), os.path.realpath(project.checkout)
    if not real.startswith(top.rstrip(os.sep) + os.sep) or ".git" in real[len(top) :].split(os.sep):
        raise _refuse(f"{folder} leads out of the repository's files")
    text = _read_team(project.team) if os.path.lexists(project.team) else None
    if text is None and os.path.lexists(project.team):
        raise _refuse(f"{project.team} is too large or not text")
    merged, report, tidied = team.merge(text, data, project_name=os.path.basename(project.checkout), now=now)
    if merged != text:
        atomic_write(project.team, merged)
    attributes = os.path.join(folder, paths.TEAM_ATTRIBUTES)
    if not os.path.lexists(attributes):
        atomic_write(attributes, team.ATTRIBUTES)
    return report, tidied


def save(project: paths.Project, data: SaveInput, now: datetime) -> tuple[MergeReport, int]:
    """Merge a save's team part into team.md (call under the project lock, after ``check``);
    return the report and how many leftovers of a textual merge were tidied."""
    if not _RACE_FREE:
        return _save_by_name(project, data, now)
    fd = _open_folder(project.checkout)  # no link at any level: it is <checkout>/.claude/keeper itself
    try:
        text = _read_at(fd, paths.TEAM_FILE, project.team)
        merged, report, tidied = team.merge(text, data, project_name=os.path.basename(project.checkout), now=now)
        if merged != text:
            _write_at(fd, paths.TEAM_FILE, merged)
        try:
            os.lstat(paths.TEAM_ATTRIBUTES, dir_fd=fd)
        except FileNotFoundError:
            _write_at(fd, paths.TEAM_ATTRIBUTES, team.ATTRIBUTES)
    finally:
        os.close(fd)
    return report, tidied


# Nothing of the repository's may run: no fsmonitor, no hooks, and no transport at all, so a
# partial clone's missing object is never fetched (which would run its ssh command or helper).
GIT_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull, "-c", "protocol.allow=never")


def git_state(project: paths.Project) -> str:
    """Whether team.md is ``committed`` (as in HEAD), ``uncommitted`` (changed, or not in HEAD),
    ``none`` (no file), ``unreadable`` (a link, FIFO, huge or binary file), or ``unknown`` (not a
    git work tree, or git is missing or refuses it).

    The file's blob id is computed here from its bytes (git's own rule), so git never reads the
    file or runs a filter; git is asked one thing only, HEAD's blob id (``rev-parse``), with
    nothing of the repository's able to run.
    """
    from keeper import process

    if not os.path.lexists(project.team):
        return "none"
    path = repo.team_file(project)
    try:
        data = _read_team(path) if path else None
    except KeeperError:
        data = None
    if data is None:
        return "unreadable"
    git = process.which("git")
    if git is None:
        return "unknown"
    rel = "./" + os.path.relpath(project.team, project.checkout).replace(os.sep, "/")
    env = {"GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0"}
    try:
        head = process.run(
            [git, *GIT_SAFE, "rev-parse", "--verify", "--quiet", f"HEAD:{rel}"],
            cwd=project.checkout,
            timeout=10,
            env=env,
            check=False,
        )
    except process.ProcessFailed:
        return "unknown"
    if head.returncode != 0:
        inside = process.run(
            [git, *GIT_SAFE, "rev-parse", "--is-inside-work-tree"],
            cwd=project.checkout,
            timeout=10,
            env=env,
            check=False,
        )
        return "uncommitted" if inside.returncode == 0 and inside.stdout.strip() == b"true" else "unknown"
    wanted = head.stdout.strip().decode("ascii", "replace")
    blob = data.encode("utf-8", "surrogateescape")
    return "committed" if _blob_id(blob, len(wanted)) == wanted else "uncommitted"


def _blob_id(data: bytes, width: int) -> str:
    """git's object id of a file's bytes: SHA-1 (40 hex digits) or, in a SHA-256 repository, SHA-256."""
    import hashlib

    header = b"blob %d\0" % len(data)
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(header + data).hexdigest()
