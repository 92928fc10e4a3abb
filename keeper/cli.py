"""The ``keeper`` command line. Each command is a pair: ``_add_x`` declares it, ``cmd_x`` runs it.

``keeper hook EVENT`` is dispatched before argparse is even imported: it runs on every tool use.
A ``KeeperError`` becomes one ``keeper: error: …`` line and exit 1; anything else is a bug and
propagates with its traceback. Exit codes: 0 ok, 1 error, 2 usage.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from keeper import paths
    from keeper.config import Config


def _resolve(args: argparse.Namespace) -> tuple[paths.Project, Config]:
    """The project and config for ``--project-dir`` (default: $CLAUDE_PROJECT_DIR, else cwd)."""
    from keeper import config, paths
    from keeper.errors import KeeperError

    start = args.project_dir or paths.default_project_dir()
    if not os.path.isdir(start):
        raise KeeperError(f"project folder {start!r} does not exist; pass an existing folder to --project-dir.")
    root = paths.find_project_root(start)
    cfg = config.load(root)
    for warning in cfg.warnings:
        print(f"keeper: warning: {warning}", file=sys.stderr)
    pinned = cfg.get("project")
    if pinned:
        pinned = paths.check_pinned_name(pinned, os.path.join(root, paths.PROJECT_CONFIG))
    return paths.make_project(root, pinned), cfg


def _session_id(explicit: str | None) -> str:
    from datetime import date

    from keeper import paths

    raw = explicit or os.environ.get("CLAUDE_CODE_SESSION_ID") or f"manual-{date.today():%Y%m%d}"
    return paths.safe_session_id(raw)


def _print_json(data: Any) -> None:
    import json

    print(json.dumps(data, indent=2, ensure_ascii=False))


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MB"


# -- save ------------------------------------------------------------------------------------


def _add_save(sub: Any) -> None:
    p = sub.add_parser(
        "save",
        help="merge a save into memory.md and this session's file",
        description="Read a YAML (or JSON) mapping on stdin with any of summary, decisions, state, issues, "
        "resolved; or give the same with flags. Prints what changed.",
    )
    p.add_argument("--summary", help="what this session did (text)")
    p.add_argument("--decision", action="append", default=[], help="a durable decision (repeatable)")
    p.add_argument("--state", action="append", default=[], help="a current-state line (repeatable)")
    p.add_argument("--issue", action="append", default=[], help="an open issue (repeatable)")
    p.add_argument("--resolved", action="append", default=[], help="a fixed issue to remove (repeatable)")
    p.add_argument("--session", help="session id (default: $CLAUDE_CODE_SESSION_ID, else one per day)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_save)


def cmd_save(args: argparse.Namespace) -> int:
    from keeper import store
    from keeper.errors import KeeperError

    project, cfg = _resolve(args)
    flags = {
        "summary": args.summary,
        "decisions": args.decision,
        "state": args.state,
        "issues": args.issue,
        "resolved": args.resolved,
    }
    if any(flags.values()):
        data: dict[str, Any] = {k: v for k, v in flags.items() if v}
        warnings: list[str] = []
    else:
        if sys.stdin is None or sys.stdin.isatty():
            raise KeeperError(
                "keeper save needs input: pipe YAML on stdin (keeper save <<'EOF' … EOF) or use flags such as "
                "--summary TEXT --decision TEXT."
            )
        raw = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        data, warnings = store.parse_input(raw)
    save, more = store.to_save_input(data, cfg["redact_patterns"])
    for warning in warnings + more:
        print(f"keeper: warning: {warning}", file=sys.stderr)
    report, session_file = store.save(project, cfg, save, _session_id(args.session))
    if args.json:
        _print_json({"memory": project.memory, "session_file": session_file, **vars(report)})
        return 0
    print(f"Saved to {project.memory}")
    lines = []
    if report.added_decisions:
        lines.append(f"+ {len(report.added_decisions)} decision(s): " + "; ".join(report.added_decisions))
    if report.known_decisions:
        lines.append(f"= {len(report.known_decisions)} decision(s) already known: " + "; ".join(report.known_decisions))
    if report.state_lines:
        lines.append(f"~ current state replaced ({report.state_lines} line(s))")
    if report.recent:
        lines.append("~ recent context updated for this session")
    if report.added_issues:
        lines.append(f"+ {len(report.added_issues)} issue(s): " + "; ".join(report.added_issues))
    if report.known_issues:
        lines.append(f"= {len(report.known_issues)} issue(s) already known")
    if report.resolved:
        lines.append(f"- {len(report.resolved)} issue(s) resolved: " + "; ".join(report.resolved))
    if report.unmatched:
        lines.append("? no open issue matched: " + "; ".join(report.unmatched))
    for line in lines or ["= nothing new for memory.md"]:
        print("  " + line)
    print(f"Session file: {session_file}")
    return 0


# -- recall ----------------------------------------------------------------------------------


def _add_recall(sub: Any) -> None:
    p = sub.add_parser(
        "recall",
        help="search this project's memory, best first (tolerates typos)",
        description="Keyword search over memory.md and the session files. Words are matched literally.",
    )
    p.add_argument("query", nargs="+", help="words to look for")
    p.add_argument("--limit", type=int, default=None, help="most results to show (default: recall_limit)")
    p.add_argument("--json", action="store_true", help="print a JSON list of results")
    p.set_defaults(func=cmd_recall)


def cmd_recall(args: argparse.Namespace) -> int:
    from keeper import context, search

    project, cfg = _resolve(args)
    query = " ".join(args.query)
    limit = args.limit if args.limit and args.limit > 0 else int(cfg["recall_limit"])
    results = [r.as_dict() for r in search.search(project, query, limit=limit)]
    if args.json:
        _print_json(results)
    else:
        print(context.recall_block(query, results, limit_chars=1 << 30))
    return 0


def _add_expand(sub: Any) -> None:
    p = sub.add_parser("expand", help="print the whole section behind a recall result, with its session anchor")
    p.add_argument("id", help="a result id from keeper recall, e.g. sessions/2026-11-21_1430.md:12")
    p.set_defaults(func=cmd_expand)


def cmd_expand(args: argparse.Namespace) -> int:
    from keeper import search
    from keeper.fsutil import read_text
    from keeper.markdown import Document

    project, _ = _resolve(args)
    path, heading, text = search.section_for(project, args.id)
    print(f"{heading}\n{path}\n\n{text}")
    if os.path.dirname(path) == project.sessions:
        header = Document.parse(read_text(path) or "").title()
        facts = dict(item.split(": ", 1) for _, item in header.bullets() if ": " in item) if header else {}
        if facts.get("Transcript"):
            session = facts.get("Session id", "?")
            print(f"\nSession {session}; the whole conversation: keeper transcript {facts['Transcript']}")
    return 0


def _add_transcript(sub: Any) -> None:
    p = sub.add_parser("transcript", help="print a Claude Code transcript (JSONL) turn by turn, readably")
    p.add_argument("path", help="the transcript, e.g. from a session file's Transcript line")
    p.add_argument(
        "--turn", metavar="UUID", help="show the turn holding this entry uuid (with --context turns around it)"
    )
    p.add_argument("--context", type=int, default=1, metavar="N", help="turns before and after --turn (default 1)")
    p.add_argument("--json", action="store_true", help="print the turns as JSON")
    p.set_defaults(func=cmd_transcript)


def cmd_transcript(args: argparse.Namespace) -> int:
    from keeper import store, transcript
    from keeper.errors import KeeperError

    if not store.readable_transcript(args.path):
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
    if args.json:
        _print_json([{"turn": i, **t.as_dict()} for i, t in numbered])
        return 0
    for number, turn in numbered:
        print(f"-- turn {number} of {len(found)} · {turn.timestamp[:19].replace('T', ' ')} · {turn.uuid}")
        print(f"User: {turn.prompt}")
        for item in turn.items:
            print(item)
        print()
    if not found:
        print("No prompts in this transcript.")
    return 0


# -- status ----------------------------------------------------------------------------------


def _add_status(sub: Any) -> None:
    p = sub.add_parser("status", help="counter, files, last save and where everything is")
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    p.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    from keeper import status

    project, cfg = _resolve(args)
    data = status.collect(project, cfg)
    if args.json:
        _print_json(data)
        return 0
    mem, ses, cnt = data["memory"], data["sessions"], data["counter"]
    print(f"Keeper {data['version']} · project '{data['project']['name']}' ({data['project']['id']})")
    print(f"  project root  {data['project']['root']}")
    print(f"  memory folder {data['store']}")
    if mem["exists"]:
        print(
            f"  memory.md     {_size(mem['bytes'])}, {mem['decisions']} decisions, {mem['issues']} open issues, "
            f"{mem['recent']} recent sessions; last updated {mem['last_updated'] or 'never'}"
        )
    else:
        print("  memory.md     not written yet (the first save creates it)")
    print(
        f"  sessions      {ses['count']} file(s), {_size(ses['bytes'])}"
        + (f"; newest {ses['newest']}" if ses["newest"] else "")
    )
    print(
        f"  counter       {cnt['unsaved']} unsaved of {cnt['tool_uses']} tool uses (session {cnt['session'] or '-'}); "
        f"save prompt every {cnt['save_every']}, final save at {cnt['final_save_min']}"
    )
    print(f"  last save     {data['last_save'] or 'never'}")
    if data["hooks"]:
        calls = ", ".join(f"{event} {v['calls']}" for event, v in sorted(data["hooks"].items()))
        injected = sum(v["injected_bytes"] for v in data["hooks"].values())
        start = data["hooks"].get("session-start", {}).get("last_injected", 0)
        print(f"  hooks         {calls}")
        print(f"  injected      {_size(injected)} in all; the last session start put {_size(start)} into context")
    print(f"  config        {data['config']['global']} (+ .claude/keeper.yaml, KEEPER_* variables)")
    for warning in data["config"]["warnings"]:
        print(f"  config issue  {warning}")
    print(f"  log           {data['log']}")
    if data["last_error"]:
        print(f"  last error    {data['last_error']}")
    if not data["keeper_on_path"]:
        print("  problem       `keeper` is not on PATH, so Claude Code cannot run the hooks. Install with")
        print("                `pipx install claude-keeper` (or pip) and restart Claude Code.")
    if not data["platform_data_dir_agrees"]:
        print("  note          platformdirs suggests another data folder; set KEEPER_HOME to choose one explicitly.")
    return 0


def _add_doctor(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check the install, PATH, store, config and plugin; say how to fix problems")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Exit 1 when a problem was found, so scripts can tell."""
    from keeper import doctor

    project, _ = _resolve(args)
    checks = doctor.run_checks(project)
    if args.json:
        _print_json([c.as_dict() for c in checks])
    else:
        for check in checks:
            mark = {True: "ok  ", False: "FAIL", None: "note"}[check.ok]
            print(f"  {mark}  {check.name:8} {check.detail}")
            if check.fix and check.ok is not True:
                print(f"        {'':8} fix: {check.fix}")
        problems = sum(1 for c in checks if c.ok is False)
        print(f"{problems} problem(s) found." if problems else "No problems found.")
    return 1 if any(c.ok is False for c in checks) else 0


# -- clear / restore ---------------------------------------------------------------------------


def _add_clear(sub: Any) -> None:
    p = sub.add_parser(
        "clear",
        help="move old session files (or all memory) to a restorable backup",
        description="'old' moves session files older than --older-than days; 'all' moves memory.md, "
        "the session files and state. Nothing is deleted: `keeper restore` brings it back.",
    )
    p.add_argument("what", choices=["old", "all"], help="what to clear")
    p.add_argument("--older-than", type=int, default=None, metavar="DAYS", help="age cutoff for 'old'")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_clear)


def cmd_clear(args: argparse.Namespace) -> int:
    from keeper import trash
    from keeper.errors import KeeperError

    project, cfg = _resolve(args)
    days = args.older_than if args.older_than is not None else int(cfg["clear_older_than"])
    if days < 0:
        raise KeeperError("--older-than must be 0 or more days.")
    files = trash.all_files(project) if args.what == "all" else trash.old_session_files(project, days)
    if not files:
        if args.json:
            _print_json({"moved": [], "backup": None})
        else:
            print("Nothing to clear.")
        return 0
    if not args.yes:
        if sys.stdin is None or not sys.stdin.isatty():
            raise KeeperError(
                f"clear {args.what} would move {len(files)} file(s); add --yes to confirm (nothing was removed)."
            )
        answer = input(f"Move {len(files)} file(s) of '{project.name}' to a restorable backup? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was removed.")
            return 0
    backup = trash.move_to_trash(project, files, f"keeper clear {args.what}")
    trash.purge_expired(project, int(cfg["trash_days"]))
    if args.json:
        _print_json({"moved": files, "backup": backup})
    else:
        print(f"Moved {len(files)} file(s) to {backup}")
        print(f"Undo with: keeper restore {os.path.basename(backup)}   (kept for {cfg['trash_days']} days)")
    return 0


def _add_restore(sub: Any) -> None:
    p = sub.add_parser("restore", help="bring back what `keeper clear` moved away")
    p.add_argument("backup", nargs="?", help="backup name (default: the newest); see --list")
    p.add_argument("--list", action="store_true", help="list the backups instead")
    p.set_defaults(func=cmd_restore)


def cmd_restore(args: argparse.Namespace) -> int:
    from keeper import trash

    project, _ = _resolve(args)
    if args.list:
        found = trash.backups(project)
        for backup in found:
            print(os.path.basename(backup))
        if not found:
            print("No backups.")
        return 0
    restored, kept = trash.restore(project, args.backup)
    print(f"Restored {len(restored)} file(s) into {project.dir}")
    for rel in kept:
        print(f"  kept the current {rel}; the backup copy stays in the trash")
    return 0


# -- hook / demo -------------------------------------------------------------------------------


def _add_hook(sub: Any) -> None:
    from keeper import hooks

    p = sub.add_parser("hook", help="run a Claude Code hook: JSON on stdin, one JSON object on stdout")
    p.add_argument("event", choices=sorted(hooks.HANDLERS), help="the hook event")
    p.set_defaults(func=None)


def _add_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help="replay a scripted session through the real hooks, offline")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from keeper import demo

    return demo.run()


COMMANDS: dict[str, Callable[[Any], None]] = {}


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
    real_add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return real_add(name, parents=[common], **kwargs)

    sub.add_parser = add_parser  # type: ignore[method-assign]
    for name, add in COMMANDS.items():
        if only is None or name == only:
            add(sub)
    return parser


COMMANDS.update(
    save=_add_save,
    recall=_add_recall,
    expand=_add_expand,
    transcript=_add_transcript,
    status=_add_status,
    doctor=_add_doctor,
    clear=_add_clear,
    restore=_add_restore,
    hook=_add_hook,
    demo=_add_demo,
)


def _hook_args(argv: list[str]) -> list[str]:
    """``hook EVENT [--project-dir DIR]`` without argparse (it costs the hot path ~3 ms)."""
    rest = list(argv)
    if "--project-dir" in rest:
        at = rest.index("--project-dir")
        if at + 1 < len(rest):
            os.environ["CLAUDE_PROJECT_DIR"] = rest[at + 1]
        del rest[at : at + 2]
    return rest


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    if args_list[:1] == ["hook"] and not {"-h", "--help"} & set(args_list):
        from keeper import hooks

        return hooks.run(_hook_args(args_list[1:]))
    from keeper.errors import KeeperError

    first = args_list[0] if args_list else None
    parser = build_parser(first if first in COMMANDS and not {"-h", "--help"} & set(args_list) else None)
    args = parser.parse_args(args_list)
    try:
        return int(args.func(args))
    except KeeperError as exc:
        print(f"keeper: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("keeper: interrupted", file=sys.stderr)
        return 1
