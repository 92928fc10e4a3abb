"""The one way in: a start folder and a session become the project, its config and the warnings.

The CLI and the hooks both call ``resolve``; they differ only in how strict it is. The CLI
refuses a missing folder or an invalid ``project:`` pin with a message saying what to do; a hook
must always answer, so it falls back (the next existing folder, the folder's own id) and carries
the problem along as a warning for the user's status line.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.errors import KeeperError
from keeper.records import Record, texts
from keeper.store import config, identity, paths
from keeper.store.fsutil import atomic_write, read_json


class Resolved:
    """What a command or hook call works on."""

    __slots__ = ("cfg", "project", "session", "warnings")

    def __init__(self, project: paths.Project, cfg: config.Config, session: str, warnings: list[str]) -> None:
        self.project, self.cfg, self.session, self.warnings = project, cfg, session, warnings

    @property
    def has_session(self) -> bool:
        return self.session != identity.NO_SESSION


def start_folder(candidates: list[str], strict: bool) -> str:
    """The first usable folder among ``candidates`` (empty ones skipped), else the working directory.

    Strict: the first non-empty candidate must be an existing folder, or KeeperError says so.
    """
    for candidate in candidates:
        if not candidate:
            continue
        if "\x00" not in candidate and os.path.isdir(candidate):
            return candidate
        if strict:
            raise KeeperError(f"project folder {candidate!r} does not exist; pass an existing folder to --project-dir.")
    return os.getcwd()


def resolve(start: str, session: object = None, *, strict: bool) -> Resolved:
    """The project that ``start`` belongs to, its merged config, and a file-safe session id.

    Settings come from the ``.claude/keeper.yaml`` of the work tree in use (in a linked worktree,
    its own checkout, not the main work tree's). A project whose id changed with the identity rule
    takes over its old store here, once; a pinned id was chosen by hand and takes over nothing,
    and counts only once the user allowed it (``keeper.store.pins``).
    """
    root, here, heir_of = identity.locate(start)
    cfg = config.load(here)
    warnings = list(cfg.warnings)
    pinned = cfg.project
    if pinned:
        try:
            pinned = identity.check_pinned_name(pinned, os.path.join(here, paths.PROJECT_CONFIG))
        except KeeperError as exc:
            if strict:
                raise
            warnings.append(f"{exc} Using the folder's own id until it is fixed.")
            pinned = None
    if pinned and not _allowed(pinned, here):
        warnings.append(
            f"{os.path.join(here, paths.PROJECT_CONFIG)} asks to share the memory '{pinned}'; this folder keeps "
            f"its own until you allow it: keeper pin --project-dir {here}"
        )
        pinned = None
    project = identity.make_project(root, pinned or None, checkout=here)
    if heir_of != root and not pinned:
        from keeper.store import migrate  # once per old store: every hook would pay for its import

        migrate.adopt(project, heir_of)
    remember_root(project, check=bool(pinned))
    return Resolved(project, cfg, identity.safe_session_id(session), warnings)


class RootRecord(Record):
    """``state/project.json`` (``paths.ROOT_RECORD``): the folder a project's store belongs to and
    its name, for ``keeper projects`` and the hub (the store's name is a hash, which cannot be
    turned back into a folder). Either is "" when the record is missing or damaged."""

    __slots__ = ("name", "root")

    def __init__(self, root: str = "", name: str = "") -> None:
        self.root, self.name = root, name

    @classmethod
    def parse(cls, data: object) -> RootRecord:
        return cls(*texts(data, "root", "name"))

    def dump(self) -> str:
        return jsonio.dumps({"root": self.root, "name": self.name})


def _allowed(pinned: str, here: str) -> bool:
    from keeper.store import pins  # only a folder with a pin reads them: every other hook skips the import

    return pins.is_allowed(pinned, here)


def recorded_root(folder: str) -> str:
    """The root folder recorded in a project's store folder; "" when none is."""
    return RootRecord.parse(read_json(os.path.join(folder, paths.STATE_DIR, paths.ROOT_RECORD))).root


def remember_root(project: paths.Project, check: bool) -> None:
    """Note the project's root folder in its store (``state/project.json``), for ``keeper projects``.

    The store is named by a hash of the root, which cannot be turned back into a folder. Every
    hook resolves, so the usual cost is one stat: an unpinned id is a hash of its root, so a record
    that exists is right. A pinned id is shared by clones, so with ``check`` the record is read and
    rewritten when another clone is in use. Nothing is written before the store has a ``state``
    folder (a command run in a random folder makes no project), and a failure is left to the next call.
    """
    path = project.root_record
    try:
        os.stat(path)
        if not check or recorded_root(project.dir) == project.root:
            return
    except FileNotFoundError:
        if not os.path.isdir(project.state):
            return
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return
    try:
        atomic_write(path, RootRecord(project.root, project.name).dump())
    except OSError:
        pass
