"""Saving: read what Claude sent, redact it, and merge it into memory.md and the session file.

All of it happens under the project lock, each file replaced atomically, so two sessions saving
at once both land and a crash mid-save leaves every file whole.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime

from keeper import counters, memory, paths, record, redact, sessions
from keeper.config import Config
from keeper.errors import KeeperError
from keeper.fsutil import atomic_write, project_lock, read_json, read_text, sweep_temp_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELDS = ("summary", "decisions", "state", "issues", "resolved")
_LENIENT_KEY = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*)$")
_LIST_ITEM = re.compile(r"^\s*[-*+]\s+(.*)$")


def _lenient(text: str) -> dict[str, Any]:
    """Read ``key: value`` / ``- item`` lines when the YAML is not valid (``summary: a: b``)."""
    found: dict[str, Any] = {}
    key: str | None = None
    for line in text.splitlines():
        match = _LENIENT_KEY.match(line)
        if match and match.group(1).lower() in FIELDS:
            key = match.group(1).lower()
            value = match.group(2).strip()
            if value in ("|", ">", "|-", ">-"):
                value = ""
            if key == "summary":
                found[key] = value
            else:
                found[key] = [value] if value else []
            continue
        if key is None:
            continue
        item = _LIST_ITEM.match(line)
        if item and key != "summary":
            found.setdefault(key, [])
            if isinstance(found[key], list):
                found[key].append(item.group(1).strip())
        elif line.strip():
            previous = found.get(key)
            if isinstance(previous, str):
                found[key] = (previous + "\n" + line.strip()).strip()
            elif isinstance(previous, list) and previous:
                previous[-1] = previous[-1] + " " + line.strip()
    return found


def parse_input(text: str) -> tuple[dict[str, Any], list[str]]:
    """A save mapping from YAML or JSON text, and warnings. Never raises on bad input.

    Models often write YAML with an unquoted colon in a summary; that falls back to a line-based
    reading, and text that is no mapping at all is kept whole as the summary rather than lost.
    """
    text = text.lstrip("\ufeff")
    if not text.strip():
        return {}, []
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
            if isinstance(data, dict):
                return data, []
        except ValueError:
            pass
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    if isinstance(data, dict) and any(isinstance(k, str) and k.lower() in FIELDS for k in data):
        return data, []
    lenient = _lenient(text)
    if lenient:
        return lenient, ["the input was not valid YAML; read it line by line"]
    return {"summary": text.strip()}, [
        "the input had no summary/decisions/state/issues/resolved keys; saved it all as the summary"
    ]


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = [v for v in value if v is not None] if isinstance(value, (list, tuple)) else str(value).splitlines()
    out = []
    for item in items:
        text = " ".join(str(item).split()).lstrip("-*+ ").strip()
        if text:
            out.append(text)
    return out


def to_save_input(data: dict[str, Any], extra_patterns: list[str]) -> tuple[memory.SaveInput, list[str]]:
    """Normalise types, redact secrets, and warn about keys Keeper does not know."""
    warnings = [f"unknown key {key!r} ignored (use: {', '.join(FIELDS)})" for key in data if key not in FIELDS]
    summary = data.get("summary")
    if isinstance(summary, (list, tuple)):
        summary = "\n".join(str(s) for s in summary)
    text = "" if summary is None else str(summary).strip()

    def clean(values: list[str]) -> list[str]:
        return [memory.one_line(redact.redact(v, extra_patterns), 600) for v in values]

    save = memory.SaveInput(
        summary=redact.redact(text, extra_patterns),
        decisions=clean(_as_list(data.get("decisions"))),
        state=clean(_as_list(data.get("state"))),
        issues=clean(_as_list(data.get("issues"))),
        resolved=clean(_as_list(data.get("resolved"))),
    )
    return save, warnings


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
            "nothing to save: give at least one of summary, decisions, state, issues, resolved "
            "(YAML on stdin, or flags such as --summary TEXT --decision TEXT)."
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
    if report.resolved:
        lines.append(f"- {len(report.resolved)} issue(s) resolved: " + "; ".join(report.resolved))
    if report.unmatched:
        lines.append("? no open issue matched: " + "; ".join(report.unmatched))
    return lines or ["= nothing new for memory.md"]
