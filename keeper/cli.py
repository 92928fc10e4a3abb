"""The ``keeper`` command line. Each command is a pair: ``_add_x`` declares it, ``cmd_x`` runs it.

``keeper hook EVENT`` is dispatched before argparse is even imported: it runs on every tool use.
Commands map their arguments onto library functions and hand the result to ``_emit``, the one
place that chooses JSON or text. A ``KeeperError`` becomes one ``keeper: error: …`` line and
exit 1; anything else is a bug and propagates with its traceback. Exit codes: 0 ok, 1 error,
2 usage.
"""

from __future__ import annotations

import os
import sys

from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from keeper.store.config import Config
    from keeper.store.paths import Project
    from keeper.store.resolve import Resolved

    Adder = Callable[[Any, argparse.ArgumentParser], None]


def _resolve(args: argparse.Namespace, session: str | None = None, store: bool = True) -> Resolved:
    """The project, config and session for ``--project-dir`` (default: $CLAUDE_PROJECT_DIR, else cwd).

    Config warnings go to stderr; the session is ``session``, else $CLAUDE_CODE_SESSION_ID (Claude
    Code's Bash tool) or $CODEX_SESSION_ID (Codex's shell tool), else one per day (``manual-YYYYMMDD``).
    """
    import time

    from keeper.store.resolve import resolve, start_folder

    if store:  # doctor reports it among its checks instead
        _require_store()
    start = start_folder([args.project_dir or "", os.environ.get("CLAUDE_PROJECT_DIR", "")], strict=True)
    from keeper.plugin import agents

    raw = session or agents.session_from_env() or f"manual-{time.strftime('%Y%m%d')}"
    at = resolve(start, raw, strict=True)
    for warning in at.warnings:
        print(f"keeper: warning: {warning}", file=sys.stderr)
    return at


def _require_store() -> None:
    """Say so when the store cannot be used, rather than answer "nothing here" from an empty one."""
    from keeper.errors import KeeperError
    from keeper.store.fsutil import store_problem

    unusable = store_problem()
    if unusable:
        raise KeeperError(unusable + ".")


def _emit(args: argparse.Namespace, data: Any, text: Callable[[], list[str]]) -> None:
    """The one place that chooses JSON (``--json``) or text output for a command's result."""
    if getattr(args, "json", False):
        import json

        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for line in text():
        print(line)


def _json_flag(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON")


# -- save ------------------------------------------------------------------------------------


def _add_save(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "save",
        parents=[common],
        help="merge a save into memory.md and this session's file",
        description="Read Keeper's save format on stdin (key: lines; list items as '  - item' lines; every "
        "value plain text, stored as written) or a JSON object; or give the same with flags. Keys: summary, "
        "decisions, state, issues, resolved, retired; typed lists feedback, user, tool, reference, and scope "
        "(project, global or team: where the typed lists go; team also takes decisions and issues). "
        "Prints what changed.",
    )
    p.add_argument("--summary", help="what this session did (text)")
    p.add_argument("--decision", action="append", default=[], help="a durable decision (repeatable)")
    p.add_argument("--state", action="append", default=[], help="a current-state line (repeatable)")
    p.add_argument("--issue", action="append", default=[], help="an open issue (repeatable)")
    p.add_argument("--resolved", action="append", default=[], help="a fixed issue to remove (repeatable)")
    p.add_argument("--retired", action="append", default=[], help="a decision that no longer holds (repeatable)")
    p.add_argument("--feedback", action="append", default=[], help="a correction not to repeat (repeatable)")
    p.add_argument("--user", action="append", default=[], help="who the user is, a preference (repeatable)")
    p.add_argument("--tool", action="append", default=[], help="a binary or service: install, config, gotchas")
    p.add_argument("--reference", action="append", default=[], help="stable technical knowledge (repeatable)")
    p.add_argument(
        "--global",
        dest="scope",
        action="store_const",
        const="global",
        default="project",
        help="send the typed lists (feedback, user, tool, reference) to the global memory",
    )
    p.add_argument(
        "--team",
        dest="scope",
        action="store_const",
        const="team",
        help="send decisions, issues and the typed lists to the repository's team memory (.claude/keeper/team.md)",
    )
    p.add_argument(
        "--session", help="session id (default: $CLAUDE_CODE_SESSION_ID or $CODEX_SESSION_ID, else one per day)"
    )
    _json_flag(p, "the result")
    p.set_defaults(func=cmd_save)


def cmd_save(args: argparse.Namespace) -> int:
    from keeper.capture import saving
    from keeper.errors import KeeperError

    at = _resolve(args, args.session)
    from keeper.sync import mirror

    mirror.adopt(at.project)  # a clone whose memory a sync brought saves into that memory, not beside it
    flags: dict[str, str | list[str]] = {
        "summary": args.summary or "",
        "decisions": args.decision,
        "state": args.state,
        "issues": args.issue,
        "resolved": args.resolved,
        "retired": args.retired,
        "feedback": args.feedback,
        "user": args.user,
        "tool": args.tool,
        "reference": args.reference,
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

    def text() -> list[str]:
        lines = [
            f"Saved to {at.project.team} (commit it to share it)"
            if save.scope == "team"
            else f"Saved to {at.project.memory}"
        ]
        if problems:
            lines.append("Keeper could not read all of this save as written; nothing was lost:")
            lines += [f"  ! {problem}" for problem in problems]
        lines += ["  " + line for line in saving.report_lines(report)]
        return [*lines, f"Session file: {session_file}"]

    _emit(args, {"memory": at.project.memory, "session_file": session_file, "problems": problems, **vars(report)}, text)
    return 0


# -- recall ----------------------------------------------------------------------------------


def _add_recall(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "recall",
        parents=[common],
        help="search this project's memory, best first (tolerates typos)",
        description="Keyword search over memory.md, the session files, the global memory and Claude Code's "
        "auto memory of this project. Words are matched literally.",
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
    p.set_defaults(func=cmd_recall)


def cmd_recall(args: argparse.Namespace) -> int:
    from keeper.hooks import context
    from keeper.recall import search

    at = _resolve(args)
    query = " ".join(args.query)
    limit = args.limit if args.limit and args.limit > 0 else at.cfg.recall_limit
    results = search.search(at.project, query, limit=limit, scope=args.scope, team=at.cfg.team)
    from keeper.redact import redact

    found = [{**r.as_dict(), "snippet": redact(r.snippet, at.cfg.redact_patterns)} for r in results]
    if getattr(args, "json", False):  # where each memory.md item of a result came from (keeper why)
        from keeper.commands import why

        for item, r in zip(found, results):
            item["provenance"] = why.carried(at.project, r.chunk.path, r.chunk.text or r.snippet)
    _emit(args, found, lambda: [context.recall_block(query, results, limit_chars=1 << 30)])
    return 0


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
    return Arguments(command="recall", query=query, func=cmd_recall, **values)


def _add_expand(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "expand", parents=[common], help="print the whole section behind a recall result, with its session anchor"
    )
    p.add_argument("id", help="a result id from keeper recall, e.g. sessions/2026-11-21_1430.md:12")
    p.set_defaults(func=cmd_expand)


def cmd_expand(args: argparse.Namespace) -> int:
    from keeper.recall import search
    from keeper.redact import redact
    from keeper.store import sessions
    from keeper.store.fsutil import read_text

    at = _resolve(args)
    path, heading, text = search.section_for(at.project, args.id, at.cfg.team)
    print(redact(f"{heading}\n{path}\n\n{text}", at.cfg.redact_patterns))
    if os.path.dirname(path) == at.project.sessions:
        facts = sessions.read_facts(read_text(path) or "")
        if facts.get("Transcript"):
            session = facts.get("Session id", "?")
            print(f"\nSession {session}; the whole conversation: keeper transcript {facts['Transcript']}")
    return 0


def _add_transcript(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "transcript",
        parents=[common],
        help="print a Claude Code transcript or Codex rollout turn by turn, readably",
    )
    p.add_argument("path", help="the transcript, e.g. from a session file's Transcript line")
    p.add_argument(
        "--turn", metavar="UUID", help="show the turn holding this entry uuid (with --context turns around it)"
    )
    p.add_argument("--context", type=int, default=1, metavar="N", help="turns before and after --turn (default 1)")
    _json_flag(p, "the turns")
    p.set_defaults(func=cmd_transcript)


def cmd_transcript(args: argparse.Namespace) -> int:
    """The transcript is the agent's, not Keeper's: nothing in it was redacted, so the output is."""
    from keeper.capture import transcript
    from keeper.errors import KeeperError
    from keeper.redact import redact

    if not transcript.readable(args.path):
        raise KeeperError(
            f"{args.path} is not a readable .jsonl transcript; session files name theirs on a Transcript line."
        )
    found = transcript.turns(args.path)
    numbered = list(enumerate(found, 1))
    if args.turn:
        at = next((i for i, t in numbered if args.turn in t.uuids), None)
        if at is None:
            raise KeeperError(
                f"no turn holds an entry {args.turn!r}; run without --turn to see the turns and their uuids."
            )
        numbered = [(i, t) for i, t in numbered if abs(i - at) <= max(args.context, 0)]

    def text() -> list[str]:
        lines = []
        for number, turn in numbered:
            lines.append(f"-- turn {number} of {len(found)} · {turn.timestamp[:19].replace('T', ' ')} · {turn.uuid}")
            lines.append(f"User: {turn.prompt}")
            lines.extend(turn.items)
            lines.append("")
        return lines or ["No prompts in this transcript."]

    data = [
        {"turn": i, **t.as_dict(), "prompt": redact(t.prompt), "items": [redact(item) for item in t.items]}
        for i, t in numbered
    ]
    _emit(args, data, lambda: [redact(line) for line in text()])
    return 0


# -- status / doctor ---------------------------------------------------------------------------


def _add_status(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help="counter, files, last save and where everything is")
    _json_flag(p, "the status")
    p.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    from keeper.commands import status

    at = _resolve(args)
    data = status.collect(at.project, at.cfg)
    _emit(args, data, lambda: status.lines(data))
    return 0


def _add_doctor(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "doctor", parents=[common], help="check the install, PATH, store, config and plugin; say how to fix problems"
    )
    _json_flag(p, "the findings")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Exit 1 when a problem was found, so scripts can tell."""
    from keeper.commands import doctor

    at = _resolve(args, store=False)
    checks = doctor.run_checks(at.project, at.cfg.warnings)
    _emit(args, [c.as_dict() for c in checks], lambda: doctor.lines(checks))
    return 1 if any(c.ok is False for c in checks) else 0


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
    p.set_defaults(func=cmd_clear)


def _project_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--project",
        metavar="ID",
        help="a project by its id from `keeper projects` (works when its folder is gone), instead of --project-dir",
    )


def _stored_project(args: argparse.Namespace) -> tuple[Project, Config]:
    """The project to clear or restore: ``--project ID`` straight from the store, else ``--project-dir``.

    A project whose folder was deleted or moved cannot be named by a folder any more; by id it can,
    with the global configuration (its own ``.claude/keeper.yaml`` went with the folder).
    """
    if args.project is None:
        at = _resolve(args)
        return at.project, at.cfg
    from keeper.errors import KeeperError
    from keeper.store import config, projects

    if args.project_dir:
        raise KeeperError("give either --project ID or --project-dir DIR, not both.")
    cfg = config.load(None)
    for warning in cfg.warnings:
        print(f"keeper: warning: {warning}", file=sys.stderr)
    return projects.find(args.project), cfg


def cmd_clear(args: argparse.Namespace) -> int:
    from keeper.errors import KeeperError
    from keeper.store import trash

    project, cfg = _stored_project(args)
    days = args.older_than if args.older_than is not None else cfg.clear_older_than
    files = trash.files_to_clear(project, args.what, days)
    if not files:
        why = trash.nothing_to_clear(project, args.what, days)
        _emit(args, {"moved": [], "backup": None, "reason": why}, lambda: [f"Nothing to clear: {why}."])
        return 0
    moving = trash.described([os.path.relpath(f, project.dir) for f in files])
    everywhere = _synced_everywhere(project, args.what)
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
    _emit(
        args,
        {"moved": files, "backup": backup},
        lambda: [
            f"Moved {moving} to {backup}",
            f"Undo with: keeper restore {os.path.basename(backup)}{named}   (kept for {cfg.trash_days} days)",
        ],
    )
    return 0


def _synced_everywhere(project: Project, what: str) -> str | None:
    """What a clear means when the project syncs: it is recorded and travels to every machine."""
    from keeper.sync import remote

    data = remote.read()
    if not data or not os.path.exists(project.sync_record):
        return None
    scope = "the project" if what == "all" else "these session files"
    return (
        f"'{project.name}' syncs with {remote.shown(str(data['remote']))}: this clears {scope} on every machine "
        "syncing with it (each keeps a restorable copy in its trash; keeper restore here brings it back everywhere)."
    )


def _add_restore(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("restore", parents=[common], help="bring back what `keeper clear` moved away")
    p.add_argument("backup", nargs="?", help="backup name (default: the newest); see --list")
    p.add_argument("--list", action="store_true", help="list the backups instead")
    p.add_argument("--item", nargs="+", metavar="WORDS|ID", help="bring back one retired or resolved item instead")
    _project_flag(p)
    p.set_defaults(func=cmd_restore)


def _restore_item(args: argparse.Namespace) -> int:
    """``keeper restore --item``: one retired or resolved item back where it was, recorded as restored."""
    from keeper.capture import saving
    from keeper.commands import why
    from keeper.memory.document import SaveInput
    from keeper.store import paths

    at = _resolve(args)
    item = why.find(at.project, " ".join(args.item), removed_only=True)
    if item.section == "decisions":
        data = SaveInput(decisions=[item.text])
    elif item.section == "issues":
        data = SaveInput(issues=[item.text])
    else:
        data = SaveInput(typed={item.section or "reference": [item.text]}, scope=item.scope)
    saving.save(at.project, at.cfg, data, at.session, added="restored")
    where = at.project.memory if item.scope == "project" else paths.global_memory_file()
    print(f"Restored {item.text!r} ({item.status} before) to {where}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from keeper.store import trash

    if args.item:
        return _restore_item(args)

    project, _ = _stored_project(args)
    if args.list:
        found = trash.backups(project)
        for backup in found:
            print(trash.listing(backup))
        if not found:
            print("No backups.")
        return 0
    restored, kept = trash.restore(project, args.backup)
    print(f"Restored {count(len(restored), 'file')} into {project.dir}")
    for rel in kept:
        print(f"  kept the current {rel}; the backup copy stays in the trash")
    return 0


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
    p.set_defaults(func=cmd_why)


def cmd_why(args: argparse.Namespace) -> int:
    from keeper.commands import why

    at = _resolve(args)
    data = why.explain(at.project, " ".join(args.item))
    _emit(args, data, lambda: why.lines(data))
    return 0


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
    p.set_defaults(func=cmd_pin)


def cmd_pin(args: argparse.Namespace) -> int:
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
    p.set_defaults(func=cmd_sync)


def cmd_sync(args: argparse.Namespace) -> int:
    from keeper.sync import background, engine

    _require_store()
    if args.background:
        return background.run()
    result, url = engine.sync(args.remote)
    from keeper.store.resolve import resolve, start_folder
    from keeper.sync import mirror

    # typed in a clone: its memory is here now, not at its next session (leniently: the sync is done)
    start = start_folder([args.project_dir or "", os.environ.get("CLAUDE_PROJECT_DIR", "")], strict=False)
    mirror.adopt(resolve(start, strict=False).project)
    _emit(args, {"remote": url, **result.as_dict()}, lambda: result.lines(url))
    return 0


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
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from keeper.commands import archive

    project = _resolve(args).project if args.project_dir else None
    data = archive.export(project, args.out)
    _emit(args, data, lambda: archive.export_lines(data))
    return 0


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
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    """Exit 1 when the archive held files Keeper refused (the rest was imported), so scripts can tell."""
    from keeper.commands import archive

    into = _resolve(args).project if args.project_dir else None
    data = archive.import_archive(args.archive, args.project, into, args.dry_run)
    _emit(args, data, lambda: archive.import_lines(data))
    return 1 if data["refused"] else 0


# -- projects / hub ----------------------------------------------------------------------------


def _add_projects(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "projects",
        parents=[common],
        help="every project in the store: root folder, sessions, size, last activity, open issues",
    )
    _json_flag(p, "the list")
    p.set_defaults(func=cmd_projects)


def cmd_projects(args: argparse.Namespace) -> int:
    from keeper.store import projects

    _require_store()
    found = projects.list_all()
    _emit(args, [p.as_dict() for p in found], lambda: projects.lines(found))
    return 0


def _add_hub(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "hub",
        parents=[common],
        help="write the Memory Hub: one offline HTML page of every project's memory, sessions and history",
        description="Write one self-contained HTML file (no network requests; open it from disk) and print its path.",
    )
    p.add_argument("--out", metavar="FILE", help="where to write it (default: <store>/hub.html)")
    p.add_argument("--open", action="store_true", help="open it in the default web browser")
    p.set_defaults(func=cmd_hub)


def cmd_hub(args: argparse.Namespace) -> int:
    from keeper.hub import build

    path = build.write(args.out)
    print(path)
    if args.open:
        import webbrowser
        from pathlib import Path

        webbrowser.open(Path(path).as_uri())
    return 0


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
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from keeper.commands import demo

    return demo.run()


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
    """Exit quietly after the reader of stdout went away (``keeper status | head``): nothing went wrong."""
    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the interpreter's final flush is quiet
    except OSError:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    if args_list[:1] == ["hook"] and not {"-h", "--help"} & set(args_list):
        from keeper.hooks import entry

        return entry.run(args_list[1:])
    from keeper import console

    console.utf8_output()  # before the first print, argparse's included
    from keeper.errors import KeeperError

    args: Any = quick_recall_args(args_list)
    if args is None:
        first = args_list[0] if args_list else None
        parser = build_parser(first if first in COMMANDS and not {"-h", "--help"} & set(args_list) else None)
        args = parser.parse_args(args_list)
    from keeper.store import migrate

    # a store an earlier release wrote is brought up to date first (doctor reports it; demo has its own)
    new_store = getattr(args, "command", None) not in ("doctor", "demo") and migrate.upgrade_quietly()
    try:
        return int(args.func(args))
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
            migrate.stamp()  # the store this command made is in this code's format
