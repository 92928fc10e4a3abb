"""The session record: each session's file kept up to date without a model call.

Stop, PreCompact and SessionEnd bring the record up to date from the transcript and a few facts
(tool uses, the last reply, when it ended). Start and end markers in ``state/`` say which
sessions began and which ended, so a session killed before SessionEnd is finished by the next
SessionStart once its transcript has gone quiet. The transcript reader loads only when a record
is updated: SessionStart usually needs just the markers.
"""

from __future__ import annotations

import os
import time

from keeper import counters, log, paths, sessions
from keeper.config import Config
from keeper.errors import KeeperError
from keeper.fsutil import HOOK_LOCK_TIMEOUT, atomic_write, ensure_dir, guard, open_append, project_lock, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from keeper.resolve import Resolved

    Facts = dict[str, str | None]  # header label -> value; None removes the line

IDLE_BEFORE_RECOVERY = 600  # seconds without transcript activity before a session counts as gone
MISSED_ENDINGS_PER_START = 5

# -- start and end markers -----------------------------------------------------------------------


def _marker(project: paths.Project, session: str, kind: str) -> str:
    return os.path.join(project.state, f"{session}.{kind}")


def mark_start(project: paths.Project, session: str, transcript_path: str = "") -> None:
    """Remember when a session started and where its transcript is (first SessionStart wins).

    Cheap enough for the hook: one exclusive create, no lock.
    """
    path = _marker(project, session, "start")
    guard(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except FileNotFoundError:
        ensure_dir(project.state)
        return mark_start(project, session, transcript_path)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(time.strftime("%Y-%m-%dT%H:%M:%S") + "\n" + transcript_path.replace("\n", " "))
    return


def start_marker(project: paths.Project, session: str) -> tuple[str, str]:
    """``(started ISO time, transcript path)`` from the start marker; empty strings when unknown."""
    text = read_text(_marker(project, session, "start")) or ""
    first, _, second = text.partition("\n")
    return first.strip(), second.strip()


def started_at(project: paths.Project, session: str) -> datetime | None:
    from datetime import datetime

    stamp, _ = start_marker(project, session)
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


def mark_ended(project: paths.Project, session: str, ended: bool = True) -> None:
    """Set (or clear, if a session thought over turns out alive) the session's end marker."""
    path = _marker(project, session, "end")
    try:
        if ended:
            os.close(open_append(path))
        else:
            os.unlink(path)
    except OSError:
        pass


def unended(project: paths.Project) -> list[str]:
    """Sessions that started but whose end was never recorded (one directory listing)."""
    try:
        names = os.listdir(project.state)
    except OSError:
        return []
    started = {n[: -len(".start")] for n in names if n.endswith(".start")}
    ended = {n[: -len(".end")] for n in names if n.endswith(".end")}
    return sorted(started - ended)


# -- the record ------------------------------------------------------------------------------------


def facts(tally: bytes, last_reply: str, patterns: list[str]) -> Facts:
    """The header facts a hook knows: tool uses and saves so far, and the last reply (redacted)."""
    from keeper import memory, redact

    found: Facts = {"Tool uses": f"{counters.total_uses(tally)} ({counters.saves(tally)} saves)"}
    if last_reply.strip():
        found["Last reply"] = memory.one_line(redact.redact(last_reply, patterns), 300)
    return found


def update(
    project: paths.Project,
    cfg: Config,
    session: str,
    new_facts: Facts,
    transcript_path: str = "",
    now: datetime | None = None,
) -> bool:
    """Bring the session file up to date from its transcript and ``new_facts`` (``None`` removes one).

    Deterministic and idempotent: only what is new in the transcript is read, and when neither the
    digest nor the facts changed nothing is locked or written, so the same Stop twice leaves the
    same bytes. Hooks call this, so the lock is held briefly and given up rather than waited for.
    """
    from datetime import datetime

    from keeper import redact, transcript

    state = sessions.read_state(project, session)
    candidates = (transcript_path, state.get("transcript"), start_marker(project, session)[1])
    path = next((p for p in candidates if isinstance(p, str) and transcript.readable(p)), "")
    saved = state.get("activity")
    patterns = cfg["redact_patterns"]
    activity = transcript.Activity(
        saved if isinstance(saved, dict) else None, clean=lambda text: redact.redact(text, patterns)
    )
    stored_offset = state.get("offset")
    valid = isinstance(stored_offset, int) and not isinstance(stored_offset, bool) and stored_offset >= 0
    offset = stored_offset if valid and isinstance(stored_offset, int) else 0
    start = now or datetime.now()
    if path:
        offset = transcript.update(activity, path, offset)
        new_facts = {"Transcript": path, **new_facts}
        if activity.branch:
            new_facts["Branch"] = activity.branch
        last = transcript.local_time(activity.last_ts) if activity.last_ts else None
        if last:
            new_facts["Last activity"] = last.strftime("%Y-%m-%d %H:%M")
        first = transcript.local_time(activity.first_ts) if activity.first_ts else None
        start = first or start
    old_facts = state.get("facts")
    kept = {k: v for k, v in old_facts.items() if isinstance(v, str)} if isinstance(old_facts, dict) else {}
    merged = {**kept, **new_facts}
    changes = {"facts": merged, "activity": activity.as_dict(), "offset": offset, "transcript": path}
    if all(state.get(k) == v for k, v in changes.items()) and sessions.existing_file(project, session):
        return False
    with project_lock(project.lock, timeout=HOOK_LOCK_TIMEOUT):
        record = sessions.ensure_file(project, session, started_at(project, session) or start)
        text = read_text(record, exact=True) or ""
        updated = sessions.set_activity(sessions.set_facts(text, merged), transcript.render(activity, project.root))
        if updated != text:
            atomic_write(record, updated)
        fresh = sessions.read_state(project, session)  # keeps what a concurrent save recorded
        fresh.update(changes)
        sessions.write_state(project, session, fresh)
    return True


def update_from_hook(event: str, at: Resolved, new_facts: Facts, transcript_path: str) -> None:
    """``update`` for a hook: a busy lock is logged and left to the next Stop, which catches up."""
    try:
        update(at.project, at.cfg, at.session, new_facts, transcript_path)
    except KeeperError as exc:
        log.write(event, "WARN", f"session file not updated: {exc}")


def stamp(event: str, at: Resolved, label: str, detail: str, last_reply: str, transcript_path: str) -> None:
    """Record a moment (``Compacted``, ``Ended``) with the facts and everything the transcript shows."""
    tally = counters.read(counters.tally_path(at.project.state, at.session))
    found = facts(tally, last_reply, at.cfg["redact_patterns"])
    found[label] = time.strftime("%Y-%m-%d %H:%M") + (f" ({detail})" if detail else "")
    update_from_hook(event, at, found, transcript_path)


def complete_missed_endings(event: str, project: paths.Project, cfg: Config, current: str) -> None:
    """Finish the records of earlier sessions that were killed before SessionEnd ran.

    A session counts as gone once its transcript has been idle for ten minutes; should it come
    back after all, its next Stop removes the end stamp again.
    """
    for session in [s for s in unended(project) if s != current][:MISSED_ENDINGS_PER_START]:
        state = sessions.read_state(project, session)
        path = str(state.get("transcript") or "") or start_marker(project, session)[1]
        marker = _marker(project, session, "start")
        try:
            last = os.path.getmtime(path) if path else os.path.getmtime(marker)
        except (OSError, ValueError):
            last = os.path.getmtime(marker) if os.path.exists(marker) else 0.0
        if time.time() - last < IDLE_BEFORE_RECOVERY:
            continue
        ended = time.strftime("%Y-%m-%d %H:%M", time.localtime(last))
        found: Facts = {"Ended": f"{ended} (last activity; the session ended without SessionEnd)"}
        try:
            update(project, cfg, session, found, path)
        except KeeperError as exc:
            log.write(event, "WARN", f"could not complete session {session}: {exc}")
            continue
        mark_ended(project, session)
        log.write(event, "INFO", f"completed session {session} from its transcript (its end never ran)")
