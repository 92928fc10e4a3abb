"""Saving: read what Claude sent, redact it, and merge it into memory.md and the session file.

All of it happens under the project lock, each file replaced atomically, so two sessions saving
at once both land and a crash mid-save leaves every file whole.
"""

from __future__ import annotations

import json
import os
from datetime import datetime

from keeper import redact
from keeper.capture import evidence, record
from keeper.errors import KeeperError
from keeper.memory import document
from keeper.store import counters, loads, markers, paths, removals, resolve, sessions
from keeper.store import provenance as origins
from keeper.store.config import Config
from keeper.store.fsutil import atomic_write, project_lock, read_json, read_text, sweep_temp_files
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from keeper.capture.saveformat import ParsedSave

SCOPES = ("project", "global", "team")
REMOVED_KEPT = 20_000  # keys in the record of removed items (``read_removed``)

RESTATED = ("confirmed", "echoed")  # a save that restates an item: evidence that it matters (``store.loads``)


def read_input(text: str, extra_patterns: list[str]) -> tuple[document.SaveInput, list[str]]:
    """A save from Keeper's save format (or JSON) on stdin, redacted, and what could not be read.

    Every value is text, stored as written (see ``keeper.capture.saveformat``). Nothing is dropped: an
    unknown key and text outside any key are kept in the session file, and each is named in the
    problems so the model that saved can be told.
    """
    from keeper.capture import saveformat

    parsed = saveformat.parse(text)
    refused = _not_a_save(text, parsed)
    if refused:
        raise KeeperError(
            f"this save's input {refused}, so nothing was saved. Send Keeper's save format "
            "(summary: …, decisions: with '  - ' items) or one JSON object such as "
            '{"summary": "…", "decisions": ["…"]}.'
        )
    values = dict(parsed.values)
    problems = list(parsed.problems)
    unplaced: list[tuple[str, str]] = []
    scope = values.get("scope")
    if isinstance(scope, str) and scope.strip().lower() not in SCOPES:
        problems.append(
            f"scope {scope.strip()!r} is not 'project', 'global' or 'team'; the typed lists went to the project"
        )
        values.pop("scope")
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


def _not_a_save(text: str, parsed: ParsedSave) -> str:
    """Why an input that was meant as JSON cannot be a save (storing it as the summary would put
    broken JSON in front of the next session), or '' when it can."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("{") and not parsed.values and not parsed.unknown:
        return "starts with '{' but is not a valid JSON object"
    if head.startswith("["):
        try:
            json.loads(head)
        except (ValueError, RecursionError):
            return ""  # text such as "[WIP] fixed the login": a summary
        return "is a JSON list, not an object of keys"
    return ""


LINE_BREAKS = ("\r\n", "\r", "\x85", "\u2028", "\u2029")


def one_newline(text: str) -> str:
    """Every line break a value may hold (CRLF, a lone CR, NEL, U+2028, U+2029) as ``\n``.

    Viewers and markdown renderers break lines at each of them, so kept raw a value's next line could
    read as a heading there while Keeper's files (split at ``\n`` only) hold it as text; as ``\n``
    it is a line Keeper sees, and escapes when it would read as a heading.
    """
    if "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
        for mark in LINE_BREAKS:
            text = text.replace(mark, "\n")
    return text


def to_save_input(
    values: dict[str, str | list[str]], extra_patterns: list[str], unplaced: list[tuple[str, str]] | None = None
) -> document.SaveInput:
    """Redact a save's values; blank items are left out, everything else is kept as written."""

    def clean(text: str) -> str:
        return redact.redact(one_newline(text), extra_patterns)

    def listed(key: str) -> list[str]:
        value = values.get(key) or []
        return [clean(item) for item in ([value] if isinstance(value, str) else value) if item.strip()]

    summary = values.get("summary") or ""
    if isinstance(summary, list):
        summary = "\n".join(summary)
    scope = values.get("scope")
    return document.SaveInput(
        typed={name: listed(name) for name in document.TYPED},
        scope=scope.strip().lower() if isinstance(scope, str) and scope.strip().lower() in SCOPES else "project",
        summary=clean(summary) if summary.strip() else "",
        decisions=listed("decisions"),
        state=listed("state"),
        issues=listed("issues"),
        resolved=listed("resolved"),
        retired=listed("retired"),
        unplaced=[(label, clean(text)) for label, text in unplaced or []],
    )


def _freshen(project: paths.Project, cfg: Config, session: str) -> None:
    """Bring the session's record up to date from its transcript, so the save's provenance names
    every file the session changed so far (a session without a transcript has nothing to add). A
    session no hook told Keeper of yet (its first, while Keeper set itself up) is found by its id
    among Claude Code's transcripts and taken in (``record.adopt``)."""
    state = sessions.read_state(project, session)
    if not (state.transcript or markers.start_marker(project, session)[1]):
        from keeper.capture import transcript

        found = transcript.claude_transcript(session)  # a first session saving before any hook ran Keeper
        if found:
            with counters.Locked(counters.tally_path(project, session)) as tally:
                record.adopt(project, session, found, tally)
    if state.transcript or markers.start_marker(project, session)[1]:
        try:
            record.update(project, cfg, session, {})
        except KeeperError as exc:  # a busy lock: the files known at the last Stop will do
            from keeper.store import log

            log.write("save", "WARN", f"session record not brought up to date before the save: {exc}")


def save(
    project: paths.Project,
    cfg: Config,
    data: document.SaveInput,
    session: str,
    now: datetime | None = None,
    added: str = "added",
) -> tuple[document.MergeReport, str]:
    """Merge a save into memory.md and the session file; return the report and the session file.

    Each item it adds, confirms, retires or resolves gets a provenance event (``added``: what a
    new item's event is called)."""
    if data.is_empty():
        raise KeeperError(
            "nothing to save: give at least one of summary, decisions, state, issues, resolved, retired "
            "(key: lines on stdin, or flags such as --summary TEXT --decision TEXT)."
        )
    now = now or datetime.now()
    mine = document.SaveInput(summary=data.summary, state=data.state) if data.scope == "team" else data
    if data.scope == "team":
        from keeper.capture import team

        team.check(project)  # before anything is written: a save lands whole or not at all
    _freshen(project, cfg, session)
    with project_lock(project.lock):
        for folder in (project.dir, project.sessions, project.state, project.session_state):
            sweep_temp_files(folder)  # what writers killed mid-write left behind
        text = read_text(project.memory, exact=True)  # a hand edit in another encoding keeps its bytes
        merged, owned, report = document.merge(
            text,
            document.OwnedLines.parse(read_json(project.owned_lines)),
            mine,
            project_name=project.name,
            session_id=session,
            now=now,
            recent_sessions=cfg.recent_sessions,
        )
        if merged != text and (text is not None or _touches_project(mine)):
            atomic_write(project.memory, merged)
            atomic_write(project.owned_lines, owned.dump())
            _record_removals(project.removed, mine, report.removed_keys, now)
            report.written.append(project.memory)
        if data.scope == "team":
            shared, tidied = team.save(project, data, now)
            shared.state_lines, shared.recent, shared.tidied = report.state_lines, report.recent, tidied
            report = shared
        elif data.scope == "global" and (
            data.typed or (report.unmatched_retired and _exists(paths.global_memory_file()))
        ):
            _save_global(data, report, now)
        session_file = sessions.ensure_file(project, session, markers.started_at(project, session) or now)
        facts = evidence.session_facts(project, session)
        seen = evidence.shown(project, session)
        ours, theirs = evidence.events(report, text, facts, seen, now, added) if data.scope != "team" else ([], [])
        patterns = cfg.redact_patterns  # the record is redacted like the session file
        told = evidence.edits(text, origins.read(project.dir), facts, now) + ours
        told = evidence.claimed(told, project.checkout, facts)  # what each item says about the code
        origins.append(project.dir, told, patterns)
        loads.note(project, restated=[e["item"] for e in ours if e["event"] in RESTATED])
        echoed = [str(e["item"]) for e in ours if e.get("event") == "echoed"]
        if echoed:  # restating what its start showed: the session used it (once), no new evidence
            from keeper.capture import receipts

            receipts.restated(project, session, echoed, evidence.stamp(now), patterns)
        if theirs:
            with project_lock(os.path.join(paths.global_dir(), ".lock")):
                origins.append(paths.global_dir(), theirs, patterns)
        sessions.append_save(session_file, sessions.render_save(now, data, report))
        if not data.holds_memory():  # only text no key places: kept above, but no save the counter sees
            return report, session_file
        state = sessions.read_state(project, session)
        state.last_save = now.isoformat(timespec="seconds")
        sessions.write_state(project, session, state)
    resolve.remember_root(project, check=True)
    counters.append(counters.tally_path(project, session), counters.SAVE)
    return report, session_file


def read_removed(path: str) -> dict[str, str]:
    """A record of removed items (``state/removed.json``, ``removals.Removed``): ``items.key`` -> the day it went."""
    return removals.Removed.parse(read_json(path)).keys


def removed_file(folder: str) -> str:
    """The record of removed items of a memory folder (a project's, or the global one)."""
    return os.path.join(folder, paths.STATE_DIR, paths.REMOVED)


def _record_removals(path: str, data: document.SaveInput, gone: list[str], now: datetime) -> None:
    """Keep the keys of what a save retired or resolved (and forget what it added back), so an
    import of an older archive cannot bring them back. The newest ``REMOVED_KEPT`` are kept;
    machine-local, like the provenance record (a lost record only lets an import revive items)."""
    from keeper.memory.items import key

    if not gone and not os.path.exists(path):
        return
    added = [*data.decisions, *data.issues, *(item for items in data.typed.values() for item in items)]
    record = read_removed(path)
    before = dict(record)
    for item in added:
        record.pop(key(item), None)
    for item_key in gone:
        record.pop(item_key, None)
        record[item_key] = now.strftime("%Y-%m-%d")
    if record != before:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        kept = dict(list(record.items())[-REMOVED_KEPT:])
        atomic_write(path, removals.Removed(kept).dump())


def _touches_project(data: document.SaveInput) -> bool:
    """Whether a save has anything for the project's memory.md (a global-only save does not)."""
    project_typed = data.scope == "project" and bool(data.typed)
    return bool(data.summary or data.decisions or data.state or data.issues or data.resolved or project_typed)


def _exists(path: str) -> bool:
    return os.path.isfile(path)


def _save_global(data: document.SaveInput, report: document.MergeReport, now: datetime) -> None:
    """Merge the global part of a save (and retirements the project had no match for). Taken after
    the project lock, always in that order, so two saves can never wait on each other."""
    path = paths.global_memory_file()
    with project_lock(os.path.join(os.path.dirname(path), ".lock")):
        text = read_text(path, exact=True)
        done = len(report.removed_keys)
        merged = document.merge_global(
            text, data if data.scope == "global" else document.SaveInput(), report.unmatched_retired, now, report
        )
        if merged != text:
            atomic_write(path, merged)
            _record_removals(removed_file(os.path.dirname(path)), data, report.removed_keys[done:], now)
            report.written.append(path)


# The lines of a save's report, in the order shown: (the report's field, the noun it counts, the
# line, where ``{n}`` is the count with its noun and ``{items}`` the items, "; "-separated).
_ADDED = (
    ("added_decisions", "decision", "+ {n}: {items}"),
    ("known_decisions", "decision", "= {n} already known: {items}"),
    ("state_lines", "line", "~ current state replaced ({n})"),
    ("recent", "", "~ recent context updated for this session"),
    ("added_issues", "issue", "+ {n}: {items}"),
    ("known_issues", "issue", "= {n} already known"),
)
_REMOVED = (
    ("reconfirmed", "decision", "~ {n} re-confirmed today: {items}"),
    ("retired_here", "decision", "- {n} retired: {items}"),
    ("retired_global", "global item", "- {n} retired: {items}"),
    ("unmatched_retired", "", "? nothing retired for (no single match): {items}"),
    ("resolved", "issue", "- {n} resolved: {items}"),
    ("unmatched", "", "? nothing resolved for (no single match): {items}"),
)
_TIDIED = (("tidied", "item", "~ {n} a git merge left twice or retired tidied away"),)


def report_lines(report: document.MergeReport) -> list[str]:
    """What a save changed, one line per kind of change, for the person or model that saved."""
    lines = _report_rows(report, _ADDED)
    for typed, form in ((report.added_typed, "+ {n}: {items}"), (report.known_typed, "= {n} already known")):
        lines += [_report_line(items, f"{kind} item", form) for kind, items in typed.items() if items]  # a line a type
    lines += _report_rows(report, _REMOVED) + _match_hints(report) + _report_rows(report, _TIDIED)
    return lines or ["= nothing new for memory.md"]


def _report_rows(report: document.MergeReport, rows: tuple[tuple[str, str, str], ...]) -> list[str]:
    """The line of each row whose field in ``report`` is not empty (nor 0, nor False)."""
    return [_report_line(getattr(report, field), noun, form) for field, noun, form in rows if getattr(report, field)]


def _report_line(value: list[str] | int, noun: str, form: str) -> str:
    """``form`` filled in: ``{n}`` with the number ``value`` is or holds and ``noun``, ``{items}`` with its items."""
    if isinstance(value, list):
        return form.format(n=count(len(value), noun), items="; ".join(value))
    return form.format(n=count(value, noun))


def _match_hints(report: document.MergeReport) -> list[str]:
    """For a name that matched no single item, the items it could mean and how to name one; then
    each added item that resembles one already kept."""
    lines = [
        f"  {name!r} could be: " + "; ".join(repr(c) for c in candidates) for name, candidates in report.candidates
    ]
    if report.unmatched_retired or report.unmatched:
        lines.append("  name one exactly (its text as memory.md shows it, without the date) to remove it")
    lines += [
        f"  {item!r} is similar to existing: {like!r} (both kept; retire one if they say the same)"
        for item, like in report.similar
    ]
    return lines
