"""Saving team memory: the one place Keeper writes into a repository, ``.claude/keeper/team.md``.

Only an explicit team save writes here (``keeper save --team`` or ``scope: team``), already
redacted. The repository is not Keeper's: its folders may be links, its team.md a link, a huge or
a binary file. So the write goes only to a regular file whose folder really lies inside the work
tree, a file Keeper cannot read as text is left alone with a message, and beside team.md Keeper
adds the one line git needs to merge it (``.gitattributes``: ``team.md merge=union``) when that
file does not exist yet. Files get ordinary permissions: teammates read them from git.
"""

from __future__ import annotations

import os
import stat

from keeper.errors import KeeperError
from keeper.memory import team
from keeper.store import paths
from keeper.store.fsutil import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from keeper.memory.document import MergeReport, SaveInput

MAX_BYTES = 1 << 20  # a team.md larger than this is not edited by a save: it is someone's to trim


def _inside(path: str, folder: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def target(project: paths.Project) -> str:
    """team.md's path, checked: its folder inside the work tree (no link out), itself no link."""
    path = project.team
    folder = os.path.dirname(path)
    probe = folder
    while not os.path.lexists(probe) and probe != project.checkout:
        probe = os.path.dirname(probe)
    if not _inside(probe, project.checkout):
        raise KeeperError(
            f"{folder} leads out of the repository (a symbolic link); Keeper writes team memory only inside "
            f"{project.checkout}. Remove the link, then save again."
        )
    if os.path.islink(path):
        raise KeeperError(f"{path} is a symbolic link; replace it with a regular file, then save again.")
    return path


def _read(path: str) -> str | None:
    """team.md's text for a save, or None when there is none; KeeperError when it is not editable."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise KeeperError(f"{path} is not a regular file; move it away, then save again.")
    if st.st_size > MAX_BYTES:
        raise KeeperError(
            f"{path} is {st.st_size // 1024} KB, more than a team memory should hold ({MAX_BYTES // 1024} KB); "
            "trim it by hand, then save again."
        )
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if b"\0" in data:
        raise KeeperError(f"{path} is not text (it holds NUL bytes); restore it from git, then save again.")
    return data.decode("utf-8", "surrogateescape")


def _write(path: str, text: str) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    atomic_write(path, text)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def save(project: paths.Project, data: SaveInput, now: datetime) -> tuple[str, MergeReport, int]:
    """Merge a save's team part into team.md (call under the project lock); return the path, the
    report and how many leftovers of a textual merge were tidied."""
    path = target(project)
    text = _read(path)
    merged, report, tidied = team.merge(text, data, project_name=os.path.basename(project.checkout), now=now)
    if merged != text:
        _write(path, merged)
    attributes = os.path.join(os.path.dirname(path), paths.TEAM_ATTRIBUTES)
    if not os.path.lexists(attributes):
        _write(attributes, team.ATTRIBUTES)
    return path, report, tidied


GIT_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull)  # nothing of the repository's runs


def git_state(project: paths.Project) -> str:
    """Whether team.md is ``committed`` (as in HEAD), ``uncommitted`` (changed, or not in HEAD),
    ``none`` (no file), or ``unknown`` (not a git work tree, or git is missing).

    Runs only commands that start nothing of the repository's: ``rev-parse`` and ``hash-object
    --no-filters`` (a repository's clean filter is never run), with fsmonitor and hooks off.
    """
    import shutil

    from keeper import process

    if not os.path.lexists(project.team):
        return "none"
    git = shutil.which("git")
    if git is None:
        return "unknown"
    rel = "./" + os.path.relpath(project.team, project.checkout).replace(os.sep, "/")
    try:
        here = process.run([git, *GIT_SAFE, "hash-object", "--no-filters", "--", rel], cwd=project.checkout, timeout=10)
        head = process.run(
            [git, *GIT_SAFE, "rev-parse", "--verify", "--quiet", f"HEAD:{rel}"],
            cwd=project.checkout,
            timeout=10,
            check=False,
        )
    except process.ProcessFailed:
        return "unknown"
    if head.returncode != 0:
        inside = process.run(
            [git, *GIT_SAFE, "rev-parse", "--is-inside-work-tree"], cwd=project.checkout, timeout=10, check=False
        )
        return "uncommitted" if inside.returncode == 0 and inside.stdout.strip() == b"true" else "unknown"
    return "committed" if head.stdout.strip() == here.stdout.strip() else "uncommitted"
