"""What a save records about where its items came from: the provenance events of one save.

The session, its machine, the branch and commit (read from the repository's files: running git in
a repository means running its configuration), the session's file and transcript, and the files the
session had changed by the time it saved. A known item saved again is ``confirmed``, or ``echoed``
when Keeper had shown it in that session's start-up context: restating what Keeper itself said is
not new evidence (``keeper.store.provenance``).
"""

from __future__ import annotations

import os

from keeper.store import markers, provenance, sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from keeper.memory.document import MergeReport
    from keeper.store import paths


CANDIDATES = 500  # items gone from memory.md a new item is matched against (the newest): a save's work is bounded


def _first_line(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return os.fsdecode(fh.read(4096)).split("\n", 1)[0].strip()
    except (OSError, ValueError):
        return ""


def _git_dirs(checkout: str) -> tuple[str, str]:
    """The work tree's git directory and the repository's common one ('' when there is none)."""
    dot_git = os.path.join(checkout, ".git")
    if os.path.isdir(dot_git):
        return dot_git, dot_git
    line = _first_line(dot_git)
    if not line.startswith("gitdir:"):
        return "", ""
    gitdir = os.path.join(checkout, line[len("gitdir:") :].strip())
    common = _first_line(os.path.join(gitdir, "commondir"))
    return gitdir, os.path.join(gitdir, common) if common else gitdir


def head(checkout: str) -> tuple[str, str]:
    """``(branch, commit)`` of a work tree, from its files; '' for what cannot be read."""
    gitdir, common = _git_dirs(checkout)
    if not gitdir:
        return "", ""
    line = _first_line(os.path.join(gitdir, "HEAD"))
    if not line.startswith("ref:"):
        return "", line if len(line) == 40 else ""
    ref = line[4:].strip()
    branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
    if ".." in ref.split("/"):
        return branch, ""
    commit = _first_line(os.path.join(common, *ref.split("/")))
    if not commit:
        try:
            with open(os.path.join(common, "packed-refs"), encoding="utf-8", errors="replace") as fh:
                commit = next((ln.split(" ", 1)[0] for ln in fh if ln.rstrip("\n").endswith(" " + ref)), "")
        except OSError:
            commit = ""
    return branch, commit if len(commit) == 40 else ""


def session_facts(project: paths.Project, session: str) -> dict[str, Any]:
    """What every event of this session's save names: machine, branch, commit, record, transcript, files."""
    import socket

    from keeper.capture.transcript import Activity

    state = sessions.read_state(project, session)
    activity = Activity(state.activity)  # read as the record reads it: damaged fields empty
    branch, commit = head(project.checkout)
    found: dict[str, Any] = {
        "session": session,
        "project": project.id,
        "machine": socket.gethostname(),
        "branch": branch or activity.branch,
        "commit": commit,
        "files": provenance.relative_files(activity.files, project.checkout),
        "wrote": _wrote(activity.wrote, project.checkout),
        "record": state.file or "",
        "transcript": state.transcript or "",
    }
    return {k: v for k, v in found.items() if v}


def _wrote(wrote: dict[str, list[str]], root: str) -> dict[str, list[str]]:
    """The session's written-lines fingerprints by file relative to the work tree (others left out)."""
    found: dict[str, list[str]] = {}
    for path, hashes in wrote.items():
        rel = provenance.relative_files([path], root)
        if rel and hashes:
            found[rel[0]] = hashes
    return found


def stamp(now: datetime) -> str:
    """An event's time with its UTC offset: a save in Tokyo and a reading in Los Angeles agree."""
    return now.astimezone().isoformat(timespec="microseconds")


def claimed(events: list[dict[str, Any]], root: str, facts: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a save, each item's evidence with what its text claims about the code and
    where that held now (``keeper.store.claims``): an empty list says it claims nothing that held."""
    from keeper.store import stale

    files = [f for f in facts.get("files", []) if isinstance(f, str)]
    cache: dict[str, str | None] = {}
    for event in events:
        if event.get("event") in provenance.EVIDENCE and isinstance(event.get("text"), str):
            event["claims"] = stale.observed(event["text"], root, files, cache)
    return events


def shown(project: paths.Project, session: str) -> set[str]:
    try:
        with open(markers.shown_file(project, session), encoding="utf-8") as fh:
            return set(fh.read().split())
    except OSError:
        return set()


def events(
    report: MergeReport, before: str | None, facts: dict[str, Any], seen: set[str], now: datetime, added: str = "added"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events of one save, for the project's record and for the global one.

    ``before``: the project's memory.md before the save (where a removed item stood); ``seen``: the
    ids of the items Keeper showed this session; ``added``: what a new item's event is called
    (``restored`` when ``keeper restore --item`` brings one back).
    """
    from keeper.memory import document
    from keeper.memory.items import key, strip_date

    at = stamp(now)
    mine: list[dict[str, Any]] = []
    shared: list[dict[str, Any]] = []
    who = {"session": facts.get("session", "")}

    def note(into: list[dict[str, Any]], kind: str, text: str, section: str, **extra: Any) -> None:
        item = key(text)
        if kind == "confirmed" and provenance.shown_id(item) in seen:
            kind, extra = "echoed", {"why": "restated what Keeper showed at this session's start; not new evidence"}
        into.append({"at": at, "event": kind, "item": item, "text": text, "section": section, **who, **extra})

    lists = {
        "decisions": (report.added_decisions, report.known_decisions),
        "issues": (report.added_issues, report.known_issues),
    }
    for name, (new, known) in lists.items():
        for text in new:
            note(mine, added, text, name)
        for text in known:
            note(mine, "confirmed", text, name)
    for label, texts in report.added_typed.items():
        for text in texts:
            note(shared if label.endswith("(global)") else mine, added, text, label.split(" ", 1)[0])
    for label, texts in report.known_typed.items():
        for text in texts:
            note(shared if label.endswith("(global)") else mine, "confirmed", text, label.split(" ", 1)[0])
    here = {key(text): name for name in ("decisions", *document.TYPED) for text, _ in document.items(before, name)}
    for text in report.retired:
        item = key(text)
        into = mine if item in here else shared
        into.append(
            {
                "at": at,
                "event": "retired",
                "item": item,
                "text": strip_date(text),
                "section": here.get(item, ""),
                **who,
            }
        )
    mine += [
        {"at": at, "event": "resolved", "item": key(t), "text": strip_date(t), "section": "issues", **who}
        for t in report.resolved
    ]
    told = {"at": at, "event": provenance.SESSION, "item": "", **facts}  # the session's facts, once a save
    return [told, *mine] if mine else [], [told, *shared] if shared else []


def edits(
    text: str | None, record: list[provenance.Event], facts: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    """``edited`` events for the items of memory.md a person changed by hand: an item the record does
    not know that is a clear near match (``items.find``) of one the record knows and memory.md no
    longer holds, neither retired nor resolved. The new item carries the old one's history."""
    from keeper.memory.items import find

    if not text or not record:
        return []
    history = provenance.by_item(record)
    present = {item_key: (section, item) for section, item_key, item, _ in provenance.listed(text)}
    missing = [k for k, events in history.items() if k not in present and not provenance.is_removed(events)]
    missing = sorted(missing, key=lambda k: history[k][-1].at)[-CANDIDATES:]  # the newest: bounded work
    if not missing:
        return []
    texts = [history[k][-1].text or k for k in missing]
    brief = {"session": facts.get("session", "")}
    at = stamp(now)
    found: list[dict[str, Any]] = []
    for item_key, (section, item) in present.items():
        if item_key in history:
            continue
        match = find(item, texts, missing)
        if len(match.found) == 1:
            before = missing[match.found[0]]
            why = "its text was changed by hand"
            found.append(
                {
                    "at": at,
                    "event": "edited",
                    "item": item_key,
                    "from": before,
                    "text": item,
                    "section": section,
                    "why": why,
                    **brief,
                }
            )
    return found
