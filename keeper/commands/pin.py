"""``keeper pin``: allow (or revoke) this folder's pinned project name, so it shares that memory."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    from keeper.errors import KeeperError
    from keeper.store import config, identity, paths, pins
    from keeper.store.resolve import start_folder

    start = start_folder([args.project_dir or "", os.environ.get("CLAUDE_PROJECT_DIR", "")], strict=True)
    root, here, _ = identity.locate(start)
    source = os.path.join(here, paths.PROJECT_CONFIG)
    if args.revoke:
        done = pins.revoke(here)
        print(f"{here} keeps its own memory again." if done else f"{here} had no allowed pin.")
        return 0
    name = config.load(here).project
    if not name:
        raise KeeperError(f"{source} has no project: line; add one (project: NAME) to share memory between clones.")
    name = identity.check_pinned_name(name, source)
    pins.allow(name, here)
    shared = identity.make_project(root, name)
    print(f"{here} now shares the memory '{name}' ({shared.dir}).")
    print(f"Undo with: keeper pin --revoke --project-dir {here}")
    return 0
