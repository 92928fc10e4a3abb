"""``keeper save``: a save from stdin (Keeper's save format or JSON) or flags, merged into memory."""

from __future__ import annotations

import sys

from keeper.commands import common

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    from keeper.capture import saving
    from keeper.errors import KeeperError
    from keeper.memory import savekeys
    from keeper.redact import redact, redact_values

    at = common.resolve_args(args, args.session)
    from keeper.sync import mirror

    mirror.adopt(at.project)  # a clone whose memory a sync brought saves into that memory, not beside it
    flags: dict[str, str | list[str]] = {
        key.name: getattr(args, key.flag[2:].replace("-", "_")) or ("" if key.kind == "text" else [])
        for key in savekeys.KEYS
        if key.flag
    }
    problems: list[str] = []
    if any(flags.values()):
        flags["scope"] = args.scope
        save = saving.to_save_input(flags, at.cfg.redact_patterns)
    else:
        if sys.stdin is None or sys.stdin.isatty():
            raise KeeperError(
                "keeper save needs input: pipe key: lines on stdin (keeper save <<'END' … END) or use flags "
                "such as --summary TEXT --decision TEXT."
            )
        from keeper import console

        raw = console.decode_input(sys.stdin.buffer.read(), "keeper save's input")
        save, problems = saving.read_input(raw, at.cfg.redact_patterns)
        if args.scope in ("global", "team"):
            save.scope = args.scope
    report, session_file = saving.save(at.project, at.cfg, save, at.session)

    saved = save.holds_memory()

    def text() -> list[str]:
        if not saved:  # only text no key places: the session file keeps it, memory took nothing
            nothing = (
                "Nothing was saved to memory: no key of this save is one Keeper knows; save it again under a known key."
            )
            return [nothing, *(f"  ! {problem}" for problem in problems), f"Session file: {session_file}"]
        where = " and ".join(report.written or [at.project.memory])  # a global-only save leaves memory.md be
        lines = [f"Saved to {at.project.team} (commit it to share it)" if save.scope == "team" else f"Saved to {where}"]
        if problems:
            lines.append("Keeper could not read all of this save as written; nothing was lost:")
            lines += [f"  ! {problem}" for problem in problems]
        lines += ["  " + redact(line, at.cfg.redact_patterns) for line in saving.report_lines(report)]
        return [*lines, f"Session file: {session_file}"]

    common.emit(
        args,
        {
            "saved": saved,
            "memory": at.project.memory,
            "session_file": session_file,
            "problems": problems,
            # the report names items of memory.md (removed, or a name could mean), which a pattern may be newer than
            **{
                field: redact_values(value, at.cfg.redact_patterns)
                for field, value in vars(report).items()
                if field != "removed_keys"  # bookkeeping: items in lower case, given as written in resolved, retired
            },
        },
        text,
    )
    return 0 if saved else 1
