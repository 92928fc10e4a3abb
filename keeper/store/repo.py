"""The repository's own files Keeper reads: team.md, checked to be the repository's and text;
and which work tree a folder lies in.

A repository is not Keeper's: its ``.claude`` may be a link, its team.md a link, a hard link to
a file elsewhere, a FIFO. Only a regular file whose folder really lies in the work tree, outside
its ``.git``, is read.
"""

from __future__ import annotations

import os
import stat

from keeper.store import paths


def team_file(project: paths.Project) -> str | None:
    """The repository's team.md when it may be read: a regular file (not a link, not a hard link
    to a file elsewhere) whose folder really lies inside the work tree and outside its ``.git``,
    not reached through a linked ``.claude`` or ``keeper``."""
    path = project.team
    st = regular(path)
    if st is None or st.st_nlink > 1:
        return None
    folder, top = os.path.realpath(os.path.dirname(path)), os.path.realpath(project.checkout)
    inside = folder.startswith(top.rstrip(os.sep) + os.sep)
    return path if inside and ".git" not in folder[len(top) :].split(os.sep) else None


def regular(path: str) -> os.stat_result | None:
    """``lstat`` of a regular file that is not a link; None for anything else or nothing."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def work_tree(folder: str) -> str | None:
    """The top of the git work tree ``folder`` lies in (a ``.git`` in it or a folder above), or None."""
    here = os.path.abspath(folder)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
