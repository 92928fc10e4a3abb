"""What ``keeper status``, ``keeper doctor`` and the Memory Hub say about sync: the remote, the last
successful sync, what waits to be pushed, and what is wrong with git or the remote."""

from __future__ import annotations

import os
import time

from keeper.store import paths
from keeper.sync import remote, scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _durable_files() -> list[str]:
    root = paths.data_root()
    found = []
    for folder in (paths.global_dir(), paths.projects_dir()):
        for dirpath, dirnames, names in os.walk(folder):
            dirnames[:] = [d for d in dirnames if d != paths.STATE_DIR]
            for name in names:
                path = os.path.join(dirpath, name)
                if paths.kind(os.path.relpath(path, root)) == paths.DURABLE:
                    found.append(path)
    return found


def summary() -> dict[str, Any]:
    """The remote (credentials left out), the last successful sync, the last error, and the memory
    files changed here since the last successful sync (what the next sync pushes)."""
    data = remote.read()
    if not data:
        return {"remote": None, "last_sync": None, "last_error": None, "waiting": []}
    status = remote.read_status()
    last = status.last_sync
    since = status.last_sync_epoch  # to the fraction: a file the sync itself wrote is not waiting
    if since is None:
        since = time.mktime(time.strptime(last, "%Y-%m-%dT%H:%M:%S")) + 1 if last else 0.0
    root = paths.data_root()
    waiting = sorted(  # a file name may hold a secret (a token pasted into it): shown redacted
        scan.shown_name(os.path.relpath(p, root).replace(os.sep, "/")) for p in _durable_files() if _mtime(p) > since
    )
    error = status.last_error or None
    return {
        "remote": remote.shown(str(data["remote"])),
        "last_sync": last,
        "last_error": error,
        "last_error_at": status.last_error_at if error else None,
        "waiting": waiting,
    }


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def lines(data: dict[str, Any]) -> list[str]:
    if not data["remote"]:
        return ["  sync          not set up (keeper sync --remote URL: the same memory on every machine)"]
    out = [f"  sync remote   {data['remote']}", f"  last sync     {(data['last_sync'] or 'never').replace('T', ' ')}"]
    waiting = data["waiting"]
    out.append(f"  to push       {len(waiting)} file(s)" + (f": {', '.join(waiting[:3])}" if waiting else ""))
    if data["last_error"]:
        out.append(f"  sync problem  {data['last_error']} ({(data['last_error_at'] or '').replace('T', ' ')})")
    return out


def check() -> tuple[bool | None, str, str]:
    """``(ok, detail, fix)`` for ``keeper doctor``: git, the credentials, and the remote being Keeper's."""
    from keeper.errors import KeeperError
    from keeper.sync import engine, git, mirror

    data = remote.read()
    if not data:
        return None, "no remote: memory stays on this machine", "keeper sync --remote URL (a private repository)"
    url = str(data["remote"])
    try:
        git.check_version()
    except KeeperError as exc:
        return False, str(exc), "install git 2.20 or newer (https://git-scm.com), then run keeper sync"
    repo = git.Repo(engine.repo_path())
    if not os.path.isdir(repo.path):
        repo.init()
    try:
        code, out, err = repo.attempt(["ls-remote", "--heads", url], timeout=git.NETWORK_TIMEOUT)
    except KeeperError as exc:
        return False, f"{remote.shown(url)}: {exc}", "check your network, then run keeper sync"
    said = err.decode("utf-8", "replace").lower()
    if code != 0:
        if any(w in said for w in ("authentication", "permission denied", "could not read username", "403", "401")):
            return (
                False,
                f"{remote.shown(url)} refused the credentials",
                f"make `git ls-remote {remote.shown(url)}` work in a terminal (credential helper or ssh key), "
                "then run keeper sync",
            )
        return False, f"cannot reach {remote.shown(url)}", "check the URL and your network (keeper sync --remote URL)"
    if out.strip():
        fetched = repo.ls_tree(repo.rev(engine.FETCHED)) if repo.rev(engine.FETCHED) else None
        if fetched is not None and mirror.MARKER not in fetched:
            return (
                False,
                f"{remote.shown(url)} holds a repository that is not a Keeper store",
                "make an empty private repository for Keeper and run keeper sync --remote URL",
            )
    status = remote.read_status()
    if status.last_error:
        return False, f"the last sync failed: {status.last_error}", "run keeper sync to see it again"
    return True, f"{remote.shown(url)} (last sync {status.last_sync or 'never'})", ""
