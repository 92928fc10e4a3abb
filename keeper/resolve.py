"""The one way in: a start folder and a session become the project, its config and the warnings.

The CLI and the hooks both call ``resolve``; they differ only in how strict it is. The CLI
refuses a missing folder or an invalid ``project:`` pin with a message saying what to do; a hook
must always answer, so it falls back (the next existing folder, the folder's own id) and carries
the problem along as a warning for the user's status line.
"""

from __future__ import annotations

import os

from keeper import config, paths
from keeper.errors import KeeperError


class Resolved:
    """What a command or hook call works on."""

    __slots__ = ("cfg", "project", "session", "warnings")

    def __init__(self, project: paths.Project, cfg: config.Config, session: str, warnings: list[str]) -> None:
        self.project, self.cfg, self.session, self.warnings = project, cfg, session, warnings

    @property
    def has_session(self) -> bool:
        return self.session != paths.NO_SESSION


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
    takes over its old store here, once; a pinned id was chosen by hand and takes over nothing.
    """
    root, here, heir_of = paths.locate(start)
    cfg = config.load(here)
    warnings = list(cfg.warnings)
    pinned = cfg.get("project")
    if pinned:
        try:
            pinned = paths.check_pinned_name(pinned, os.path.join(here, paths.PROJECT_CONFIG))
        except KeeperError as exc:
            if strict:
                raise
            warnings.append(f"{exc} Using the folder's own id until it is fixed.")
            pinned = None
    project = paths.make_project(root, pinned or None)
    if heir_of != root and not pinned:
        from keeper import migrate  # once per old store: every hook would pay for its import

        migrate.adopt(project, heir_of)
    return Resolved(project, cfg, paths.safe_session_id(session), warnings)
