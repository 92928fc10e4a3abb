"""One markdown file per Claude Code session: ``sessions/YYYY-MM-DD_HHMM.md``.

The file is named from the session's start in local time (a clash gets ``-2``, ``-3`` …). Its
header holds facts Keeper keeps current (``- Tool uses: …``), written and read here, updated in
place so that the same Stop twice leaves the same bytes; each save is appended under ``## Saves``
and ``## Activity`` is Keeper's own. Lines a person adds stay. Which file belongs to which
session id is recorded in ``state/sessions/<session>.json``.
"""

from __future__ import annotations

import os

from keeper.records import Record
from keeper.store import paths
from keeper.store.fsutil import atomic_write, create_new, ensure_dir, read_json, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import TypeGuard

    from keeper.memory.document import MergeReport, SaveInput

# markdown loads in the functions that write a session file: a start that only names its session's
# file (``existing_file``: the kept answer's key) needs none of it

SAVES = "Saves"
ACTIVITY = "Activity"
HEADER_ORDER = (
    "Session id",
    "Started",
    "Branch",
    "Transcript",
    "Tool uses",
    "Last activity",
    "Last reply",
    "Compacted",
    "Ended",
)
# Header lines that are the record's bookkeeping, not its content (the last reply is content).
BOOKKEEPING = frozenset(f"- {label}" for label in HEADER_ORDER if label != "Last reply")


class State(Record):
    """What Keeper keeps between hooks for one session (``state/sessions/<session>.json``), read
    once at the boundary: a field that is missing or damaged (a hand edit, a truncated write,
    another version) is None, and a None field is not written (``records.Record``: Stop reads it).

    ``file``: the session file's name in ``sessions/``; ``transcript``: its transcript; ``offset``:
    how far into it the record has read; ``facts``: the header facts written (None: a line removed);
    ``activity``: the transcript's digest (``capture.transcript.Activity`` reads it); ``reply``: the
    digest of the last reply recorded; ``last_save``: when the session last saved (ISO time).
    """

    __slots__ = ("activity", "facts", "file", "last_save", "offset", "reply", "transcript")

    def __init__(
        self,
        *,
        activity: dict[str, object] | None = None,
        facts: dict[str, str | None] | None = None,
        file: str | None = None,
        last_save: str | None = None,
        offset: int | None = None,
        reply: str | None = None,
        transcript: str | None = None,
    ) -> None:
        self.activity, self.facts, self.file, self.last_save = activity, facts, file, last_save
        self.offset, self.reply, self.transcript = offset, reply, transcript

    @classmethod
    def parse(cls, data: object) -> State:
        """The state in a JSON value as read; anything else than a JSON object reads as empty."""
        if not isinstance(data, dict):
            return cls()
        facts, activity, offset = data.get("facts"), data.get("activity"), data.get("offset")
        return cls(
            activity=activity if isinstance(activity, dict) else None,
            facts={k: v for k, v in facts.items() if v is None or isinstance(v, str)}
            if isinstance(facts, dict)
            else None,
            file=data.get("file") if is_file_name(data.get("file")) else None,  # never "..", "/etc/passwd", 42
            last_save=_text(data.get("last_save")),
            offset=offset if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0 else None,
            reply=_text(data.get("reply")),
            transcript=_text(data.get("transcript")),
        )

    def dump(self) -> str:
        """The JSON written: the fields that are set, keys sorted (as every release wrote it)."""
        from keeper import jsonio  # here: recall reads session files and needs no JSON

        return jsonio.dumps({name: getattr(self, name) for name in self.__slots__ if getattr(self, name) is not None})


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def state_at(path: str) -> State:
    """The session state in ``path``; empty when it is missing or unreadable."""
    return State.parse(read_json(path))


def read_state(project: paths.Project, session: str) -> State:
    return state_at(project.session_file(session, "json"))


def write_state(project: paths.Project, session: str, state: State) -> None:
    atomic_write(project.session_file(session, "json"), state.dump())


def is_file_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` (from derived state, so anything) can be a session file's name here."""
    return (
        isinstance(name, str)
        and name.endswith(".md")
        and not name.startswith(".")
        and os.path.basename(name) == name
        and not any(c in name for c in "\\/\x00")
    )


def existing_file(project: paths.Project, session: str) -> str | None:
    """The session's file if it was created and still exists (a person may delete it)."""
    name = read_state(project, session).file
    if name is None:
        return None  # no file yet, or damaged state: a new one is made
    path = os.path.join(project.sessions, name)
    return path if os.path.isfile(path) and not os.path.islink(path) else None


def ensure_file(project: paths.Project, session: str, start: datetime) -> str:
    """The session's file, created on first need and named from ``start``. Call under the project lock."""
    found = existing_file(project, session)
    if found:
        return found
    ensure_dir(project.sessions)
    base = start.strftime("%Y-%m-%d_%H%M")
    gone = _taken_stems(project)
    suffix = 1
    while True:
        name = f"{base}.md" if suffix == 1 else f"{base}-{suffix}.md"
        path = os.path.join(project.sessions, name)
        if name[:-3] not in gone and create_new(path, _template(project, session, start)):
            break
        suffix += 1
    state = read_state(project, session)
    state.file = name
    write_state(project, session, state)
    _remember_newest(project, name)
    return path


def _taken_stems(project: paths.Project) -> set[str]:
    """Names (without ``.md`` and the machine a synced one carries) a new session file must not take:
    those whose removal sync recorded (that removal would take it away too) and, in a store that
    syncs, those a sync sent or brought here (one deleted by hand since is a removal the next sync
    records by its name; a new session under that name would be read as the old file changed)."""
    from keeper.store import removals

    taken: set[str] = set()
    if os.path.exists(removals.path_of(project.dir)):
        taken.update(n for n in removals.removed(removals.read(project.dir), "sessions") if n.endswith(".md"))
    if os.path.exists(paths.sync_file()):
        folder = project.sessions + os.sep
        exported = read_json(os.path.join(paths.sync_dir(), paths.SYNC_EXPORTS))  # store path -> what it synced as
        taken.update(path[len(folder) :] for path in exported if path.startswith(folder))
    return {name.split("@", 1)[0].removesuffix(".md") for name in taken}


def _template(project: paths.Project, session: str, start: datetime) -> str:
    return (
        f"# Session {start.strftime('%Y-%m-%d %H:%M')} · {project.name}\n\n"
        f"- Session id: {session}\n"
        f"- Started: {start.strftime('%Y-%m-%d %H:%M')}\n"
    )


def read_facts(text: str) -> dict[str, str]:
    """The header's ``- Label: value`` facts, as written by ``set_facts``."""
    from keeper.markdown import Document

    header = Document.parse(text).title()
    if header is None:
        return {}
    return dict(item.split(": ", 1) for _, item in header.bullets() if ": " in item)


def set_facts(text: str, facts: dict[str, str | None]) -> str:
    """Set ``- Label: value`` lines in the header in place (``None`` removes one); others stay."""
    from keeper.markdown import Document, after_last_bullet

    doc = Document.parse(text)
    header = doc.title() or doc.sections[0]
    for label in HEADER_ORDER:
        if label not in facts:
            continue
        value = facts[label]
        found = next((i for i, item in header.bullets() if item.startswith(label + ":")), None)
        if value is None:
            if found is not None:
                doc.remove(header, found, found + 1)
            continue
        line = f"- {label}: {' '.join(str(value).split())[:400]}"  # one line: a value can never forge structure
        if found is not None:
            ending = header.lines[found][len(header.lines[found].rstrip("\r\n")) :] or doc.newline
            header.lines[found] = line + ending
            continue
        earlier = HEADER_ORDER[: HEADER_ORDER.index(label)]
        anchors = [i for i, item in header.bullets() if item.split(":", 1)[0] in earlier]
        doc.insert(header, header.item_span(anchors[-1]) if anchors else after_last_bullet(header), [line])
    return doc.render()


def set_activity(text: str, lines: list[str]) -> str:
    """Replace the body of ``## Activity`` (Keeper's own section) with ``lines``."""
    from keeper.markdown import Document

    doc = Document.parse(text)
    section = doc.find((ACTIVITY.lower(),))
    if section is None:
        if not lines:
            return text
        section = doc.add_section(ACTIVITY)
    is_last = section is doc.sections[-1]
    body = [doc.newline, *(line + doc.newline for line in lines)] if lines else [doc.newline]
    section.lines = body if is_last else [*body, doc.newline]
    if section.heading is not None and not section.heading.endswith("\n"):
        section.heading += doc.newline
    return doc.render()


def render_save(now: datetime, data: SaveInput, report: MergeReport) -> list[str]:
    """One save as markdown lines, every value exactly as saved (memory.md keeps a one-line summary).

    Saved text can hold anything, so each line that would read as a heading or a code fence is
    made inert (``escape_line``): a save can never forge Keeper's own sections.
    """
    from keeper.markdown import escape_line
    from keeper.memory.document import SECTIONS, bullet

    titles = {name: title for name, (title, _) in SECTIONS.items()}

    lines = [f"### {now.strftime('%H:%M')} save", ""]
    if data.summary:
        lines += [escape_line(line, lists=True) for line in data.summary.split("\n")] + [""]
    labelled = (
        [("Decision", d) for d in data.decisions]
        + [("State", s) for s in data.state]
        + [("Issue", i) for i in data.issues]
        + [("Resolved", r) for r in report.resolved]
        + [("Resolved (no matching issue)", r) for r in report.unmatched]
        + [("Retired", r) for r in report.retired]
        + [("Retired (no matching decision)", r) for r in report.unmatched_retired]
        + [
            (f"{titles[name]}{' (global)' if data.scope == 'global' else ''}", item)
            for name, items in data.typed.items()
            for item in items
        ]
        + [(f"Not merged ({label})", text) for label, text in data.unplaced]
    )
    items = [line for label, text in labelled for line in bullet(f"{label}: {text}")]
    if items:
        lines += [*items, ""]
    return lines


def append_save(path: str, lines: list[str]) -> None:
    """Append a rendered save under ``## Saves``. Call under the project lock."""
    from keeper.markdown import Document, content_end

    doc = Document.parse(read_text(path, exact=True) or "")
    section = doc.find((SAVES.lower(),)) or doc.add_section(SAVES, before=doc.find((ACTIVITY.lower(),)))
    end = content_end(section)
    block = ([""] if end and section.lines[end - 1].strip() else []) + lines
    while block and not block[-1]:
        block.pop()
    doc.insert(section, end, block)
    atomic_write(path, doc.render())


NEWEST_KEPT = 20


def _newest_file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.NEWEST_SESSIONS)


def newest(project: paths.Project, count: int) -> list[str]:
    """The names of the ``count`` newest session files, oldest first, without listing the folder.

    Read from a small list kept as Keeper creates session files, so a session start costs the
    same with 10 or 10,000 of them; a missing list is rebuilt from one listing. A name may be
    of a file deleted since (callers stat what they open); a file put there by hand is seen
    once the list is rebuilt.
    """
    text = read_text(_newest_file(project))
    if text is not None:
        return _names(text)[-count:]
    names = [os.path.basename(p) for p in list_files(project)][-NEWEST_KEPT:]
    if names:
        try:
            atomic_write(_newest_file(project), "".join(n + "\n" for n in names))
        except OSError:
            pass  # read-only or full: the next start lists the folder again
    return names[-count:]


def _names(text: str) -> list[str]:
    """The list's names; a damaged line (derived state: anything) is left out, never opened."""
    return [name for name in text.split("\n") if is_file_name(name)]


def _remember_newest(project: paths.Project, name: str) -> None:
    """Add a new session file to the newest list. Call under the project lock."""
    text = read_text(_newest_file(project))
    known = _names(text) if text is not None else [os.path.basename(p) for p in list_files(project)]
    names = sorted({*known, name})[-NEWEST_KEPT:]
    atomic_write(_newest_file(project), "".join(n + "\n" for n in names))


def forget_newest(state_dir: str) -> None:
    """Drop the newest list after files were moved in or out by hand or by Keeper (restore, take-over)."""
    try:
        os.remove(os.path.join(state_dir, paths.NEWEST_SESSIONS))
    except OSError:
        pass


def list_files(project: paths.Project) -> list[str]:
    """Session files, oldest first by name (names sort by start time)."""
    try:
        names = sorted(n for n in os.listdir(project.sessions) if n.endswith(".md"))
    except OSError:
        return []
    return [os.path.join(project.sessions, n) for n in names]


def date_of(path: str) -> str | None:
    """``YYYY-MM-DD`` from a session file's name, if it follows the naming scheme."""
    name = os.path.basename(path)
    if len(name) >= 10 and name[4] == "-" and name[7] == "-" and name[:4].isdigit():
        return name[:10]
    return None
