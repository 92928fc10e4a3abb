"""The session record: each session's file kept up to date without a model call.

Stop, PreCompact and SessionEnd bring the record up to date from the transcript and a few facts
(tool uses, the last reply, when it ended). A session killed before SessionEnd (its start marked,
its end not: ``keeper.store.markers``) is finished by the next SessionStart once its transcript has
gone quiet. The transcript reader loads only when a record
is updated: SessionStart usually needs just the markers.
"""

from __future__ import annotations

import os
import time

from keeper.errors import KeeperError
from keeper.store import counters, identity, log, markers, paths, sessions
from keeper.store.config import Config
from keeper.store.fsutil import HOOK_LOCK_TIMEOUT, atomic_write, project_lock, read_text
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from keeper.capture import receipts
    from keeper.store.resolve import Resolved

    Facts = dict[str, str | None]  # header label -> value; None removes the line


def adopt(
    project: paths.Project, session: str, transcript_path: str, tally: counters.Locked, current: str = ""
) -> None:
    """Take in a session whose start Keeper did not see (it was still setting itself up): its start
    is marked from its transcript, so a save finds the files the session changed and a session
    killed later is finished from it, and an empty ``tally`` (held locked by the caller) gets the
    tool uses the transcript shows before the ``current`` one, so the first save request and the
    final one count the session's whole work. Nothing happens once the start is marked."""
    if os.path.exists(markers.marker(project, session, "start")):
        return  # seen at its start, or taken in by a hook beside this one
    from keeper.capture import transcript

    if not transcript.readable(transcript_path):
        return
    uses, first = transcript.earlier_uses(transcript_path, current)
    if uses and not tally.read():
        tally.append(counters.USE * uses)
    markers.mark_start(project, session, transcript_path, transcript.local_time(first) if first else None)
    earlier = count(uses, "tool use")
    log.write("-", "INFO", f"took in session {session}, which began before Keeper was ready ({earlier} before)")


# -- the record ------------------------------------------------------------------------------------


def uses_fact(uses: int, saves: int) -> str:
    """The header's ``Tool uses`` fact, whichever count it comes from (``16 (1 save)``): its first
    word is the number the hub and the briefing read."""
    return f"{uses} ({count(saves, 'save')})"


def facts(tally: bytes, last_reply: str, patterns: list[str], state: sessions.State | None = None) -> Facts:
    """The header facts a hook knows: tool uses and saves so far (the counter's, for a session with no
    transcript: ``update`` counts them from the transcript where there is one), and the last reply
    (redacted).

    With the session's ``state``, a reply already recorded is taken from there: a Stop with
    nothing new compiles no redaction pattern.
    """
    found: Facts = {"Tool uses": uses_fact(counters.total_uses(tally), counters.saves(tally))}
    if last_reply.strip():
        known = state.facts if state and state.reply == reply_key(last_reply) else None
        if known and known.get("Last reply"):
            found["Last reply"] = known["Last reply"]
        else:
            from keeper import redact
            from keeper.memory import document

            found["Last reply"] = document.one_line(redact.redact(last_reply, patterns), 300)
    return found


def reply_key(reply: str) -> str:
    """A short digest of a reply as written, to know it again without redacting it again."""
    return identity.sha256_hex(reply.encode("utf-8", "surrogatepass"))[:16]


def update(
    project: paths.Project,
    cfg: Config,
    session: str,
    new_facts: Facts,
    transcript_path: str = "",
    now: datetime | None = None,
    reply: str = "",
) -> bool:
    """Bring the session file up to date from its transcript and ``new_facts`` (``None`` removes one).

    Deterministic and idempotent: only what is new in the transcript is read, and when neither the
    digest nor the facts changed nothing is locked or written, so the same Stop twice leaves the
    same bytes; nor is the redactor loaded (``reply``: the last reply as written, remembered by
    its digest). Hooks call this, so the lock is held briefly and given up rather than waited for.
    """
    from keeper.capture import transcript

    state = sessions.read_state(project, session)
    candidates = (transcript_path, state.transcript, markers.start_marker(project, session)[1])
    path = next((p for p in candidates if p and transcript.readable(p)), "")
    patterns = cfg.redact_patterns

    def clean(text: str) -> str:
        from keeper import redact  # only for new transcript lines: it compiles its patterns

        return redact.redact(text, patterns)

    offset = state.offset or 0
    watch = _watch(project, session, path, offset)
    activity = transcript.Activity(state.activity, clean=clean, said=watch.hear if watch else None)
    old_facts = {k: v for k, v in state.facts.items() if v is not None} if state.facts is not None else None
    if path:
        read_from = offset
        offset = transcript.update(activity, path, offset)
        # what the Activity below lists, whatever Keeper's counter saw (it misses the uses made while
        # Keeper set itself up, and counts a subagent's): one count in the file, from one source
        new_facts = {"Transcript": path, **new_facts, "Tool uses": uses_fact(activity.tool_uses, activity.saves)}
        if offset != read_from or old_facts is None:  # else the stored facts hold these
            if activity.branch:
                new_facts["Branch"] = activity.branch
            last = transcript.local_time(activity.last_ts) if activity.last_ts else None
            if last:
                new_facts["Last activity"] = last.strftime("%Y-%m-%d %H:%M")
    merged = {**(old_facts or {}), **new_facts}
    digest = activity.as_dict()
    replied = reply_key(reply) if reply else state.reply
    now_known = (merged, digest, offset, path, replied)
    if (state.facts, state.activity, state.offset, state.transcript, state.reply) == now_known and (
        sessions.existing_file(project, session)
    ):
        if watch and watch.changed:
            with project_lock(project.lock, timeout=HOOK_LOCK_TIMEOUT):
                _receipts(project, session, watch, patterns)
        return False
    from datetime import datetime

    with project_lock(project.lock, timeout=HOOK_LOCK_TIMEOUT):
        first = transcript.local_time(activity.first_ts) if path and activity.first_ts else None
        start = markers.started_at(project, session) or first or now or datetime.now()
        record = sessions.ensure_file(project, session, start)
        text = read_text(record, exact=True) or ""
        updated = sessions.set_activity(sessions.set_facts(text, merged), transcript.render(activity, project.root))
        if updated != text:
            atomic_write(record, updated)
        fresh = sessions.read_state(project, session)  # keeps what a concurrent save recorded
        fresh.facts, fresh.activity, fresh.offset, fresh.transcript = merged, digest, offset, path
        fresh.reply = replied if reply else fresh.reply
        sessions.write_state(project, session, fresh)
        if watch and watch.changed:
            _receipts(project, session, watch, patterns)
    return True


def _watch(project: paths.Project, session: str, path: str, offset: int) -> receipts.Watch | None:
    """The use receipts to look for in the transcript's new lines; None when there are none, or none to
    look for (``receipts``: loaded only then)."""
    try:
        new = bool(path) and os.path.getsize(path) > offset
    except OSError:
        new = False
    shown = markers.shown_file(project, session)
    if not new or not (os.path.exists(shown) or os.path.exists(project.session_file(session, "recalled"))):
        return None
    from keeper.capture import receipts

    return receipts.watch(project, session)


def _receipts(project: paths.Project, session: str, watch: receipts.Watch, patterns: list[str]) -> None:
    """Record what the update found used (under the project's lock)."""
    from datetime import datetime

    from keeper.capture import evidence, receipts

    receipts.record(project, session, watch, evidence.stamp(datetime.now()), patterns)


def update_from_hook(event: str, at: Resolved, new_facts: Facts, transcript_path: str, reply: str = "") -> bool:
    """``update`` for a hook: a busy lock is logged and left to the next Stop, which catches up.
    True when the record was up to date already (``keeper.hooks.idle`` keeps what it rested on)."""
    try:
        return not update(at.project, at.cfg, at.session, new_facts, transcript_path, reply=reply)
    except KeeperError as exc:
        log.write(event, "WARN", f"session file not updated: {exc}")
        return False


def stamp(event: str, at: Resolved, label: str, detail: str, last_reply: str, transcript_path: str) -> bool:
    """Record a moment (``Compacted``, ``Ended``) with the facts and everything the transcript shows;
    True when the session file was written."""
    tally = counters.read(counters.tally_path(at.project, at.session))
    found = facts(tally, last_reply, at.cfg.redact_patterns)
    found[label] = time.strftime("%Y-%m-%d %H:%M") + (f" ({detail})" if detail else "")
    return not update_from_hook(event, at, found, transcript_path)


def complete_missed_endings(
    event: str, project: paths.Project, cfg: Config, gone: list[tuple[str, str, float]]
) -> None:
    """Finish the records of earlier sessions that were killed before SessionEnd ran (``gone``:
    ``markers.gone``'s); should one come back after all, its next Stop removes the end stamp again."""
    for session, path, last in gone:
        ended = time.strftime("%Y-%m-%d %H:%M", time.localtime(last))
        found: Facts = {"Ended": f"{ended} (last activity; the session ended without SessionEnd)"}
        try:
            update(project, cfg, session, found, path)
        except KeeperError as exc:
            log.write(event, "WARN", f"could not complete session {session}: {exc}")
            continue
        markers.mark_ended(project, session)
        log.write(event, "INFO", f"completed session {session} from its transcript (its end never ran)")
