"""What the commands share: the project their arguments name, and the one choice of JSON or text output."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from keeper.store.config import Config
    from keeper.store.paths import Project
    from keeper.store.resolve import Resolved


def resolve_args(args: argparse.Namespace, session: str | None = None, store: bool = True) -> Resolved:
    """The project, config and session for ``--project-dir`` (default: $CLAUDE_PROJECT_DIR, else cwd).

    Config warnings go to stderr; the session is ``session``, else $CLAUDE_CODE_SESSION_ID (Claude
    Code's Bash tool), $CODEX_SESSION_ID (Codex's shell tool) or $KEEPER_SESSION_ID (OpenCode's, from
    Keeper's plugin), else one per day (``manual-YYYYMMDD``).
    """
    import time

    from keeper.store.resolve import resolve, start_folder

    if store:  # doctor reports it among its checks instead
        require_store()
    start = start_folder([args.project_dir or "", os.environ.get("CLAUDE_PROJECT_DIR", "")], strict=True)
    from keeper.plugin import agents

    raw = session or agents.session_from_env() or f"manual-{time.strftime('%Y%m%d')}"
    at = resolve(start, raw, strict=True)
    for warning in at.warnings:
        print(f"keeper: warning: {warning}", file=sys.stderr)
    return at


def require_store() -> None:
    """Say so when the store cannot be used, rather than answer "nothing here" from an empty one."""
    from keeper.errors import KeeperError
    from keeper.store.fsutil import store_problem

    unusable = store_problem()
    if unusable and os.environ.get("CODEX_SESSION_ID"):  # Codex's shell tool, in its sandbox
        from keeper.plugin import codex
        from keeper.store.paths import data_root

        step = codex.sandbox_step(data_root())
        unusable += f"; here, in Codex's sandbox, the store is not among its writable roots: {step}"
    if unusable:
        raise KeeperError(unusable + ".")


def emit(args: argparse.Namespace, data: Any, text: Callable[[], list[str]]) -> None:
    """The one place that chooses JSON (``--json``) or text output for a command's result."""
    if getattr(args, "json", False):
        import json

        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for line in text():
        print(line)


def stored_project(args: argparse.Namespace) -> tuple[Project, Config]:
    """The project to clear or restore: ``--project ID`` straight from the store, else ``--project-dir``.

    A project whose folder was deleted or moved cannot be named by a folder any more; by id it can,
    with the global configuration (its own ``.claude/keeper.yaml`` went with the folder).
    """
    if args.project is None:
        at = resolve_args(args)
        from keeper.sync import mirror

        mirror.adopt(at.project)  # a clone whose memory a sync brought: that memory is this project's
        return at.project, at.cfg
    from keeper.errors import KeeperError
    from keeper.store import config, projects

    if args.project_dir:
        raise KeeperError("give either --project ID or --project-dir DIR, not both.")
    cfg = config.load(None)
    for warning in cfg.warnings:
        print(f"keeper: warning: {warning}", file=sys.stderr)
    return projects.find(args.project), cfg
