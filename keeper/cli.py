"""The ``keeper`` command line: the parser and the entry. Each command is a pair: ``_add_x`` here
declares it, a module of ``keeper.commands`` runs it, imported only when that command runs.

``keeper hook EVENT`` is dispatched before argparse is even imported: it runs on every tool use.
A ``KeeperError`` becomes one ``keeper: error: …`` line and exit 1; anything else is a bug and
propagates with its traceback. Exit codes: 0 ok, 1 error, 2 usage.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    Adder = Callable[[Any, argparse.ArgumentParser], None]


def _json_flag(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON")


# -- save ------------------------------------------------------------------------------------


def _add_save(sub: Any, common: argparse.ArgumentParser) -> None:
    from keeper.memory.savekeys import KEYS, TYPED

    plain = ", ".join(key.name for key in KEYS if key.merge not in ("typed", "scope"))
    p = sub.add_parser(
        "save",
        parents=[common],
        help="merge a save into memory.md and this session's file",
        description="Read Keeper's save format on stdin (key: lines; list items as '  - item' lines; every "
        f"value plain text, stored as written) or a JSON object; or give the same with flags. Keys: {plain}; "
        f"typed lists {', '.join(TYPED)}, and scope "
        "(project, global or team: where the typed lists go; team also takes decisions and issues). "
        "Prints what changed.",
    )
    for key in KEYS:
        if key.kind == "text" and key.flag:
            p.add_argument(key.flag, help=key.help)
        elif key.flag:
            p.add_argument(key.flag, action="append", default=[], help=key.help)
    p.add_argument(
        "--global",
        dest="scope",
        action="store_const",
        const="global",
        default="project",
        help=f"send the typed lists ({', '.join(TYPED)}) to the global memory",
    )
    p.add_argument(
        "--team",
        dest="scope",
        action="store_const",
        const="team",
        help="send decisions, issues and the typed lists to the repository's team memory (.claude/keeper/team.md)",
    )
    p.add_argument(
        "--session",
        help="session id (default: $CLAUDE_CODE_SESSION_ID, $CODEX_SESSION_ID or $KEEPER_SESSION_ID, else one per day)",
    )
    _json_flag(p, "the result")
    p.set_defaults(func="save")


# -- recall ----------------------------------------------------------------------------------


def _add_recall(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "recall",
        parents=[common],
        help="search this project's memory, best first (tolerates typos)",
        description="Keyword search over memory.md, the session files, the global memory and Claude Code's "
        "auto memory of this project. Typos and word forms are forgiven ('totl' and 'making' find 'made the "
        "total'); quotes, wildcards and $(…) are plain text, never a pattern or a command.",
    )
    p.add_argument("query", nargs="+", help="words to look for")
    p.add_argument("--limit", type=int, default=None, help="most results to show (default: recall_limit)")
    p.add_argument(
        "--scope",
        choices=["project", "global", "all"],
        default="all",
        help="this project's memory (with Claude Code's auto memory of it), the global memory, or both",
    )
    _json_flag(p, "a list of results")
    p.set_defaults(func="recall:run_recall")


class Arguments:
    """Parsed arguments, as argparse's Namespace holds them, for a command parsed without argparse."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def quick_recall_args(argv: list[str]) -> Arguments | None:
    """``recall`` arguments read without argparse, which with ``re`` costs recall ~7 ms, a fifth of
    a grep over 10,000 files; None for anything but the plain forms (help, an unknown or
    abbreviated option, a bad value, words after options), which argparse then handles.
    """
    values: dict[str, Any] = {"project_dir": None, "limit": None, "scope": "all", "json": False}
    query: list[str] = []
    rest = iter(argv[1:] if argv[:1] == ["recall"] else [])
    literal = optioned = False
    for arg in rest:
        if literal or arg == "-" or not arg.startswith("-"):
            if query and optioned and not literal:
                return None  # argparse takes the words in one run
            query.append(arg)
            continue
        if arg == "--":
            literal = True
            continue
        optioned = optioned or bool(query)
        name, equals, value = arg.partition("=")
        if name == "--json" and not equals:
            values["json"] = True
            continue
        if name not in ("--limit", "--scope", "--project-dir"):
            return None
        if not equals:
            value = next(rest, "-")
        if value.startswith("-"):
            return None
        if name == "--limit":
            try:
                values["limit"] = int(value)
            except ValueError:
                return None
        elif name == "--scope":
            if value not in ("project", "global", "all"):
                return None
            values["scope"] = value
        else:
            values["project_dir"] = value
    if not query:
        return None
    return Arguments(command="recall", query=query, func="recall:run_recall", **values)


def _add_expand(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "expand", parents=[common], help="print the whole section behind a recall result, with its session anchor"
    )
    p.add_argument("id", help="a result id from keeper recall, e.g. sessions/2026-11-21_1430.md:12")
    _json_flag(p, "the section (path, heading, text, transcript)")
    p.set_defaults(func="recall:run_expand")


def _add_transcript(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "transcript",
        parents=[common],
        help="print an agent's transcript turn by turn, readably (Claude Code, a Codex rollout, Gemini CLI, OpenCode)",
    )
    p.add_argument("path", help="the transcript, e.g. from a session file's Transcript line")
    p.add_argument(
        "--turn", metavar="UUID", help="show the turn holding this entry uuid (with --context turns around it)"
    )
    p.add_argument("--context", type=int, default=1, metavar="N", help="turns before and after --turn (default 1)")
    _json_flag(p, "the turns")
    p.set_defaults(func="transcript")


# -- status / doctor ---------------------------------------------------------------------------


def _add_status(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help="counter, files, last save and where everything is")
    _json_flag(p, "the status")
    p.set_defaults(func="status")


def _add_doctor(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "doctor", parents=[common], help="check the install, PATH, store, config and plugin; say how to fix problems"
    )
    p.add_argument(
        "--live",
        action="store_true",
        help="also start one headless session of the installed agent (one model turn with your own login, "
        "one request) and check that Keeper's memory reaches the model",
    )
    p.add_argument("--agent", choices=["claude", "codex"], help="with --live: the agent to ask (default: each on PATH)")
    p.add_argument(
        "--timeout", type=float, default=180.0, metavar="SECONDS", help="with --live: how long to wait (default 180)"
    )
    _json_flag(p, "the findings")
    p.set_defaults(func="doctor")


# -- clear / restore ---------------------------------------------------------------------------


def _add_clear(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "clear",
        parents=[common],
        help="move old session files (or all memory) to a restorable backup",
        description="'old' (the default, as /keeper:clear) moves session files older than --older-than days; "
        "'all' moves memory.md, the session files and state. Nothing is deleted: `keeper restore` brings it back.",
    )
    p.add_argument("what", nargs="?", choices=["old", "all"], default="old", help="what to clear (default: old)")
    p.add_argument("--older-than", type=int, default=None, metavar="DAYS", help="age cutoff for 'old'")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _project_flag(p)
    _json_flag(p, "the result")
    p.set_defaults(func="clear:run_clear")


def _project_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--project",
        metavar="ID",
        help="a project by its id from `keeper projects` (works when its folder is gone), instead of --project-dir",
    )


def _add_restore(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("restore", parents=[common], help="bring back what `keeper clear` moved away")
    p.add_argument("backup", nargs="?", help="backup name (default: the newest); see --list")
    p.add_argument("--list", action="store_true", help="list the backups instead")
    p.add_argument("--item", nargs="+", metavar="WORDS|ID", help="bring back one retired or resolved item instead")
    _json_flag(p, "the --list of backups (name, made, reason, files)")
    _project_flag(p)
    p.set_defaults(func="clear:run_restore")


# -- why -----------------------------------------------------------------------------------------


def _add_why(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "why",
        parents=[common],
        help="where a memory item came from, its history, and whether it may be stale",
        description="Names the session that saved the item, when, the machine, branch and commit, the files that "
        "session changed, its session file and transcript; then the item's history (re-confirmed, echoed, "
        "retired, resolved, restored) and whether a file it rests on changed since.",
    )
    p.add_argument("item", nargs="+", help="the item's id (from --json or the hub) or words of its text")
    _json_flag(p, "the item's provenance")
    p.set_defaults(func="why")


# -- pin -----------------------------------------------------------------------------------------


def _add_pin(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "pin",
        parents=[common],
        help="allow this folder to share the memory its .claude/keeper.yaml names (project: NAME)",
        description="A repository's own files never give it another project's memory: a project: pin takes "
        "effect only once you allow it here. --revoke takes the allowance back.",
    )
    p.add_argument("--revoke", action="store_true", help="withdraw the allowance; the folder keeps its own memory")
    p.set_defaults(func="pin")


# -- sync ------------------------------------------------------------------------------------------


def _add_sync(sub: Any, common: argparse.ArgumentParser) -> None:
    from argparse import SUPPRESS

    p = sub.add_parser(
        "sync",
        parents=[common],
        help="bring this machine's memory and a git remote's together, and push (--remote URL the first time)",
        description="Every project's memory.md and session files and the global memory, merged by Keeper's "
        "rules with the remote's and pushed; nothing derived or machine-local travels, and what leaves is "
        "redacted. The first call records --remote URL for this store (a private repository you can push to); "
        "later calls need no flag. Once a remote is set, sessions pull at start and push at end on their own. "
        "A removal (retire, resolve, a deleted session file, keeper clear) is recorded and made on every machine "
        "at its next sync, each keeping what it removes in its own trash (keeper restore); an absence removes "
        "nothing. A remote rolled back, rewritten, with its branch deleted, or a new --remote is merged with "
        "nothing removed but what was recorded, never force-pushed, and the sync says so in one line. "
        "See docs/sync.md.",
    )
    p.add_argument("--remote", metavar="URL", help="record (or replace) the remote, then sync")
    p.add_argument("--background", action="store_true", help=SUPPRESS)  # what the hooks start
    _json_flag(p, "what the sync did")
    p.set_defaults(func="sync")


# -- export / import --------------------------------------------------------------------------


def _add_export(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "export",
        parents=[common],
        help="write the store's memory (or one project's, with --project-dir) to one zip archive",
        description="Writes every project's memory.md, session files and state/memory.json (which memory.md "
        "lines Keeper wrote) and the global memory.md, with a manifest, to one zip. Indexes, counters, caches, "
        "logs and the trash are left out: they are rebuilt or local. --project-dir exports that project only.",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="where to write (default: keeper-export-YYYYmmdd-HHMMSS.zip here, or in ~/Downloads (else ~) when "
        "here is inside a git repository; a folder: in it)",
    )
    _json_flag(p, "the result")
    p.set_defaults(func="archive:run_export")


def _add_import(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "import",
        parents=[common],
        help="merge an archive from `keeper export` into the store, never overwriting",
        description="Projects missing here are created as exported. For one that exists, new session files are "
        "added, identical ones skipped, and one whose name is taken by other text is added as NAME-imported.md; "
        "memory.md is merged (no duplicate items, dates kept, the newer Current State, your lines kept). "
        "Anything in the archive that is not Keeper's layout is refused and named (exit 1). --project-dir "
        "imports the archive's one project (or --project ID) into the project of that folder.",
    )
    p.add_argument("archive", metavar="FILE", help="a zip made by keeper export")
    p.add_argument("--project", metavar="ID", help="import only this project of the archive")
    p.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
    _json_flag(p, "the result")
    p.set_defaults(func="archive:run_import")


# -- projects / hub ----------------------------------------------------------------------------


def _add_projects(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "projects",
        parents=[common],
        help="every project in the store: root folder, sessions, size, last activity, open issues",
    )
    _json_flag(p, "the list")
    p.set_defaults(func="projects")


def _add_hub(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "hub",
        parents=[common],
        help="write the Memory Hub: one offline HTML page of every project's memory, sessions and history",
        description="Write one self-contained HTML file (no network requests; open it from disk) and print its path.",
    )
    p.add_argument("--out", metavar="FILE", help="where to write it (default: <store>/hub.html)")
    p.add_argument("--open", action="store_true", help="open it in the default web browser")
    p.set_defaults(func="hub")


# -- hook / demo -------------------------------------------------------------------------------


def _add_hook(sub: Any, common: argparse.ArgumentParser) -> None:
    from keeper.hooks import entry

    p = sub.add_parser(
        "hook", parents=[common], help="run a Claude Code hook: JSON on stdin, one JSON object on stdout"
    )
    p.add_argument(
        "event", nargs="?", choices=sorted(entry.HANDLERS), help="the event (default: the payload's hook_event_name)"
    )
    p.set_defaults(func=None)


def _add_demo(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo", parents=[common], help="replay a scripted session through the real hooks, offline")
    p.set_defaults(func="demo")


COMMANDS: dict[str, Adder] = {
    "save": _add_save,
    "recall": _add_recall,
    "expand": _add_expand,
    "transcript": _add_transcript,
    "status": _add_status,
    "doctor": _add_doctor,
    "clear": _add_clear,
    "restore": _add_restore,
    "why": _add_why,
    "pin": _add_pin,
    "export": _add_export,
    "import": _add_import,
    "projects": _add_projects,
    "hub": _add_hub,
    "sync": _add_sync,
    "hook": _add_hook,
    "demo": _add_demo,
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that command's part (each subparser costs ~1 ms)."""
    import argparse

    from keeper import __version__

    parser = argparse.ArgumentParser(
        prog="keeper", description="Keeper: local, automatic per-project memory for Claude Code."
    )
    parser.add_argument("--version", action="version", version=f"keeper {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--project-dir", metavar="DIR", help="the project (default: $CLAUDE_PROJECT_DIR, else cwd)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, add in COMMANDS.items():
        if only is None or name == only:
            add(sub, common)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The arguments; an option the command does not know gets that command's usage, not keeper's,
    and the option it may have meant (``recall --limt 3`` -> ``--limit``)."""
    import difflib

    first = argv[0] if argv else None
    parser = build_parser(first if first in COMMANDS and not {"-h", "--help"} & set(argv) else None)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse's own message would show keeper's usage, not the command's
        commands = next(action for action in parser._actions if action.dest == "command")
        command: argparse.ArgumentParser = commands.choices[args.command]  # type: ignore[index]
        known = [name for action in command._actions for name in action.option_strings]
        meant = [difflib.get_close_matches(arg.split("=", 1)[0], known, n=1) for arg in unknown]
        hint = "".join(f" (did you mean {found[0]}?)" for found in meant if found)
        command.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    return args


def _command(target: str) -> Callable[[Any], int]:
    """The function a command runs, ``MODULE[:FUNCTION]`` of ``keeper.commands`` (``run`` by default),
    imported now: importing every command to build the parser would cost each one's start-up. (By
    ``__import__``: ``importlib`` would bring ``warnings``, half a millisecond of every command.)"""
    module, _, function = target.partition(":")
    name = function or "run"
    run: Callable[[Any], int] = getattr(__import__(f"keeper.commands.{module}", fromlist=[name]), name)
    return run


def os_problem(exc: OSError) -> str:
    """What an OS-level failure means for the user, and what to do about it."""
    import errno

    where = f" ({exc.filename})" if exc.filename else ""
    what = exc.strerror or str(exc)
    advice = {
        errno.ENOSPC: "free some disk space, then run the command again",
        errno.EDQUOT: "free some disk space, then run the command again",
        errno.EACCES: "make Keeper's folder writable for you, or set KEEPER_HOME to a folder you own",
        errno.EPERM: "make Keeper's folder writable for you, or set KEEPER_HOME to a folder you own",
        errno.EROFS: "the disk is read-only: set KEEPER_HOME to a writable folder",
        errno.ENOTDIR: "a file stands where Keeper needs a folder: move it away, or set KEEPER_HOME elsewhere",
        errno.EEXIST: "a file stands where Keeper needs a folder: move it away, or set KEEPER_HOME elsewhere",
    }.get(exc.errno or 0, "check the path and its permissions, then run the command again")
    return f"{what}{where}; {advice}. Memory already written is unchanged."


def _reader_gone() -> int:
    """Exit quietly after the reader of stdout went away (``keeper status | head``): nothing went wrong.
    What is still buffered goes to the null device, so the interpreter's final flush is quiet."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # no file behind sys.stdout: replace the object instead
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until the interpreter exits
    return 0


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    if args_list[:1] == ["hook"] and not {"-h", "--help"} & set(args_list):
        from keeper.hooks import entry

        return entry.run(args_list[1:])
    quick = quick_recall_args(args_list)
    collecting = gc.isenabled()
    try:
        code = _run(args_list, quick)
    finally:
        if argv is not None and collecting:  # a plain recall pauses the cycle collector (see _run)
            gc.enable()
    if argv is None and quick is not None:  # a plain recall, which only reads, on the program's own command line
        from keeper import console  # (commands that write memory end as Python ends, whatever a change leaves open)

        console.end(code)
    return code


def _run(args_list: list[str], quick: Arguments | None) -> int:
    """A command, by its arguments (``quick``: a plain recall's, read without argparse): its exit
    code, and a line on stderr for what went wrong."""
    from keeper import console

    console.utf8_output()  # before the first print, argparse's included
    from keeper.errors import KeeperError

    args: Any = quick
    if args is None:
        args = parse(args_list)
    else:  # a plain recall frees what it makes by reference counting alone: the cycle collector's
        gc.disable()  # passes over the modules it loads would be ~2% of its work (main turns it on again)
    from keeper.store import fsutil

    new_store = False
    # a store an earlier release wrote is brought up to date first (doctor reports it; demo has its own)
    if getattr(args, "command", None) not in ("doctor", "demo") and not fsutil.store_is_current():
        from keeper.store import migrate

        new_store = migrate.upgrade_quietly()
    try:
        code = int(_command(args.func)(args))
        sys.stdout.flush()  # a block-buffered stdout (no PYTHONUNBUFFERED) meets a gone reader here
        return code
    except KeeperError as exc:
        print(f"keeper: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `keeper status | head`: the reader had enough; nothing went wrong
        return _reader_gone()
    except OSError as exc:  # the machine said no (full disk, no permission, a file where a folder should be)
        import errno

        if os.name == "nt" and exc.errno == errno.EINVAL and exc.filename is None:
            return _reader_gone()  # Windows' broken pipe: a write to a pipe whose reader has gone
        print(f"keeper: error: {os_problem(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("keeper: interrupted", file=sys.stderr)
        return 1
    finally:
        if new_store:
            from keeper.store import migrate

            migrate.stamp()  # the store this command made is in this code's format
