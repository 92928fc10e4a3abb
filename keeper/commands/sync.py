"""``keeper sync``: this machine's memory and a git remote's brought together, then pushed."""

from __future__ import annotations

import os
import sys

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
    from keeper.store.resolve import remember_root, resolve, start_folder
    from keeper.sync import mirror

    # typed in a clone: its memory is here now, not at its next session (leniently: the sync is done)
    start = start_folder([args.project_dir or "", os.environ.get("CLAUDE_PROJECT_DIR", "")], strict=False)
    project = resolve(start, strict=False).project
    adopted = mirror.adopt(project)
    if adopted:  # what the lines above name as received moved into this folder's project just now
        remember_root(project, check=True)

    def text() -> list[str]:
        return [*result.lines(url), *([f"  {project.root} holds this memory now: {project.dir}"] if adopted else [])]

    common.emit(args, {"remote": url, **result.as_dict(), "adopted": project.dir if adopted else None}, text)
    problem = result.problem()
    if problem:  # the rest was synced; exit 1 until the person fixes it, as status and doctor say too
        print(f"keeper: error: {problem}", file=sys.stderr)
        return 1
    return 0
