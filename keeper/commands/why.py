"""``keeper why WORDS|ID``: where one memory item came from, what happened to it, whether it may be stale.

The item is named by its id (``keeper why 1a2b3c4d``, as the hub and ``--json`` show it) or by words:
its text, a near match of it (``items.find``), or words it alone holds. Items retired or resolved
are found too, from the provenance record, so a removed decision can be shown with why and when,
and ``keeper restore --item`` brings one back.
"""

from __future__ import annotations

import os

from keeper.commands import common
from keeper.errors import KeeperError
from keeper.memory import document
from keeper.store import paths, provenance
from keeper.store.fsutil import read_text
from keeper.text import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

WORDS = {
    "added": "added",
    "confirmed": "re-confirmed",
    "echoed": "echoed",
    "edited": "edited",
    "retired": "retired",
    "resolved": "resolved",
    "restored": "restored",
}


class Item:
    """One item as ``keeper why`` knows it: where it lives, its text, and its events."""

    __slots__ = ("day", "folder", "history", "key", "scope", "section", "sessions", "status", "text", "uses")

    def __init__(self, scope: str, folder: str, key: str, text: str, section: str, status: str) -> None:
        self.scope, self.folder, self.key, self.text, self.section, self.status = (
            scope,
            folder,
            key,
            text,
            section,
            status,
        )
        self.history: list[provenance.Event] = []
        self.uses: list[provenance.Event] = []  # its use receipts (``keeper.capture.receipts``), the newest
        self.sessions: dict[str, provenance.Event] = {}  # the facts of the sessions in its history
        self.day: str | None = None


def items(project: paths.Project) -> list[Item]:
    """Every item of the project's and the global memory, then the removed ones the records know."""
    found: list[Item] = []
    for scope, folder, memory in (
        ("project", project.dir, project.memory),
        ("global", paths.global_dir(), paths.global_memory_file()),
    ):
        events = provenance.read(folder)
        history, sessions = provenance.by_item(events), provenance.session_facts(events)
        uses = provenance.uses(events)
        present: set[str] = set()
        for section, key, text, day in provenance.listed(read_text(memory) or ""):
            if key in present:
                continue
            present.add(key)
            item = Item(scope, folder, key, text, section, "current")
            item.history, item.day, item.sessions = history.get(key, []), day, sessions
            item.uses = uses.get(key, [])
            found.append(item)
        for key, events in history.items():
            if key not in present and provenance.is_removed(events):
                last = [e for e in events if e.kind in provenance.REMOVALS][-1]
                section = next((e.section for e in reversed(events) if e.section), "")
                item = Item(scope, folder, key, last.text or key, section, last.kind)
                item.history, item.sessions = events, sessions
                found.append(item)
    return found


def find(project: paths.Project, name: str, removed_only: bool = False, rules: Sequence[str] = ()) -> Item:
    """The one item ``name`` names (an id, its text, or words only it holds); a KeeperError that
    lists candidates when it names none or several, redacted with ``rules`` (the user's patterns)."""
    from keeper.memory.items import find as near
    from keeper.memory.items import key

    every = [i for i in items(project) if not removed_only or i.status != "current"]
    wanted = name.strip().lower()
    by_id = [i for i in every if provenance.item_id(i.key) == wanted]
    if by_id:
        return by_id[0]
    if not every:
        raise KeeperError("no memory items here yet" + (" that were retired or resolved" if removed_only else "") + ".")
    match = near(name, [i.text for i in every], [i.key for i in every])
    if match.found:
        return every[match.found[0]]
    words = key(name).split()
    holding = [i for i in every if all(word in i.key for word in words)]
    if len(holding) == 1:
        return holding[0]
    shown = holding or [i for i in every if any(word in i.key for word in words)]
    what = "retired or resolved item" if removed_only else "item"
    if not shown:
        raise KeeperError(f"no {what} matches {name!r}; `keeper recall {name}` searches everything.")
    from keeper.redact import redact

    cut = [document.one_line(redact(i.text, rules), 60) for i in shown[:5]]  # redacted first: a cut secret passes
    listing = "; ".join(f"{provenance.item_id(i.key)} {text!r}" for i, text in zip(shown, cut))
    raise KeeperError(f"{len(shown)} {what}s match {name!r}: {listing}. Name one by its id (keeper why ID).")


def _session_file(project: paths.Project, event: provenance.Event | None, scope: str) -> str | None:
    """The session file an event names, here: its own name, or ``name@machine.md`` as sync brings
    another machine's; the one whose header names the event's session when several could be it."""
    from keeper.store import sessions

    if event is None:
        return None
    name = event.record or ""
    if scope == "global" and event.project not in (None, project.id):
        return None  # a global item saved in another project
    if not name.endswith(".md") or os.path.basename(name) != name:
        return None
    try:
        found = sorted(n for n in os.listdir(project.sessions) if n == name or n.startswith(name[:-3] + "@"))
    except OSError:
        return None
    for candidate in found:
        path = os.path.join(project.sessions, candidate)
        if sessions.read_facts(read_text(path) or "").get("Session id") == event.session:
            return path
    return os.path.join(project.sessions, found[0]) if found else None


def explain(project: paths.Project, name: str, rules: Sequence[str] = ()) -> dict[str, Any]:
    """What ``keeper why`` shows, as data (``--json``); ``rules`` redact the error naming several items."""
    item = find(project, name, rules=rules)
    start = provenance.described(provenance.origin(item.history), item.sessions)
    stale, claims = None, []
    if item.status == "current" and item.scope == "project":
        from keeper.store.stale import Reader, explained, reason

        why = reason(item.history, item.sessions, Reader(project.checkout))
        stale = why[0] if why else None
        claims = explained(project, item.history, item.sessions)
    transcript = start.transcript if start is not None else None
    return {
        "id": provenance.item_id(item.key),
        "text": item.text,
        "section": document.SECTIONS[item.section][0] if item.section in document.SECTIONS else item.section,
        "scope": item.scope,
        "status": item.status,
        "origin": start,
        "history": item.history,
        "uses": item.uses,
        "stale": stale,
        "claims": claims,
        "checked": any(c["verdict"] != "unchecked" for c in claims),
        "session_file": _session_file(project, start, item.scope),
        "transcript": transcript if transcript and os.path.isfile(transcript) else None,
    }


def as_json(data: dict[str, Any]) -> dict[str, Any]:
    """``explain``'s data as ``--json`` shows it: each event as its line holds it."""
    start = data["origin"]
    return {
        **data,
        "origin": start.as_dict() if start is not None else None,
        "history": [e.as_dict() for e in data["history"]],
        "uses": [e.as_dict() for e in data["uses"]],
    }


def _event_line(event: provenance.Event) -> str:
    when = shown(provenance.shown_at(event))
    machine = f" on {shown(event.machine)}" if event.machine else ""
    who = f"session {shown(_session(event))}{machine}"
    extra = f": {shown(event.why, 300)}" if event.why else ""
    kind = event.kind
    return f"  {when} {WORDS.get(kind, shown(kind))} by {who}{extra}"


def _session(event: provenance.Event) -> str:
    return event.session if event.session is not None else "?"


def _origin_lines(start: provenance.Event) -> list[str]:
    """Where an item came from, for a person: every text from the record through ``shown`` (a
    record arrives from other machines and archives: no escape sequence or line break of theirs
    reaches the terminal)."""
    where = ", ".join(
        part
        for part in (
            f"machine {shown(start.machine)}" if start.machine else "",
            f"branch {shown(start.branch)}" if start.branch else "",
            f"commit {shown(start.commit[:12])}" if start.commit else "",
        )
        if part
    )
    kind, when = start.kind, shown(provenance.shown_at(start))
    out = [
        f"Origin: {WORDS.get(kind, shown(kind))} {when} by session {shown(_session(start))}"
        + (f" ({where})" if where else "")
    ]
    files = [shown(f) for f in start.files]
    if files:
        listing = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
        out.append(f"  Files that session changed: {listing}")
    return out


def lines(data: dict[str, Any]) -> list[str]:
    """``keeper why`` for a person."""
    state = "" if data["status"] == "current" else f", {data['status']}"
    section = f"{shown(data['section'])} " if data["section"] else ""
    text = "\n".join(shown(line, 2000) for line in str(data["text"]).split("\n")[:40])
    out = [text, f"  id {data['id']}, {section}({data['scope']} memory{state})"]
    start = data["origin"]
    if start is None:
        out.append("Origin: not recorded (written by hand, or saved before Keeper kept provenance).")
    else:
        out += _origin_lines(start)
    if data["session_file"]:
        out.append(f"  Session file: {shown(data['session_file'], 1000)}")
    if data["transcript"]:
        out.append(f"  Transcript: keeper transcript {shown(data['transcript'], 1000)}")
    if data["history"]:
        out.append("History:")
        out += [_event_line(e) for e in data["history"]]
    out += _use_lines(data["uses"])
    if data["status"] == "current" and data["scope"] == "project":
        out += _claim_lines(data)
    return out


def _use_lines(uses: list[provenance.Event]) -> list[str]:
    """The sessions that used the item after Keeper showed it, and where the use was seen."""
    if not uses:
        return []
    count = len({str(u.session) for u in uses})
    out = [f"Used in {count} session{'s' if count != 1 else ''} Keeper showed it to (newest last):"]
    for use in uses:
        where = shown(use.where or "?", 64)
        out.append(f"  {shown(provenance.shown_at(use))} by session {shown(_session(use))} ({where})")
    return out


VERDICTS = {"holds": "holds", "broken": "no longer holds", "unchecked": "not checked"}


def _claim_lines(data: dict[str, Any]) -> list[str]:
    """Each claim the item makes about the code with its verdict, then the item's."""
    out = ["Claims about the code:"] if data["claims"] else []
    for claim in data["claims"]:
        where = f" in {claim['where']}" if claim["where"] and claim["kind"] != "path" else ""
        why = f": {claim['why']}" if claim["verdict"] != "holds" or claim["why"] != "holds" else ""
        verdict = VERDICTS.get(claim["verdict"], claim["verdict"])
        out.append(f"  {claim['kind']} {shown(claim['claim'])}{shown(where, 300)}: {verdict}{shown(why, 300)}")
    if data["stale"]:
        out.append(f"May be stale: {shown(data['stale'], 1000)}")
    elif data["checked"]:
        out.append("Not stale: every claim it makes about the code still holds.")
    else:
        out.append("Staleness: it makes no claim about the code that held when it was saved.")
    return out


def carried(project: paths.Project, path: str, text: str) -> list[dict[str, Any]]:
    """The provenance of each item in a recall result's text, for a result from the project's or the
    global memory.md (``keeper recall --json`` carries it); nothing for any other file."""
    from keeper.markdown import bare
    from keeper.memory.items import key

    folders = {
        os.path.abspath(project.memory): project.dir,
        os.path.abspath(paths.global_memory_file()): paths.global_dir(),
    }
    folder = folders.get(os.path.abspath(path))
    if folder is None:
        return []
    events = provenance.read(folder)
    history, sessions = provenance.by_item(events), provenance.session_facts(events)
    found: list[dict[str, Any]] = []
    lines = text.split("\n")
    for start, line in enumerate(lines):
        if not line.startswith("- "):
            continue
        end = start + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        item_key = key(document.item_text([bare(x) for x in lines[start:end]]))
        mine = history.get(item_key)
        if mine:
            told = provenance.described(provenance.origin(mine), sessions)
            origin = told.as_dict() if told is not None else {}
            keep = ("event", "at", "session", "machine", "branch", "commit", "files")
            found.append(
                {
                    "id": provenance.item_id(item_key),
                    "origin": {k: origin[k] for k in keep if k in origin},
                    "last": mine[-1].kind,
                }
            )
    return found


def run(args: argparse.Namespace) -> int:
    """An item's story, redacted with the user's patterns too: memory.md is edited by hand, and a
    pattern may be newer than the save that wrote the item."""
    from keeper import redact

    at = common.resolve_args(args)
    rules = at.cfg.redact_patterns
    data = explain(at.project, " ".join(args.item), rules)
    common.emit(
        args, redact.redact_values(as_json(data), rules), lambda: [redact.redact(s, rules) for s in lines(data)]
    )
    return 0
