"""What ``/keeper:recall`` and ``/keeper:clear`` do, run in-process by the prompt hook.

Claude Code pastes a command's arguments into ``!`` shell lines unquoted, so a query such as
``$(rm -rf ~)`` would run there. Instead the UserPromptSubmit hook receives the prompt as JSON
and answers here: the query is only ever data, searched literally, and nothing is executed.
"""

from __future__ import annotations

import os

from keeper import context, paths, search, sessions
from keeper.config import Config
from keeper.errors import KeeperError


def recall_for_prompt(project: paths.Project, cfg: Config, query: str) -> str:
    if not query:
        return (
            "Keeper recall: no query was given. Usage: /keeper:recall <words> (for example "
            "/keeper:recall cache invalidation)."
        )
    results = search.search(project, query, limit=int(cfg["recall_limit"]))
    return context.recall_block(query, [r.as_dict() for r in results])


def clear_for_prompt(project: paths.Project, cfg: Config, args: str) -> str:
    from keeper import trash

    what = args.split()[0].lower() if args.split() else "old"
    if what not in ("old", "all") or len(args.split()) > 1:
        return (
            f"Keeper clear: {args!r} is not understood, so nothing was removed. Usage: /keeper:clear old "
            "(session files older than the configured days) or /keeper:clear all."
        )
    days = int(cfg["clear_older_than"])
    files = trash.all_files(project) if what == "all" else trash.old_session_files(project, days)
    if not files:
        scope = "memory" if what == "all" else f"session files older than {days} days"
        return f"Keeper clear {what}: no {scope} to clear for project '{project.name}'. Nothing was removed."
    try:
        backup = trash.move_to_trash(project, files, f"/keeper:clear {what}")
    except KeeperError as exc:
        return f"Keeper clear {what}: nothing was removed: {exc}"
    trash.purge_expired(project, int(cfg["trash_days"]))
    return (
        f"Keeper clear {what}: moved {len(files)} file(s) of project '{project.name}' to {backup}. "
        f"They can be brought back with `keeper restore` for {cfg['trash_days']} days."
    )


AUTO_LIMIT, AUTO_CHARS = 3, 1500
MIN_COVERAGE, MIN_HITS = 0.5, 2


def auto_recall(project: paths.Project, prompt: str, session: str) -> str:
    """Up to three past sections that cover enough of the prompt, or "" when nothing is relevant.

    memory.md (given at session start) and this session's own file (in context already) are left
    out. The index check is the quick one and typo correction is off: this runs on every prompt.
    """
    own = sessions.existing_file(project, session)
    results = search.search(project, prompt, limit=12, thorough=False, correct=False, min_terms=MIN_HITS)
    relevant = [
        r
        for r in results
        if r.coverage >= MIN_COVERAGE
        and r.hits >= MIN_HITS
        and os.path.basename(r.chunk.path) != paths.MEMORY_FILE
        and r.chunk.path != own
    ][:AUTO_LIMIT]
    if not relevant:
        return ""
    return context.auto_recall_block([r.as_dict() for r in relevant], AUTO_CHARS)
