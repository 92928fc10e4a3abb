"""``keeper clear`` and ``keeper restore``: memory moved to a restorable backup, and brought back."""

from __future__ import annotations

import os
import sys

from keeper.commands import common
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run_clear(args: argparse.Namespace) -> int:
    from keeper.errors import KeeperError
    from keeper.store import trash

    project, cfg = common.stored_project(args)
    days = args.older_than if args.older_than is not None else cfg.clear_older_than
    files = trash.files_to_clear(project, args.what, days)
    if not files:
        why = trash.nothing_to_clear(project, args.what, days)
        common.emit(args, {"moved": [], "backup": None, "reason": why}, lambda: [f"Nothing to clear: {why}."])
        return 0
    moving = trash.described([os.path.relpath(f, project.dir) for f in files])
    from keeper.sync import remote

    everywhere = remote.clears_everywhere(project, args.what)
    if everywhere:
        print(everywhere, file=sys.stderr)
    if not args.yes:
        if sys.stdin is None or not sys.stdin.isatty():
            raise KeeperError(f"clear {args.what} would move {moving}; add --yes to confirm (nothing was removed).")
        answer = input(f"Move {moving} of '{project.name}' to a restorable backup? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was removed.")
            return 0
    backup = trash.clear(project, files, f"keeper clear {args.what}", cfg.trash_days)
    named = f" --project {project.id}" if args.project else ""
    common.emit(
        args,
        {"moved": files, "backup": backup},
        lambda: [
            f"Moved {moving} to {backup}",
            f"Undo with: keeper restore {os.path.basename(backup)}{named}   (kept for {cfg.trash_days} days)",
        ],
    )
    return 0


def _restore_item(args: argparse.Namespace) -> int:
    """``keeper restore --item``: one retired or resolved item back where it was, recorded as restored."""
    from keeper.capture import saving
    from keeper.commands import why
    from keeper.memory.document import SaveInput
    from keeper.redact import redact
    from keeper.store import paths

    at = common.resolve_args(args)
    item = why.find(at.project, " ".join(args.item), removed_only=True, rules=at.cfg.redact_patterns)
    if item.section == "decisions":
        data = SaveInput(decisions=[item.text])
    elif item.section == "issues":
        data = SaveInput(issues=[item.text])
    else:
        data = SaveInput(typed={item.section or "reference": [item.text]}, scope=item.scope)
    saving.save(at.project, at.cfg, data, at.session, added="restored")
    where = at.project.memory if item.scope == "project" else paths.global_memory_file()
    print(f"Restored {redact(item.text, at.cfg.redact_patterns)!r} ({item.status} before) to {where}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from keeper.store import trash

    if args.item:
        return _restore_item(args)

    project, _ = common.stored_project(args)
    if args.list:
        found = trash.backups(project)
        listed = [trash.about(b)._asdict() for b in found]
        common.emit(args, listed, lambda: [trash.listing(b) for b in found] or ["No backups."])
        return 0
    restored, kept = trash.restore(project, args.backup)
    print(f"Restored {count(len(restored), 'file')} into {project.dir}")
    for rel in kept:
        print(f"  kept the current {rel}; the backup copy stays in the trash")
    return 0
