"""What ``keeper status`` reports: counter, files, last save, hook activity, problems, locations."""

from __future__ import annotations

import glob
import os
import sys

from keeper import __version__, redact
from keeper.capture import receipts
from keeper.commands import common
from keeper.memory import document
from keeper.plugin import agents, codex, gemini, install, opencode
from keeper.store import counters, identity, loads, log, paths, provenance, repo, sessions
from keeper.store.config import Config
from keeper.store.fsutil import read_text
from keeper.store.projects import size
from keeper.store.stale import stale_items
from keeper.sync import report
from keeper.sync.scan import shown_name
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def collect(project: paths.Project, cfg: Config) -> dict[str, Any]:
    """Everything ``keeper status`` reports, as plain data."""
    text = read_text(project.memory)
    view = document.overview(text)
    files = sessions.list_files(project)
    session = agents.session_from_env()
    if session:  # inside Claude Code or Codex: this session's counter; else the most recent one
        tally_file: str | None = counters.tally_path(project, identity.safe_session_id(session))
    else:
        tallies = glob.glob(os.path.join(project.session_state, "*.tally"))
        tally_file = max(tallies, key=os.path.getmtime) if tallies else None
    seen = counters.read(tally_file) if tally_file else b""
    saves = [sessions.state_at(f).last_save for f in glob.glob(os.path.join(project.session_state, "*.json"))]
    last_save = max((s for s in saves if s), default=None)
    data_root = paths.data_root()
    try:
        import platformdirs

        expected = platformdirs.user_data_dir("keeper", appauthor=False)
    except Exception:  # a broken platformdirs must not break status
        expected = data_root
    return {
        "version": __version__,
        "project": {"name": project.name, "id": project.id, "root": project.root},
        "store": project.dir,
        "memory": {
            "path": project.memory,
            "exists": text is not None,
            "bytes": len(text.encode("utf-8")) if text else 0,
            "decisions": view.decisions,
            "issues": view.issues,
            "recent": view.recent,
            "last_updated": view.last_updated or _modified(project.memory),
            # memory.md's own words, redacted like every road out (a hand edit, a pattern newer than a save)
            "stale": redact.redact_values([item.as_dict() for item in stale_items(project, text)], cfg.redact_patterns),
            "recall_only": redact.redact_values(loads.idle_items(project, text), cfg.redact_patterns),
        },
        "uses": receipts.share(project, provenance.read(project.dir)),
        "global": _global_memory(),
        "team": _team_memory(project, cfg),
        "sync": report.summary(),
        "sessions": {
            "count": len(files),
            "bytes": sum(os.path.getsize(f) for f in files),
            "newest": shown_name(os.path.basename(files[-1])) if files else None,  # a secret in it redacted
        },
        "counter": {
            "session": os.path.basename(tally_file)[: -len(".tally")] if tally_file else None,
            "unsaved": counters.uses_since(seen, counters.SAVE),
            "tool_uses": counters.total_uses(seen),
            "save_every": cfg.save_every,
            "final_save_min": cfg.final_save_min,
        },
        "last_save": last_save,
        "hooks": counters.hook_summary(project.state),
        "config": _config_files(project, cfg),
        "last_error": redact.redact(error, cfg.redact_patterns) if (error := log.last_error()) else None,
        "log": log.log_file(),
        "keeper_on_path": install.keeper_on_path(),
        "running": {"python": sys.executable, "plugin_environment": install.running_in_plugin_env()},
        "plugin": [plugin.as_dict() for plugin in install.plugin_installs()],
        "codex": [plugin.as_dict() for plugin in codex.plugin_installs()],
        "gemini": [extension.as_dict() for extension in gemini.installs()],
        "opencode": opencode.installs(),
        "platform_data_dir_agrees": bool(os.environ.get("KEEPER_HOME")) or expected == data_root,
    }


def _modified(path: str) -> str | None:
    """When a file last changed, as memory.md's ``Last updated`` line writes it: a save that sets
    no state writes no such line, yet it updated the memory."""
    import time

    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(os.stat(path).st_mtime))
    except (OSError, ValueError, OverflowError):
        return None


def _global_memory() -> dict[str, Any]:
    path = paths.global_memory_file()
    text = read_text(path)
    return {
        "path": path,
        "exists": text is not None,
        "bytes": len(text.encode("utf-8")) if text else 0,
        "items": document.overview(text).typed,
    }


def _config_files(project: paths.Project, cfg: Config) -> dict[str, Any]:
    """The configuration files this project reads, saying which exist (a path alone reads as a file that does)."""
    found: dict[str, Any] = {
        "global": paths.global_config_file(),
        "project": os.path.join(project.root, paths.PROJECT_CONFIG),
    }
    for name in ("global", "project"):
        found[f"{name}_exists"] = os.path.isfile(found[name])
    return {**found, "warnings": cfg.warnings}


def _team_memory(project: paths.Project, cfg: Config) -> dict[str, Any]:
    """The repository's team memory: where, how big, whether it is read, and its state in git."""
    from keeper.capture import team
    from keeper.recall import sources

    readable = repo.team_file(project)
    text = sources.read_named(readable, sources.TEAM_NAME) if readable else None
    view = document.overview(text)
    return {
        "path": project.team,
        "exists": os.path.lexists(project.team),
        "readable": text is not None,
        "bytes": len(text.encode("utf-8")) if text else 0,
        "items": view.decisions + view.issues + view.typed,
        "read": cfg.team,
        "git": team.git_state(project),
    }


def _team_line(team: dict[str, Any]) -> str:
    if not team["exists"]:
        return "  team memory   none (keeper save --team writes .claude/keeper/team.md, to commit with the code)"
    git = {
        "committed": "committed",
        "uncommitted": "has changes not committed yet: commit it to share them",
        "unknown": "not in a git work tree",
    }.get(team["git"], team["git"])
    if not team["readable"]:
        return f"  team memory   {team['path']} cannot be read (a link, or not a regular file); {git}"
    read = "" if team["read"] else "; not read (team: false)"
    return f"  team memory   {size(team['bytes'])}, {count(team['items'], 'item')} at {team['path']}; {git}{read}"


def _use_line(uses: dict[str, int]) -> list[str]:
    """The share of the items Keeper put into recent sessions (at their start or by a recall hit)
    that those sessions used."""
    if not uses["injected"]:
        return []
    share = f"{uses['used'] / uses['injected']:.0%}"
    return [
        f"  used          {uses['used']} of {count(uses['injected'], 'item')} Keeper put into the last "
        f"{count(uses['sessions'], 'session')} were used ({share}; {uses['at_start']} shown at the start, "
        f"{uses['recalled']} more by recall; keeper why ID lists an item's uses)"
    ]


RECALL_ONLY_SHOWN = 10  # items named in the text; --json lists them all


def _recall_only_lines(idle: list[dict[str, str]]) -> list[str]:
    """The items session starts leave to recall: shown at many, used in none (``store.loads``)."""
    if not idle:
        return []
    head = (
        f"  recall only   {count(len(idle), 'item')} shown at the start of {loads.IDLE_AFTER} or more sessions "
        "and used in none: left out of the start, found by keeper recall; a use or a save brings one back:"
    )
    more = [f"    and {len(idle) - RECALL_ONLY_SHOWN} more (keeper status --json lists them all)"]
    shown = [f"    {item['id']} {item['text'][:70]!r}" for item in idle[:RECALL_ONLY_SHOWN]]
    return [head, *shown, *(more if len(idle) > RECALL_ONLY_SHOWN else [])]


def lines(data: dict[str, Any]) -> list[str]:
    """``keeper status`` as text, from what ``collect`` returned."""
    mem, ses, cnt = data["memory"], data["sessions"], data["counter"]
    out = [
        f"Keeper {data['version']} · project '{data['project']['name']}' ({data['project']['id']})",
        f"  project root  {data['project']['root']}",
        f"  memory folder {data['store']}",
    ]
    if mem["exists"]:
        out.append(
            f"  memory.md     {size(mem['bytes'])}, {count(mem['decisions'], 'decision')}, "
            f"{count(mem['issues'], 'open issue')}, "
            f"{count(mem['recent'], 'recent session')}; last updated {mem['last_updated'] or 'never'}"
        )
        if mem["stale"]:
            out.append(
                f"  may be stale  {count(len(mem['stale']), 'item')} "
                "(a claim about the code no longer holds; keeper why ID):"
            )
            out += [f"    {s['id']} {s['text'][:60]!r}: {s['reason']}" for s in mem["stale"][:5]]
        out += _recall_only_lines(mem["recall_only"])
    else:
        out.append("  memory.md     not written yet (the first save creates it)")
    out += _use_line(data["uses"])
    glob_ = data["global"]
    out.append(
        f"  global memory {size(glob_['bytes'])}, {count(glob_['items'], 'item')} at {glob_['path']}"
        if glob_["exists"]
        else "  global memory none yet (saves with scope: global create it)"
    )
    out.append(_team_line(data["team"]))
    out.append(
        f"  sessions      {count(ses['count'], 'file')}, {size(ses['bytes'])}"
        + (f"; newest {ses['newest']}" if ses["newest"] else "")
    )
    out.append(
        f"  counter       {cnt['unsaved']} unsaved of {cnt['tool_uses']} tool uses (session {cnt['session'] or '-'}); "
        f"save prompt every {cnt['save_every']}, final save at {cnt['final_save_min']}"
    )
    out.append(f"  last save     {data['last_save'] or 'never'}")
    if data["hooks"]:
        calls = ", ".join(f"{event} {v['calls']}" for event, v in sorted(data["hooks"].items()))
        injected = sum(v["injected_bytes"] for v in data["hooks"].values())
        start = data["hooks"].get("session-start", {}).get("last_injected", 0)
        out.append(f"  hooks         {calls}")
        timed = [(v["slowest_recent_ms"], e) for e, v in data["hooks"].items() if v.get("slowest_recent_ms")]
        if timed:
            slowest = ", ".join(f"{e} {ms:.0f} ms" for ms, e in sorted(timed, reverse=True)[:3])
            out.append(f"  slowest       {slowest} (recent calls, time in Keeper)")
        out.append(f"  injected      {size(injected)} in all; the last session start put {size(start)} into context")
    out += report.lines(data["sync"])
    files = data["config"]
    named = [f"{files[k]}{'' if files[k + '_exists'] else ' (none)'}" for k in ("global", "project")]
    out.append(f"  config        {' + '.join(named)} + KEEPER_* variables over the defaults")
    out += [f"  config issue  {warning}" for warning in data["config"]["warnings"]]
    out.append(f"  log           {data['log']}")
    if data["last_error"]:
        out.append(f"  last error    {data['last_error']}")
    for plugin in data["plugin"]:
        state = (
            "set up"
            if plugin["environment_ready"]
            else "set-up failed: see `keeper doctor`"
            if plugin["setup_failure"]
            else "sets itself up at the next session start"
        )
        out.append(f"  plugin        {plugin['plugin']} {plugin['version']}: {state} ({plugin['data']})")
        if plugin["marketplace_folder_missing"]:
            out.append(
                f"  problem       its marketplace folder {plugin['marketplace_folder']} is gone: run `keeper doctor`"
            )
    for plugin in data["codex"]:
        trust = "hooks trusted"
        if plugin["untrusted_hooks"]:
            trust = f"Codex was not told to trust {count(len(plugin['untrusted_hooks']), 'hook')}: run `keeper doctor`"
        out.append(f"  codex         {plugin['plugin']} {plugin['version']}: {trust}")
    for extension in data["gemini"]:
        hooks = "hooks complete" if extension["hooks_complete"] else "hooks complete after one session"
        out.append(f"  gemini        keeper {extension['version']}: {extension['hooks_off'] or hooks}")
    for found in data["opencode"]:
        state = "runs Keeper" if found["runs_keeper"] else "cannot run Keeper: run `keeper doctor`"
        out.append(f"  opencode      {found['plugin']}: {state if found['present'] else 'gone: run `keeper doctor`'}")
    if not data["plugin"] and not data["keeper_on_path"]:
        out.append("  problem       no keeper plugin is enabled in Claude Code and no `keeper` is on PATH:")
        out.append(f"                {install.install_hint()}")
    if not data["platform_data_dir_agrees"]:
        out.append("  note          platformdirs suggests another data folder; set KEEPER_HOME to choose one.")
    return out


def run(args: argparse.Namespace) -> int:
    at = common.resolve_args(args)
    data = collect(at.project, at.cfg)
    common.emit(args, data, lambda: lines(data))
    return 0
