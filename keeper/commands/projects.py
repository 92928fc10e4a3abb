"""``keeper projects``: every project in the store, with its folder, sessions, size and open issues."""

from __future__ import annotations

from keeper.commands import common

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    from keeper.store import projects

    common.require_store()
    found = projects.list_all()
    common.emit(args, [p.as_dict() for p in found], lambda: projects.lines(found))
    return 0
