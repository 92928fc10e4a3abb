"""Saving: read what Claude sent, redact it, and merge it into memory.md and the session file.

All of it happens under the project lock, each file replaced atomically, so two sessions saving
at once both land and a crash mid-save leaves every file whole.
"""

from __future__ import annotations

import json
import os
from datetime import datetime

from keeper import counters, memory, paths, record, redact, resolve, sessions
from keeper.config import Config
from keeper.errors import KeeperError
from keeper.fsutil import atomic_write, project_lock, read_json, read_text, sweep_temp_files

MERGED = ("summary", "decisions", "state", "issues", "resolved", "retired")
NOT_YET = ("feedback", "user", "tool", "reference", "scope")  # typed memories: kept in the session file


def read_input(text: str, extra_patterns: list[str]) -> tuple[memory.SaveInput, list[str]]:
    """A save from Keeper's save format (or JSON) on stdin, redacted, and what could not be read.

    Every value is text, stored as written (see ``keeper.saveformat``). Nothing is dropped: an
    unknown key, text outside any key and keys this version does not merge are kept in the
    session file, and each is named in the problems so the model that saved can be told.
    """
    from keeper import saveformat

    parsed = saveformat.parse(text)
    values = dict(parsed.values)
    problems = list(parsed.problems)
    unplaced: list[tuple[str, str]] = []
    for key in NOT_YET:
        if key in values:
            value = values.pop(key)
            items = value if isinstance(value, list) else [value]
            unplaced += [(key, item) for item in items if item.strip()]
            problems.append(f"'{key}' is not merged into memory by this version; its text is kept in the session file")
    for key, value in parsed.unknown.items():
        unplaced += [(key, item) for item in (value if isinstance(value, list) else [value]) if item.strip()]
    stray = "\n".join(parsed.stray)
    if stray.strip():
        if any(values.values()) or unplaced:
            unplaced.append(("text outside any key", stray))
        else:
            values["summary"] = stray
            problems.append("the text had no key, so all of it was saved as the summary")
    return to_save_input(values, extra_patterns, unplaced), problems


def to_save_input(
    values: dict[str, str | list[str]], extra_patterns: list[str], unplaced: list[tuple[str, str]] | None = None
) -> memory.SaveInput:
    """Redact a save's values; blank items are left out, everything else is kept as written."""

    def clean(text: str) -> str:
        return redact.redact(text, extra_patterns)

    def listed(key: str) -> list[str]:
        value = values.get(key) or []
        return [clean(item) for item in ([value] if isinstance(value, str) else value) if item.strip()]

    summary = values.get("summary") or ""
    if isinstance(summary, list):
        summary = "\n".join(summary)
    return memory.SaveInput(
        summary=clean(summary) if summary.strip() else "",
        decisions=listed("decisions"),
        state=listed("state"),
        issues=listed("issues"),
        resolved=listed("resolved"),
        retired=listed("retired"),
        unplaced=[(label, clean(text)) for label, text in unplaced or []],
    )


def _provenance_file(project: paths.Project) -> str:
    return os.path.join(project.state, "memory.json")


def save(
    project: paths.Project,
    cfg: Config,
    data: memory.SaveInput,
    session: str,
    now: datetime | None = None,
) -> tuple[memory.MergeReport, str]:
    """Merge a save into memory.md and the session file; return the report and the session file."""
    if data.is_empty():
        raise KeeperError(
            "nothing to save: give at least one of summary, decisions, state, issues, resolved, retired "
            "(key: lines on stdin, or flags such as --summary TEXT --decision TEXT)."
        )
    now = now or datetime.now()
    with project_lock(project.lock):
        for folder in (project.dir, project.sessions, project.state):
            sweep_temp_files(folder)  # what writers killed mid-write left behind
        text = read_text(project.memory)
        merged, provenance, report = memory.merge(
            text,
            read_json(_provenance_file(project)),
            data,
            project_name=project.name,
            session_id=session,
            now=now,
            recent_sessions=int(cfg["recent_sessions"]),
        )
        if merged != text:
            atomic_write(project.memory, merged)
        atomic_write(_provenance_file(project), json.dumps(provenance, ensure_ascii=False, sort_keys=True))
        session_file = sessions.ensure_file(project, session, record.started_at(project, session) or now)
        sessions.append_save(session_file, sessions.render_save(now, data, report))
        state = sessions.read_state(project, session)
        state["last_save"] = now.isoformat(timespec="seconds")
        sessions.write_state(project, session, state)
    resolve.remember_root(project, check=True)
    counters.append(counters.tally_path(project.state, session), counters.SAVE)
    return report, session_file


def report_lines(report: memory.MergeReport) -> list[str]:
    """What a save changed, one line per kind of change, for the person or model that saved."""
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
    if report.reconfirmed:
        lines.append(f"~ {len(report.reconfirmed)} decision(s) re-confirmed today: " + "; ".join(report.reconfirmed))
    if report.retired:
        lines.append(f"- {len(report.retired)} decision(s) retired: " + "; ".join(report.retired))
    if report.unmatched_retired:
        lines.append("? no decision matched: " + "; ".join(report.unmatched_retired))
    if report.resolved:
        lines.append(f"- {len(report.resolved)} issue(s) resolved: " + "; ".join(report.resolved))
    if report.unmatched:
        lines.append("? no open issue matched: " + "; ".join(report.unmatched))
    return lines or ["= nothing new for memory.md"]
