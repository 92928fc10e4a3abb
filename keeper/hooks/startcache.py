"""SessionStart's answer kept for the next start, used only while all it was worked out from holds the same.

A start with memory parses memory.md, judges its items' claims against the work tree and reads the
project's tally (``keeper.hooks.context``): most of a start's own time. Its answer (the context,
the status line, the ids of the items it showed) depends on files, on two settings, on the session
only through the session's own file, on the source only for a compaction, and on the clock only
through "saved N ago" and whether memory.md's time runs ahead of it: those make up its key
(``key``, ``Watch``), the clock as the times between which it shows the same (``clock.between``),
so a hit needs neither the clock's words nor a look at memory.md's time. The files: memory.md, the
global memory, the provenance record, the tally, the newest session files but the session's own and
their list (the folder, when there is no list), team.md and its folders, the work tree and every
file and folder the stale check looked at, with the folders above them (a folder swapped for a link
changes its parent). Each is compared by its status: size, modification and change times to the
nanosecond (a change time cannot be set by hand), inode and type; a missing one as missing. On
Windows ``st_ctime`` is the creation time: there an edit that keeps a file's size and puts its
modification time back goes unseen, as it does for the stale check's kept verdicts
(``keeper.store.verdicts``) a miss falls back on. A file modified within ``MTIME_TICK_NS`` before
the start began working its answer out (one tick of a coarse clock: FAT's) or changed since a tick
of its change time before then (``fsutil.settled``: it may have changed after it was read, and its
status is taken after), a save in the record dated ahead of the clock (it counts once the clock
gets there: ``stale.WAITING``), or a clock that went back since, keeps nothing: any doubt is a
miss, and a miss works the answer out in full. A hit imports neither the context builder nor
memory's parser nor the stale check. The file (``paths.START_CACHE``, derived and machine-local:
deleting it costs one start its full computation) is the answer as one JSON line, then
``status<TAB>path`` a line for each file.
"""

from __future__ import annotations

import os
import time

from keeper import __version__, jsonio
from keeper.store import markers, paths
from keeper.store.fsutil import MTIME_TICK_NS, settled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from keeper.store.stale import Stale
    from keeper.store.verdicts import Taken

    Answer = tuple[str, str]  # the context, the status line
    Seen = dict[str, "os.stat_result | None"]  # each path's stat as a start took it (None: nothing there)

FORMAT = 3  # raise it when what an answer rests on changes within a version
CODE = os.path.dirname(os.path.abspath(__file__))  # another installation of the same version: its own answers


class Watch:
    """What the context builder reports of one answer: the work tree's files the stale check
    looked at (``/``-separated, ``folder/`` for a listing), the ids of the items shown (None: an
    empty memory's answer, which names the agent's save command and is not kept) and the stale
    check's verdicts it shows (a digest)."""

    __slots__ = ("checked", "shown", "stale")

    def __init__(self) -> None:
        self.checked: set[str] = set()
        self.shown: set[str] | None = None
        self.stale = ""

    def verdicts(self, stale: list[Stale]) -> None:
        """Note the verdicts the answer shows: the same ones, memory.md and all else as it was, are
        the same answer."""
        from keeper.store.identity import sha256_hex

        rows = [[s.key, s.text, s.section, s.reason, s.rank] for s in stale]
        self.stale = sha256_hex(jsonio.dumps(rows).encode("utf-8", "surrogatepass"))


class Found:
    """A kept answer whose key and clock hold: its context, status line, the ids it showed and the
    verdicts it shows (``Watch.stale``); ``moved``: a file the stale check looked at is not as it
    was (all else is), so the answer holds if the check's verdicts do."""

    __slots__ = ("between", "fixed", "line", "lines", "moved", "seen", "shown", "stale", "text")

    def __init__(self, kept: dict[str, Any], shown: list[str], lines: list[str], fixed: int, seen: Seen) -> None:
        self.text, self.line, self.between, self.stale = kept["text"], kept["status"], kept["between"], kept["stale"]
        self.shown, self.seen = shown, seen  # the check's files' stats now
        self.lines, self.fixed = lines, lines[:fixed]  # every status line kept; all but the check's files'
        self.moved = False


def status(path: str) -> str:
    """A file's or folder's size, modification and change times, inode and type (its links
    followed), as one word; ``-`` when nothing is there. Raises OSError or ValueError when it cannot
    be told."""
    return word(stat_of(path))


def stat_of(path: str) -> os.stat_result | None:
    """``status``'s stat of ``path``, None when nothing is there (the stale check takes it too)."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def word(found: os.stat_result | None) -> str:
    """``status`` of a stat taken."""
    if found is None:
        return "-"
    return f"{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}:{found.st_ino}:{found.st_mode}"


def key(
    project: paths.Project, limit: int, source: str, session: str, team: bool, patterns: Sequence[str] = ()
) -> dict[str, Any]:
    """What an answer rests on besides the files' status and the clock: the code, the project, the
    settings, the session's own file, the compaction."""
    return {
        "format": FORMAT,
        "version": __version__,
        "code": CODE,
        "project": [project.dir, project.name, project.checkout, paths.global_memory_file()],
        "settings": [limit, team, list(patterns)],
        "compact": source == "compact",
        "own": own_file(project, session),
    }


def own_file(project: paths.Project, session: str) -> str | None:
    """The session's own file (``sessions.existing_file``); one stat for a session with no state yet."""
    if not os.path.exists(project.session_file(session, "json")):
        return None
    from keeper.store import sessions

    return sessions.existing_file(project, session)


def cache_file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.START_CACHE)


def _read(project: paths.Project) -> tuple[dict[str, Any], list[str]]:
    """The kept answer (a JSON line) and the lines after it, ``status<TAB>path`` each."""
    try:
        with open(cache_file(project), encoding="utf-8") as fh:
            head, *files = fh.read().split("\n")
        kept = jsonio.loads(head)
    except (OSError, ValueError, RecursionError):
        return {}, []
    return (kept, files) if isinstance(kept, dict) else ({}, [])


def _moved(files: list[str], seen: Seen | None = None) -> bool:
    """Whether a file of ``status<TAB>path`` lines has another status now (OSError, ValueError:
    it cannot be told); ``seen`` gets each one's stat now, else the first that moved ends it."""
    moved = False
    for entry in files:
        was, _, path = entry.partition("\t")
        found = stat_of(path)
        if seen is not None:
            seen[path] = found
        moved = moved or word(found) != was
        if moved and seen is None:
            break
    return moved


def _still(files: list[str]) -> bool:
    """Whether every file of ``status<TAB>path`` lines has the status it had."""
    try:
        return not _moved(files)
    except (OSError, ValueError):
        return False


def lookup(project: paths.Project, want: dict[str, Any]) -> Found | None:
    """The kept answer, when it was worked out for ``want`` (``key``), the clock has not gone back
    since and shows what it showed (``clock.between``), and every file it rests on has the status
    it had, but perhaps the files the stale check looked at (the last ``checked`` lines)."""
    kept, files = _read(project)
    at, text, line, shown, between = (kept.get(k) for k in ("at", "text", "status", "shown", "between"))
    checked, stale = kept.get("checked"), kept.get("stale")
    if kept.get("key") != want or type(at) is not int or len(files) != kept.get("files"):
        return None
    now = time.time_ns()
    if not (isinstance(between, list) and len(between) == 2 and all(type(t) is int for t in between)):
        return None
    if not at <= now or not between[0] <= now < between[1]:
        return None
    if not (isinstance(text, str) and isinstance(line, str) and isinstance(shown, list) and isinstance(stale, str)):
        return None
    if type(checked) is not int or not 0 <= checked <= len(files):
        return None
    found = Found(kept, [s for s in shown if isinstance(s, str)], files, len(files) - checked, {})
    try:
        if _moved(found.fixed):
            return None
        found.moved = _moved(files[len(found.fixed) :], found.seen)
    except (OSError, ValueError):
        return None
    return found


def answer(
    project: paths.Project, limit: int, source: str, session: str, team: bool, patterns: Sequence[str] = ()
) -> Answer:
    """SessionStart's context and status line (``context.session_start``): the kept one when it
    holds, else worked out and kept; either way the items shown are noted for the session."""
    began = time.time_ns()  # before anything is read: a file changed since is not kept by its status
    want = key(project, limit, source, session, team, patterns)  # before anything is read: a change meanwhile is a miss
    found = lookup(project, want)
    if found is not None and not found.moved:
        markers.remember_shown(project, session, set(found.shown))
        return found.text, found.line
    with Uncollected():
        return _worked_out(project, (limit, source, session, team, patterns), want, found, began)


class Uncollected:
    """The cycle collector off while a start works its answer out: what it allocates (the kept
    verdicts' thousands of lists, memory's parse) is freed by reference counts, and the collector's
    passes over it cost a start with one file changed ~2 M instructions of ~85 M (issue 43)."""

    def __enter__(self) -> None:
        import gc  # built in; not for a kept answer, which allocates little

        self.collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        import gc

        if self.collecting:
            gc.enable()


def _worked_out(
    project: paths.Project,
    call: tuple[int, str, str, bool, Sequence[str]],
    want: dict[str, Any],
    found: Found | None,
    began: int,
) -> Answer:
    """``answer`` when the kept one does not hold as it is: its stale check judged again, or worked
    out in full (``call``: ``answer``'s arguments)."""
    limit, source, session, team, patterns = call
    watch = Watch()
    if found is not None:  # only files the stale check looked at changed: its verdicts may be as they were
        # the check takes the stats just taken of its files, as of when this start began looking
        watch.verdicts(verdicts_again(project, watch.checked, (began, found.seen)))
        if watch.stale == found.stale and _still(found.fixed):  # all else still as it was: judged on it
            watch.shown = set(found.shown)
            markers.remember_shown(project, session, watch.shown)
            head = {"key": want, "between": found.between}
            _keep(project, head, watch, (found.text, found.line), found.fixed, began, (found.seen, found.lines))
            return found.text, found.line
        watch = Watch()
    from keeper.hooks import context  # the context builder: not for an answer whose verdicts are as they were

    text, line = context.session_start(project, limit, source, session, team, watch, patterns)
    if watch.shown is not None:
        save(project, want, watch, session, (text, line), began)
    return text, line


def verdicts_again(project: paths.Project, looked: set[str], taken: tuple[int, Taken]) -> list[Stale]:
    """The stale check as ``context.session_start`` makes it, on memory.md as it reads it
    (``looked``: as its ``watch.checked``; ``taken``: as ``stale_items`` takes it), without the
    context builder: when only files the check looked at changed, the same verdicts are the same
    answer."""
    from keeper.store.fsutil import read_head
    from keeper.store.stale import stale_items

    found = read_head(project.memory, paths.BRIEFING_BYTES)
    return stale_items(project, found[0] if found else "", {}, keep=True, looked=looked, taken=taken)


def rests_on(project: paths.Project, session: str, compact: bool) -> set[str]:
    """Every file and folder an answer was worked out from (see the module's docstring) but the
    newest session files, which their list names (``_newest``), and those the stale check looked
    at (``looked_at``)."""
    newest = os.path.join(project.state, paths.NEWEST_SESSIONS)
    found = {project.memory, paths.global_memory_file(), project.provenance, newest, project.checkout}
    found |= {os.path.join(project.state, paths.LOADS)} | (set() if os.path.exists(newest) else {project.sessions})
    team = os.path.dirname(project.team)
    found |= {project.team, team, os.path.dirname(team)}
    own = own_file(project, session) if compact else None
    return found | ({own} if own else set())  # after a compaction the answer shows the session's own record


def looked_at(project: paths.Project, watch: Watch) -> set[str]:
    """The work tree's files and folders the stale check looked at, with the folders above them."""
    from keeper.store import claims

    found: set[str] = set()
    folders: set[str] = set()
    for rel in watch.checked:
        rel = rel.rstrip("/")
        while rel and rel not in folders:
            full = claims.confined(project.checkout, rel)
            if full is not None:
                found.add(full)
            folders.add(rel)
            rel = rel.rpartition("/")[0]
    return found


def _newest(project: paths.Project, own: str | None) -> set[str]:
    """The session files a start looks at for sessions that ended without a save: not the session's
    own (``own``, unless a compaction shows it)."""
    from keeper.hooks.briefing import UNSAVED_LOOKED_AT
    from keeper.store import sessions

    return {os.path.join(project.sessions, name) for name in sessions.newest(project, UNSAVED_LOOKED_AT)} - {own}


def _statuses(where: set[str], into: list[str], began: int, doubt: str = "", seen: Seen | None = None) -> bool:
    """Each path's ``status<TAB>path`` put ``into`` (taken since ``began``: as ``seen`` holds it, or
    now); False when one changed since a tick of the clock before ``began`` (read before or after
    that change, and within a tick it may change again: nothing would tell) or cannot be told,
    unless ``doubt`` stands for its status (a status no path has: it counts as changed), or has a
    line break in its name."""
    for path in sorted(where):
        try:
            found = word(seen[path]) if seen is not None and path in seen else status(path)
        except (OSError, ValueError):
            found = doubt
        times = found.split(":")[1:3]
        if times and (int(times[0]) > began - MTIME_TICK_NS or not settled(int(times[1]), began)):
            found = doubt
        if "\n" in path or not found:
            return False
        into.append(f"{found}\t{path}")
    return True


def save(project: paths.Project, want: dict[str, Any], watch: Watch, session: str, answer: Answer, began: int) -> None:
    """Keep an answer worked out for ``want`` (from ``began`` on) with the status of every file it
    rests on, unless one of them changed since a tick before ``began`` (or cannot be told), the
    stale check's verdicts hold only until the clock reaches a save dated ahead of it, or the clock
    shows another age of memory.md now than when the answer began (it shows the one of then); a
    file the stale check looked at that changed since is kept as changed (``_keep``)."""
    from keeper.hooks import clock

    files: list[str] = []
    if _statuses(rests_on(project, session, want["compact"]), files, began) and _statuses(
        _newest(project, None if want["compact"] else want["own"]), files, began
    ):
        _keep(
            project,
            {"key": want, "between": list(clock.between(clock.written(project), began))},
            watch,
            answer,
            files,
            began,
        )


def _keep(
    project: paths.Project,
    head: dict[str, Any],
    watch: Watch,
    answer: Answer,
    files: list[str],
    began: int,
    kept: tuple[Seen, list[str]] | None = None,
) -> None:
    """Keep ``answer`` under ``head`` (its key and the clock's times) with ``files`` (the status
    lines of all it rests on but the files the stale check looked at), then a line for each of
    those (``kept``: statuses taken since ``began``, and the status lines of the kept answer this
    one is, which is left as it is when they are these): one that changed since a tick before
    ``began`` (or cannot be told) as changed, so the next start judges again what rests on it
    (``Found.moved``)."""
    from keeper.store.fsutil import atomic_write
    from keeper.store.stale import WAITING

    checked: list[str] = []
    fixed = {entry.partition("\t")[2] for entry in files}
    seen = kept[0] if kept is not None else None
    if WAITING in watch.checked or not _statuses(looked_at(project, watch) - fixed, checked, began, "?", seen):
        return
    now = time.time_ns()
    if not now < head["between"][1]:
        return
    if kept is not None and kept[1] == [*files, *checked]:  # the same answer on the same files: kept already
        return
    data = {**head, "at": now, "files": len(files) + len(checked), "text": answer[0], "status": answer[1]}
    data["shown"], data["checked"], data["stale"] = sorted(watch.shown or ()), len(checked), watch.stale
    try:  # a new file rather than one replaced: on ext4 replacing one makes the rename start writeback
        os.unlink(cache_file(project))
    except OSError:
        pass
    try:
        atomic_write(cache_file(project), "\n".join([jsonio.dumps(data), *files, *checked]), durable=False)
    except OSError:
        pass
