"""Which project a folder is: its canonical root, its id, and the git rules that decide both.

The identity rule of the contract: inside git, the nearest folder holding ``.claude/keeper.yaml``
below the top level, else the main work tree's top level (every worktree shares one memory);
outside git, the folder itself. Reads git's own files rather than running git: spawning a process
costs more than a whole hook may take.
"""

from __future__ import annotations

import os
import stat

from keeper.errors import KeeperError
from keeper.store.paths import PROJECT_CONFIG, Project, projects_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType  # types imports functools and collections: ~1 ms a hook

_WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"com{i}" for i in range(1, 10)] + [f"lpt{i}" for i in range(1, 10)]
)


_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")


_SESSION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _pointer(path: str) -> str:
    """The first line of a git pointer file (``.git`` or ``commondir``), trimmed; OSError if unreadable."""
    with open(path, "rb") as fh:
        lines = os.fsdecode(fh.read(4096)).splitlines()
    return lines[0].strip() if lines else ""


def _main_work_tree(top: str) -> str:
    """The main work tree's top level when ``top`` is a linked worktree, else ``top`` itself.

    A linked worktree's ``.git`` file says ``gitdir: <main>/.git/worktrees/<name>``, whose
    ``commondir`` leads back to ``<main>/.git``. It is taken for one only when git itself would:
    the gitdir sits in its common dir's ``worktrees`` folder and its ``gitdir`` back-pointer names
    this folder's ``.git`` file, so a forged ``.git`` file (a downloaded folder pointing at another
    repository's worktree or git directory) never gives a folder another project's memory. A
    submodule's gitdir has no ``commondir`` and a bare repository's common dir is not named
    ``.git``: those keep their own top level, as does any pointer that is missing, unreadable,
    garbled or not answered by its back-pointer.
    """
    try:
        dot_git = os.path.join(top, ".git")
        line = _pointer(dot_git)
        if not line.startswith("gitdir:"):
            return top
        gitdir = os.path.realpath(os.path.join(top, line[len("gitdir:") :].strip()))
        common = os.path.realpath(os.path.join(gitdir, _pointer(os.path.join(gitdir, "commondir"))))
        if os.path.basename(common) != ".git" or not os.path.isdir(common):
            return top
        if os.path.dirname(gitdir) != os.path.join(common, "worktrees"):
            return top  # not a worktree git registered in that repository
        back = _pointer(os.path.join(gitdir, "gitdir"))  # absolute, or relative to the gitdir (git 2.48+)
        if not back or os.path.realpath(os.path.join(gitdir, back)) != os.path.realpath(dot_git):
            return top  # the repository names another folder as this worktree
        return os.path.dirname(common)
    except (OSError, ValueError):  # ValueError: a NUL in the path, or bytes Windows cannot decode
        return top


def locate(start: str) -> tuple[str, str, str]:
    """``(root, here, heir_of)`` for a start folder; ``root`` is what ``find_project_root`` returns.

    ``here`` is the folder in this work tree whose ``.claude/keeper.yaml`` applies (``root`` itself
    except in a linked worktree). ``heir_of`` is the folder whose id under the old rule (the nearest
    ``.git``) this project takes over; it equals ``root`` when there is nothing to take over.
    Costs one stat per folder up to the git top level, one more per folder below it, and three tiny
    reads only where ``.git`` is a file.
    """
    start = os.path.realpath(os.path.abspath(start))
    top = start
    while True:
        try:
            st = os.stat(os.path.join(top, ".git"))
            break
        except (OSError, ValueError):
            parent = os.path.dirname(top)
            if parent == top:
                return start, start, start
            top = parent
    here = start
    while here != top and not os.path.isfile(os.path.join(here, PROJECT_CONFIG)):
        here = os.path.dirname(here)
    main = top if stat.S_ISDIR(st.st_mode) else _main_work_tree(top)
    if main == top:
        return here, here, here
    if here == top:
        return main, here, top
    shared = os.path.join(main, os.path.relpath(here, top))  # the same sub-project in the main work tree
    return shared, here, shared


def find_project_root(start: str) -> str:
    """The project a folder belongs to, as the contract defines it.

    Inside git: the nearest folder below the top level holding ``.claude/keeper.yaml`` (a
    sub-project), else the top level of the repository's main work tree, so every worktree shares
    one memory; a sub-project in a linked worktree is the same sub-project of the main work tree.
    Outside git: ``start`` itself (a ``.claude`` folder alone, like Claude Code's ``~/.claude``,
    never makes a project). Reads git's own files rather than running git: spawning a process
    costs more than the whole hook budget.
    """
    return locate(start)[0]


def canonical_key(path: str, flavour: ModuleType = os.path) -> str:
    """The spelling-independent form of a resolved project path, used for hashing.

    ``flavour`` is ``posixpath`` or ``ntpath``; on Windows case, separators, drive-letter case
    and trailing separators all fold to one key.
    """
    norm: str = flavour.normpath(path)
    if flavour.__name__ == "ntpath":
        norm = flavour.normcase(norm).replace("\\", "/")
        if len(norm) > 3 and norm.endswith("/"):
            norm = norm.rstrip("/")
    return norm


def sha256_hex(data: bytes) -> str:
    # The builtin module gives hashlib's digest without loading OpenSSL (~3 ms per hook).
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python <= 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # Python >= 3.12
        except ImportError:
            from hashlib import sha256
    digest: str = sha256(data).hexdigest()
    return digest


def slugify(name: str) -> str:
    """A readable, safe folder-name fragment: lower case ``[a-z0-9._-]``, at most 40 characters."""
    chars: list[str] = []
    for ch in name.lower():
        if ch in _SLUG_CHARS:
            chars.append(ch)
        elif not chars or chars[-1] != "\0":
            chars.append("\0")  # a run of other characters becomes one '-'
    slug = "".join(chars).replace("\0", "-").strip("-._")[:40].strip("-._")
    return slug or "project"


def project_id(root: str, flavour: ModuleType = os.path) -> str:
    """``<slug>-<hash>``: two folders named ``api`` never collide; one folder always maps alike."""
    key = canonical_key(root, flavour)
    name = flavour.basename(key.rstrip("/")) or "root"
    return f"{slugify(name)}-{sha256_hex(key.encode('utf-8', 'surrogatepass'))[:10]}"


def check_pinned_name(name: object, source: str) -> str:
    """Validate a ``project:`` pin; refuse names that are not safe folder names on every OS."""
    import re

    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name) or name.endswith("."):
        raise KeeperError(
            f"{source}: project: {name!r} is not a safe folder name. Use 1-64 letters, digits, '.', '_' "
            "or '-', starting with a letter or digit (for example: project: my-api)."
        )
    if name.split(".")[0].lower() in _WINDOWS_RESERVED:
        raise KeeperError(f"{source}: project: {name!r} is a reserved device name on Windows; pick another.")
    return name


def default_project_dir() -> str:
    """``$CLAUDE_PROJECT_DIR``, else the working directory (the contract's default)."""
    return os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()


def make_project(root: str, pinned: str | None = None, checkout: str | None = None) -> Project:
    """The project of canonical root ``root``; ``checkout`` is the work tree in use (``locate``'s ``here``
    up to its top level), where the repository's own files such as team.md are read."""
    pid = pinned or project_id(root)
    return Project(root=root, id=pid, dir=os.path.join(projects_dir(), pid), checkout=checkout)


NO_SESSION = "unknown"


def safe_session_id(session_id: object) -> str:
    """A session id fit for a file name; hostile or missing ids fold to ``NO_SESSION``."""
    text = session_id if isinstance(session_id, str) else ""
    cleaned = "".join(ch for ch in text if ch in _SESSION_CHARS)[:64]
    return cleaned or NO_SESSION
