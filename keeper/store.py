"""Saving: parse what Claude sent, redact it, and merge it into memory.md and the session file.

All of it happens under the project lock, each file replaced atomically, so two sessions saving
at once both land and a crash mid-save leaves every file whole.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime

from keeper import memory, paths, redact, sessions, tally
from keeper.config import Config
from keeper.errors import KeeperError
from keeper.fsutil import HOOK_LOCK_TIMEOUT, atomic_write, project_lock, read_json, read_text, sweep_temp_files

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
        session_file = sessions.ensure_file(project, session, now)
        sessions.append_save(session_file, sessions.render_save(now, data, report))
        state = sessions.read_state(project, session)
        state["last_save"] = now.isoformat(timespec="seconds")
        sessions.write_state(project, session, state)
    tally.append(tally.path_for(project.state, session), tally.SAVE)
    return report, session_file


def readable_transcript(path: object) -> bool:
    """Only regular ``.jsonl`` files are read: a hostile path such as /dev/zero must not hang a hook."""
    import stat

    if not isinstance(path, str) or not path.endswith(".jsonl") or "\x00" in path:
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _local_time(stamp: str) -> datetime | None:
    """A transcript timestamp (UTC, ``…Z``) as naive local time."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().replace(tzinfo=None)
    except ValueError:
        return None


def update_record(
    project: paths.Project,
    cfg: Config,
    session: str,
    facts: dict[str, str | None],
    transcript_path: str = "",
    now: datetime | None = None,
) -> bool:
    """Bring the session file up to date from its transcript and ``facts`` (``None`` removes one).

    Deterministic and idempotent: only what is new in the transcript is read, and when neither the
    digest nor the facts changed nothing is locked or written, so the same Stop twice leaves the
    same bytes. Hooks call this, so the lock is held briefly and given up rather than waited for.
    """
    from keeper import transcript

    state = sessions.read_state(project, session)
    candidates = (transcript_path, state.get("transcript"), sessions.start_marker(project, session)[1])
    path = next((p for p in candidates if isinstance(p, str) and readable_transcript(p)), "")
    saved = state.get("activity")
    patterns = cfg["redact_patterns"]
    activity = transcript.Activity(
        saved if isinstance(saved, dict) else None, clean=lambda text: redact.redact(text, patterns)
    )
    stored_offset = state.get("offset")
    offset = stored_offset if isinstance(stored_offset, int) else 0
    start_fallback = now or datetime.now()
    if path:
        offset = transcript.update(activity, path, offset)
        facts = {"Transcript": path, **facts}
        if activity.branch:
            facts["Branch"] = activity.branch
        last = _local_time(activity.last_ts) if activity.last_ts else None
        if last:
            facts["Last activity"] = last.strftime("%Y-%m-%d %H:%M")
        first = _local_time(activity.first_ts) if activity.first_ts else None
        start_fallback = first or start_fallback
    old_facts = state.get("facts")
    merged = {**(old_facts if isinstance(old_facts, dict) else {}), **facts}
    changes = {"facts": merged, "activity": activity.as_dict(), "offset": offset, "transcript": path}
    if all(state.get(k) == v for k, v in changes.items()) and sessions.existing_file(project, session):
        return False
    with project_lock(project.lock, timeout=HOOK_LOCK_TIMEOUT):
        record = sessions.ensure_file(project, session, start_fallback)
        text = read_text(record) or ""
        updated = sessions.set_activity(sessions.set_facts(text, merged), transcript.render(activity, project.root))
        if updated != text:
            atomic_write(record, updated)
        fresh = sessions.read_state(project, session)  # keeps what a concurrent save recorded
        fresh.update(changes)
        sessions.write_state(project, session, fresh)
    return True
