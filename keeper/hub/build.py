"""The Memory Hub: every project's memory, sessions and history gathered into one offline HTML page.

This module reads the store and bounds what goes into the page; ``page`` is the page itself.
The page must open at once on a store of 10,000 sessions, so each session contributes a short
summary (first prompt, files, what it saved, each cut to a few hundred characters) and only the
newest records are embedded whole, within byte budgets; the page says what was left out. Every
session still counts in the calendar. The data goes into the page as JSON with ``<``, ``>``, ``&``
and the two JavaScript line separators escaped, so no memory text can end the script that holds
it, and the page renders it with ``textContent`` only.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta

from keeper import __version__, redact
from keeper.hub import page
from keeper.markdown import fence, heading, split_lines, unescape_line
from keeper.memory import document
from keeper.recall import sources
from keeper.store import counters, paths, projects, repo, sessions
from keeper.store.fsutil import atomic_write, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Event = tuple[int, str, str, str, str]  # project index, when, kind, text, session file

SUMMARY_BUDGET = 6_000_000  # bytes of session summaries: 10,000 sessions even when every field is full
RECORD_BUDGET = 1_000_000  # characters of whole session records, newest first
RECORD_CHARS = 12_000  # one record, at most
MEMORY_CHARS = 200_000  # one memory.md, at most
EVENT_LIMIT = 2_000  # timeline entries, newest first
TEXT_CHARS = {"summary": 140, "prompt": 120, "files": 100, "saves": 160, "event": 240}
EVENT_KINDS = {"Decision": "decided", "Issue": "opened", "Resolved": "resolved", "Retired": "retired"}


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _sections(text: str) -> dict[str, list[str]]:
    """A session file's lines by level-2 section (``""`` is the header), code fences respected.

    A plain scan rather than ``markdown.Document``: at 10,000 sessions that parse is most of the page's cost.
    """
    found: dict[str, list[str]] = {"": []}
    current = found[""]
    fenced = False
    for line in split_lines(text):
        first = line.lstrip(" ")[:1]
        if first in ("`", "~") and fence(line):
            fenced = not fenced
        elif first == "#" and not fenced:
            level = heading(line)
            if level and level[0] == 2:
                current = found.setdefault(level[1].lower(), [])
                continue
        current.append(line.rstrip("\r\n"))
    return found


def _items(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Top-level bullet items as ``(first line index, lines)``, continuation lines included."""
    found: list[tuple[int, list[str]]] = []
    for index, line in enumerate(lines):
        if line[:2] in ("- ", "* ", "+ "):
            found.append((index, [line]))
        elif found and line[:1] in (" ", "\t") and line.strip() and found[-1][0] + len(found[-1][1]) == index:
            found[-1][1].append(line)
    return found


def _day_of(path: str) -> str:
    """The day a session started: from its file name, else (a file named by hand) when it was last written."""
    day = sessions.date_of(path)
    try:
        return datetime.strptime(day or "", "%Y-%m-%d").strftime("%Y-%m-%d")
    except ValueError:
        return time.strftime("%Y-%m-%d", time.localtime(os.path.getmtime(path)))


class Session:
    """What the page shows of one session file: its summary fields and the moments it saved."""

    def __init__(self, project: int, path: str, text: str) -> None:
        self.project, self.path, self.text = project, path, text
        self.file = os.path.basename(path)
        self.day = _day_of(path)
        parts = _sections(text)
        facts = dict(item[0][2:].split(": ", 1) for _, item in _items(parts[""]) if ": " in item[0])
        name = self.file[:-3]
        clock = f"{name[11:13]}:{name[13:15]}" if len(name) >= 15 and name[11:15].isdigit() else ""
        self.start = facts.get("Started") or f"{self.day} {clock}".strip()
        self.branch = facts.get("Branch", "")
        tools = facts.get("Tool uses", "").split(" ", 1)[0]
        self.tool_uses = int(tools) if tools.isdigit() else None
        self.summaries: list[str] = []
        self.saved: list[str] = []
        self.events: list[tuple[str, str, str]] = []  # (when, kind, text)
        self._read_saves(parts.get(sessions.SAVES.lower(), []))
        self.prompt = ""
        self.files: list[str] = []
        self._read_activity(parts.get(sessions.ACTIVITY.lower(), []))
        if not self.summaries and facts.get("Last reply"):
            self.summaries.append(facts["Last reply"])

    def _read_saves(self, lines: list[str]) -> None:
        """Each save's summary, its items, and the dated moments (``### HH:MM save`` on the session's day)."""
        day = datetime.strptime(self.day, "%Y-%m-%d")
        items = dict(_items(lines))
        clock = ""
        index = 0
        continued = False  # the line before was a summary line: this one goes on with it
        while index < len(lines):
            line = lines[index]
            if index in items:
                continued = False
                item = document.item_text(items[index])
                self.saved.append(item)
                label, _, rest = item.partition(": ")
                kind = EVENT_KINDS.get(label)
                if kind and rest.strip():
                    # a save stamped earlier than the session's start happened after midnight
                    next_day = bool(clock) and clock < self.start[11:16]
                    when = (day + timedelta(days=1)) if next_day else day
                    self.events.append((f"{when:%Y-%m-%d} {clock}".strip(), kind, rest))
                index += len(items[index])
                continue
            if line.startswith("### ") and line.endswith(" save") and line[6:7] == ":":
                clock = line[4:9]
            elif line.strip() and not line.startswith("#"):
                text = unescape_line(line, lists=True).strip()
                if continued:
                    self.summaries[-1] += " " + text  # a summary written on several lines is one summary
                else:
                    self.summaries.append(text)
                index += 1
                continued = True
                continue
            continued = False
            index += 1

    def _read_activity(self, lines: list[str]) -> None:
        current = ""
        for line in lines:
            if line.startswith("- "):
                current = line[2:].split(" (", 1)[0].strip()
            elif current == "Prompts" and not self.prompt and line.strip()[:1].isdigit():
                self.prompt = line.strip().split(". ", 1)[-1]
            elif current == "Files changed" and line.startswith("  - "):
                name = os.path.basename(line[4:].rsplit(" (", 1)[0].replace("\\", "/"))
                if name not in self.files:
                    self.files.append(name)

    def summary(self, record: int) -> list[Any]:
        """The session as the page's compact row (see ``page``: ``p f d s q F v n b r``)."""
        return [
            self.project,
            self.file,
            self.start,
            _cut(" · ".join(self.summaries), TEXT_CHARS["summary"]),
            _cut(self.prompt, TEXT_CHARS["prompt"]),
            _cut(" ".join(self.files), TEXT_CHARS["files"]),
            _cut("  ".join(self.saved), TEXT_CHARS["saves"]),
            self.tool_uses,
            self.branch,
            record,
        ]


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def _memory_events(index: int, text: str | None, seen: set[tuple[int, str, str]], hide: Hide) -> list[Event]:
    """Dated memory.md items that no session file records (added by hand, or their sessions cleared),
    redacted (``hide``)."""
    found: list[Event] = []
    for name, kind in (("decisions", "decided"), ("issues", "opened")):
        for item, day in document.items(text, name):
            if day and (index, kind, _key(item)) not in seen:
                found.append((index, day, kind, hide(item), ""))
    return found


class Hide:
    """Redaction with one project's patterns (the global ones and its own), as a save into it uses:
    memory.md and team.md are edited by hand, and a pattern may be newer than a save."""

    __slots__ = ("patterns",)

    def __init__(self, patterns: list[str]) -> None:
        self.patterns = patterns

    def __call__(self, text: str) -> str:
        return redact.redact(text, self.patterns)


def _settings(root: str | None) -> tuple[bool, Hide]:
    """Whether the settings of the project at ``root`` (None: the global ones) let Keeper read its
    team notes (``team: false`` does not), and its redaction."""
    from keeper.store import config

    cfg = config.load(root)
    return cfg.team, Hide(cfg.redact_patterns)


def _origins(project: paths.Project, text: str, hide: Hide) -> dict[str, Any]:
    """Where each item of a project's memory.md came from (keyed by its first line, as the page shows
    it), the items that may be stale (``keeper why`` says more) and those no session used."""
    from keeper.store import provenance
    from keeper.text import shown

    events = provenance.read(project.dir)
    history, sessions = provenance.by_item(events), provenance.session_facts(events)
    found: dict[str, dict[str, Any]] = {}
    for _, item_key, item, _ in provenance.listed(text):
        start = provenance.described(provenance.origin(history.get(item_key, [])), sessions)
        if start is None:
            continue
        when = provenance.shown_at(start)
        where = ", ".join(shown(v) for v in (start.machine, start.branch) if v)  # a branch, files: hidden below
        files = [shown(f) for f in start.files]
        line = f"{start.kind} {shown(when)} by session {shown(start.session or '?')}" + (f" ({where})" if where else "")
        if files:
            line += " · changed " + ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        found[hide(item.split("\n", 1)[0])] = {"id": provenance.item_id(item_key), "origin": hide(line)}
    _unused(project, text, found, hide)
    from keeper.store.stale import stale_items

    stale = [s.as_dict() for s in stale_items(project, text)] if os.path.isdir(project.checkout) else []
    for entry in stale:
        first = hide(str(entry["text"]).split("\n", 1)[0])
        found.setdefault(first, {"id": entry["id"], "origin": ""})["stale"] = hide(entry["reason"])
    return {"origins": found, "stale": [{**s, "text": hide(s["text"]), "reason": hide(s["reason"])} for s in stale]}


def _unused(project: paths.Project, text: str, found: dict[str, dict[str, Any]], hide: Hide) -> None:
    """Mark the items shown at the start of many sessions on this machine and used in none
    (``store.loads``), saying whether session starts now leave them to recall."""
    from keeper.store import loads, provenance

    tally = loads.read(project)
    if not tally.items:
        return
    for section, item_key, item, _ in provenance.listed(text):
        if tally.never_used(item_key):
            mark = f"shown at the start of {(tally.counts(item_key) or [0])[0]} sessions, used in none"
            if tally.rank(item_key, section) == loads.IDLE:
                mark += "; left to recall at session start"
            entry = found.setdefault(hide(item.split("\n", 1)[0]), {"id": provenance.item_id(item_key)})
            entry.setdefault("origin", "")
            entry["unused"] = mark


def collect(now: datetime | None = None) -> dict[str, Any]:
    """Everything the page shows, as plain data within the budgets above.

    Session files and saves were redacted when Keeper wrote them; memory.md and team.md, which
    people edit by hand, are redacted again here, and every text with the user's own patterns where
    a project has any (one may be newer than a save; without any, redacting every session again
    would cost seconds at 10,000).
    """
    now = now or datetime.now()
    listed = projects.list_all()
    everything: list[Session] = []
    shown: list[dict[str, Any]] = []
    hides: list[Hide] = []
    for index, info in enumerate(listed):
        days: dict[str, int] = {}
        reads_team, hide = _settings(info.project.root if info.root_exists else None)
        hides.append(hide)
        for path in info.session_files:
            text = read_text(path)
            if text is None:
                continue
            session = Session(index, path, hide(text) if hide.patterns else text)
            days[session.day] = days.get(session.day, 0) + 1
            everything.append(session)
        mem = info.memory_text or ""
        shared = repo.team_file(info.project) if info.root_exists and reads_team else None
        team = sources.read_named(shared, sources.TEAM_NAME) if shared else None
        data = info.as_dict()
        data.update(
            {
                "memory": hide(mem[:MEMORY_CHARS]),
                "memory_cut": len(mem) > MEMORY_CHARS,
                "team": hide(team) if team and "\0" not in team else None,
                "team_path": info.project.team,
                "hooks": counters.hook_summary(info.project.state),
                "days": days,
                "sessions_dir": info.project.sessions,
                **_origins(info.project, mem, hide),
            }
        )
        shown.append(data)
    everything.sort(key=lambda s: (s.start, s.file), reverse=True)

    rows: list[list[Any]] = []
    records: list[str] = []
    spent = [0, 0]  # bytes of rows, characters of records
    for session in everything:
        if spent[0] > SUMMARY_BUDGET:
            break
        record = -1
        if spent[1] < RECORD_BUDGET:
            cut = len(session.text) > RECORD_CHARS
            records.append(session.text[:RECORD_CHARS] + ("\n\n… (cut here; the file holds the rest)" if cut else ""))
            spent[1] += len(records[-1])
            record = len(records) - 1
        rows.append(session.summary(record))
        spent[0] += len(json.dumps(rows[-1], ensure_ascii=False).encode("utf-8"))

    dated = [(s.project, when, kind, text, s.file) for s in everything for when, kind, text in s.events]
    seen = {(project, kind, _key(text)) for project, _, kind, text, _ in dated}
    for index, info in enumerate(listed):
        dated += _memory_events(index, info.memory_text, seen, hides[index])
    dated.sort(key=lambda e: e[1], reverse=True)
    kept = [[p, when, kind, _cut(text, TEXT_CHARS["event"]), file] for p, when, kind, text, file in dated[:EVENT_LIMIT]]

    global_memory = read_text(paths.global_memory_file())
    return {
        "version": __version__,
        "generated": now.strftime("%Y-%m-%d %H:%M"),
        "today": now.strftime("%Y-%m-%d"),
        "store": paths.data_root(),
        "sync": _sync_summary(),
        "sep": os.sep,
        "projects": shown,
        "events": kept,
        "global": _settings(None)[1](global_memory[:MEMORY_CHARS]) if global_memory else None,
        "left_out": {
            "sessions": len(everything) - len(rows),
            "records": len(everything) - len(records),
            "events": len(dated) - len(kept),
            "total_sessions": len(everything),
        },
        "sessions": rows,
        "records": records,
    }


def _sync_summary() -> dict[str, Any]:
    """The remote, the last successful sync and what waits to be pushed (names only, at most 20)."""
    from keeper.sync import report

    found = report.summary()
    return {**found, "waiting_count": len(found["waiting"]), "waiting": found["waiting"][:20]}


def script_json(data: Any) -> str:
    """JSON that is safe inside ``<script>``: nothing in it can close the tag or break a JS string."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(char, escaped)
    return text.replace("\u2029", "\\u2029")


def render(data: dict[str, Any]) -> str:
    """The page. Sessions and records go into scripts of their own, parsed only when a view needs them."""
    rest = {k: v for k, v in data.items() if k not in ("sessions", "records")}
    return page.page(script_json(rest), script_json(data["sessions"]), script_json(data["records"]))


def default_path() -> str:
    return paths.hub_page()


def write(out: str | None = None, now: datetime | None = None) -> str:
    """Write the page (default ``<store>/hub.html``, private to the user) and return its absolute path."""
    path = os.path.abspath(os.path.expanduser(out)) if out else default_path()
    atomic_write(path, render(collect(now)))
    return path
