"""``keeper recall`` and ``keeper expand``: search this project's memory, then open a result's section."""

from __future__ import annotations

import os

from keeper.commands import common

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from keeper.recall import search
    from keeper.store.resolve import Resolved


def run_recall(args: argparse.Namespace) -> int:
    from keeper.hooks import context
    from keeper.recall import search

    at = common.resolve_args(args)
    query = " ".join(args.query)
    limit = args.limit if args.limit and args.limit > 0 else at.cfg.recall_limit
    results = search.search(at.project, query, limit=limit, scope=args.scope, team=at.cfg.team)
    found = _json_items(at, results) if getattr(args, "json", False) else []  # text: redacted as a whole
    common.emit(args, found, lambda: [context.recall_block(query, results, 1 << 30, at.cfg.redact_patterns)])
    return 0


def _json_items(at: Resolved, results: list[search.Result]) -> list[dict[str, object]]:
    """The results as ``--json`` gives them: snippets redacted, and where each memory.md item of a
    result came from (``keeper why``), redacted too."""
    from keeper.commands import why
    from keeper.redact import redact, redact_values

    rules = at.cfg.redact_patterns  # the heading too: memory.md's headings are written by hand
    found = [
        {**r.as_dict(), "heading": redact(r.chunk.heading, rules), "snippet": redact(r.snippet, rules)} for r in results
    ]
    for item, r in zip(found, results):
        carried = why.carried(at.project, r.chunk.path, r.chunk.text or r.snippet)
        item["provenance"] = redact_values(carried, rules)  # a branch, a file's name: as keeper why --json
    return found


def run_expand(args: argparse.Namespace) -> int:
    from keeper.recall import search
    from keeper.redact import redact
    from keeper.store import sessions
    from keeper.store.fsutil import read_text

    at = common.resolve_args(args)
    path, heading, text = search.section_for(at.project, args.id, at.cfg.team)
    rules = at.cfg.redact_patterns
    found = {"path": path, "heading": redact(heading, rules), "text": redact(text, rules), "transcript": None}
    lines = [redact(f"{heading}\n{path}\n\n{text}", rules)]
    if os.path.dirname(path) == at.project.sessions:
        facts = sessions.read_facts(read_text(path) or "")
        if facts.get("Transcript"):
            session = facts.get("Session id", "?")
            found["transcript"] = facts["Transcript"]
            lines.append(f"\nSession {session}; the whole conversation: keeper transcript {facts['Transcript']}")
    common.emit(args, found, lambda: lines)
    return 0
