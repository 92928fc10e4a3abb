"""``keeper sync``: this machine's memory and a git remote's brought together, then pushed."""

from __future__ import annotations

import os

from keeper.commands import common

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    from keeper.sync import background, engine

    common.require_store()
    if args.background:
        return background.run()
    result, url = engine.sync(args.remote)
    from keeper.store.resolve import resolve, start_folder
    from keeper.sync import mirror

    # typed in a clone: its memory is here now, not at its next session (leniently: the sync is done)
    start = start_folder([args.project_dir or "", os.environ.get("CLAUDE_PROJECT_DIR", "")], strict=False)
    mirror.adopt(resolve(start, strict=False).project)
    common.emit(args, {"remote": url, **result.as_dict()}, lambda: result.lines(url))
    return 0
