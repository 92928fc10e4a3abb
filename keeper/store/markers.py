"""Each session's marks in the state folder: its start and end, whether it is open, what its start showed.

Start and end markers in ``state/sessions/`` say which sessions began and which ended, and
``state/open`` holds one marker per session that started and has not ended, so a session killed
before SessionEnd is finished by a later SessionStart (``keeper.capture.record``). Cheap enough for
every start: the standard library and the store's paths, no lock.
"""

from __future__ import annotations

import os
import time

from keeper.store import paths
from keeper.store.fsutil import ensure_dir, guard, open_append, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime


def marker(project: paths.Project, session: str, kind: str) -> str:
    """A session's file of this kind in the state folder (``paths.SESSION_KINDS``)."""
    return project.session_file(session, kind)


def open_marker(project: paths.Project, session: str) -> str:
    """The session's marker among the open ones."""
    return os.path.join(project.state, paths.OPEN_SESSIONS, session)


def _touch(path: str) -> None:
    os.close(open_append(path))  # 0600, never through a link; makes the folder if missing


def mark_start(project: paths.Project, session: str, transcript_path: str = "", at: datetime | None = None) -> None:
    """Remember when a session started (``at``, else now) and where its transcript is (the first
    marker wins).

    Cheap enough for the hook: one exclusive create, no lock; a new session also gets its
    marker among the open ones.
    """
    path = marker(project, session, "start")
    guard(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except FileNotFoundError:
        ensure_dir(project.session_state)
        return mark_start(project, session, transcript_path, at)
    started = at.strftime("%Y-%m-%dT%H:%M:%S") if at else time.strftime("%Y-%m-%dT%H:%M:%S")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(started + "\n" + transcript_path.replace("\n", " "))
    if os.path.isdir(os.path.dirname(open_marker(project, session))):
        _touch(open_marker(project, session))  # without the folder, unended() builds it from the markers
    return


IDLE_BEFORE_RECOVERY = 600  # seconds without transcript activity before a session counts as gone
MISSED_ENDINGS_PER_START = 5
FUTURE_SLACK = 120.0  # seconds a file's time may run ahead of this clock before it is not believed


def gone(project: paths.Project, current: str) -> list[tuple[str, str, float]]:
    """The sessions but ``current`` that started, never ended and count as gone, each with its
    transcript (or "") and its last activity: a transcript idle for ten minutes, or dated in the
    future (a clock that was ahead: that time proves no activity). At most
    ``MISSED_ENDINGS_PER_START`` are looked at; told without the session record's code, which
    only a session gone needs."""
    found: list[tuple[str, str, float]] = []
    others = [s for s in unended(project) if s != current][:MISSED_ENDINGS_PER_START]
    if not others:
        return found
    from keeper.store import sessions

    for session in others:
        path = sessions.read_state(project, session).transcript or start_marker(project, session)[1]
        start = marker(project, session, "start")
        try:
            last = os.path.getmtime(path) if path else os.path.getmtime(start)
        except (OSError, ValueError):
            last = os.path.getmtime(start) if os.path.exists(start) else 0.0
        now = time.time()
        if not (now - last < IDLE_BEFORE_RECOVERY and last <= now + FUTURE_SLACK):
            found.append((session, path, min(last, now)))
    return found


def start_marker(project: paths.Project, session: str) -> tuple[str, str]:
    """``(started ISO time, transcript path)`` from the start marker; empty strings when unknown."""
    text = read_text(marker(project, session, "start")) or ""
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
    path = marker(project, session, "end")
    try:
        if ended:
            os.close(open_append(path))
            os.unlink(open_marker(project, session))
        else:
            try:
                os.unlink(path)  # usually absent: a Stop of a live session pays one failed unlink
            except FileNotFoundError:
                pass  # and is marked open all the same (a Stop with nothing new needs it: keeper.hooks.idle)
            if os.path.isdir(os.path.dirname(open_marker(project, session))):
                _touch(open_marker(project, session))
    except OSError:
        pass


def unended(project: paths.Project) -> list[str]:
    """Sessions that started but whose end was never recorded.

    One small listing (``state/open``: a marker per open session), so a session start costs the
    same however many sessions the store holds; a store from before it builds the folder once
    from its start and end markers.
    """
    folder = os.path.join(project.state, paths.OPEN_SESSIONS)
    try:
        return sorted(os.listdir(folder))
    except FileNotFoundError:
        pass
    except OSError:
        return []
    try:
        names = os.listdir(project.session_state)
    except OSError:
        return []
    started = {n[: -len(".start")] for n in names if n.endswith(".start")}
    ended = {n[: -len(".end")] for n in names if n.endswith(".end")}
    found = sorted(started - ended)
    try:
        tmp = f"{folder}.{os.getpid()}.tmp"
        ensure_dir(tmp)
        for session in found:
            _touch(os.path.join(tmp, session))
        os.rename(tmp, folder)
    except OSError:  # another start built it first, or the disk said no: built again next time
        for leftover in os.listdir(tmp) if os.path.isdir(tmp) else []:
            os.unlink(os.path.join(tmp, leftover))
        if os.path.isdir(tmp):
            os.rmdir(tmp)
    return found


def shown_file(project: paths.Project, session: str) -> str:
    """The ids of the items a session's start-up context showed (machine-local, derived): a save
    that only restates one of them is an echo."""
    return marker(project, session, "shown")


def remember_shown(project: paths.Project, session: str, ids: set[str]) -> None:
    """Keep the ids of the items shown at this session's start (machine-local, for echoes).

    A start that shows what the session's last one showed (a resume, a compaction) leaves the file
    alone, and other ids go to a new file rather than into the old one: on ext4, rewriting a file
    that holds data in place makes its close() start writing it out (``auto_da_alloc``), ~2 ms."""
    path = shown_file(project, session)
    text = " ".join(sorted(ids))
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return
        os.unlink(path)
    except OSError:
        pass
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        pass
