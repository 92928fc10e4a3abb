"""Whether a prompt could recall anything, told before the index opens (the SQLite module alone
costs a prompt more than Python's own start).

Automatic recall keeps a section only when it holds at least two of the prompt's terms
(``prompts.MIN_HITS``), never from memory.md or the session's own file, and without typo correction
a term matches only itself: so a prompt with fewer than two terms the index holds anywhere recalls
nothing, whatever ranking does. After a prompt's search, the index's terms are kept (one a line,
as the index lists them) in ``state/recall-gate`` (derived, machine-local, deletable), for that session, with what
they rest on as the index itself saw it: the session files' names (and the folder's time, which
says when to list them again), the newest session files but the session's own (which it rewrites
at every Stop, and which recall leaves out), the outside sources (global, team, Claude Code's auto
memory, its folder as it was before the index listed it) and whether the team notes were on. A
prompt of the same session first compares those with the files (what the index's quick check
compares, in the same way); on any difference, another session, a prompt that asks for a date,
or no terms kept at all, it searches as before.

One thing the gate does not see, as the index sees it only in time: an older session file edited
in place or replaced, which the index finds by a random window of stats over a few prompts; the
gate finds it when a file is added or removed, or a newer one changes.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.store import paths

TAG = b"keeper-recall-gate 1\n"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    Stamp = list[int] | None  # [mtime_ns, size] of a file, as the index records it


def _file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.RECALL_GATE)


def folder_stamp(folder: str) -> list[int] | None:
    """A folder's and its parent's (type, mtime) by ``lstat``: what says its listing or a link changed."""
    try:
        here, parent = os.lstat(folder), os.lstat(os.path.dirname(folder))
    except (OSError, ValueError):
        return None
    return [here.st_mode, here.st_mtime_ns, parent.st_mode, parent.st_mtime_ns]


def names_of(names: Iterable[str]) -> bytes:
    """The session files' names, as the gate keeps and compares them."""
    return "\n".join(sorted(names)).encode("utf-8", "surrogateescape")


def keep(project: paths.Project, key: dict[str, object], names: bytes, terms: Iterable[str]) -> None:
    """Write the index's ``terms`` with the ``key`` and the session files' ``names`` its view gives."""
    from keeper.store.fsutil import atomic_write

    held = ("\n" + "\n".join(terms) + "\n").encode("utf-8", "surrogatepass")
    header = jsonio.dumps({**key, "names": len(names)}).encode("utf-8", "surrogateescape")
    try:
        atomic_write(_file(project), TAG + header + b"\n" + names + held, durable=False)  # derived: no fsync
    except (OSError, ValueError):
        pass  # only a shortcut: the next search writes it again


def kept_key(project: paths.Project) -> dict[str, object] | None:
    """The key of the gate on disk (its first lines only), or None."""
    try:
        with open(_file(project), "rb") as fh:
            tag, header = fh.readline(), fh.readline()
        key = jsonio.loads(header.decode("utf-8", "surrogateescape")) if tag == TAG else None
    except (OSError, ValueError, RecursionError):
        return None
    return {k: v for k, v in key.items() if k != "names"} if isinstance(key, dict) else None


class Kept:
    """The gate as read from disk: its key, the session files' names, the held terms (one a line,
    between line breaks) and the file's mtime as read (``keeper.hooks.quietprompt`` vouches by it)."""

    __slots__ = ("key", "mtime_ns", "names", "terms")

    def __init__(self, key: dict[str, object], names: bytes, terms: bytes, mtime_ns: int) -> None:
        self.key, self.names, self.terms, self.mtime_ns = key, names, terms, mtime_ns


def _read(project: paths.Project) -> Kept | None:
    try:
        with open(_file(project), "rb") as fh:
            data, mtime_ns = fh.read(), os.fstat(fh.fileno()).st_mtime_ns
    except (OSError, ValueError):
        return None
    if not data.startswith(TAG):
        return None
    header, _, rest = data[len(TAG) :].partition(b"\n")
    try:
        key = jsonio.loads(header.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(key, dict) or type(key.get("names")) is not int:
        return None
    names, terms = rest[: key["names"]], rest[key["names"] :]
    if not terms.startswith(b"\n") or not terms.endswith(b"\n"):
        return None  # cut short
    return Kept({k: v for k, v in key.items() if k != "names"}, names, terms, mtime_ns)


def kept(project: paths.Project, team: bool, session: str) -> Kept | None:
    """The gate on disk when every stamp it rests on still holds for this ``session`` and ``team``."""
    found = _read(project)
    return found if found is not None and _unchanged(project, team, session, (found.key, found.names)) else None


def _stat(path: str | None) -> Stamp:
    try:
        st = os.stat(path) if path else None
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size] if st else None


def _same_names(project: paths.Project, folder: object, names: bytes) -> bool:
    """Whether the sessions folder holds the files the index holds: its time as the index saw it, or
    else (a file replaced, as each Stop replaces the session's own) its listing."""
    from keeper.recall.sources import storable

    try:
        if str(os.stat(project.sessions).st_mtime_ns) == folder:
            return True
        return names_of(n for n in os.listdir(project.sessions) if n.endswith(".md") and storable(n)) == names
    except (OSError, ValueError):
        return False


def _unchanged(project: paths.Project, team: bool, session: str, found: tuple[dict[str, object], bytes]) -> bool:
    """Whether every stamp the gate rests on still holds, for this session, the team notes as they were."""
    from keeper.recall import sources
    from keeper.store import repo

    key, names = found
    sessions, outside = key.get("sessions"), key.get("outside")
    if key.get("session") != session or key.get("team") is not team:
        return False
    if not isinstance(sessions, dict) or not isinstance(outside, dict):
        return False
    if not _same_names(project, key.get("folder"), names):
        return False
    if key.get("native") != folder_stamp(sources.native_dir(project)):
        return False
    if any(_stat(os.path.join(project.sessions, name)) != stamp for name, stamp in sessions.items()):
        return False
    for name, stamp in outside.items():
        path = sources.path_of(project, name)
        st = repo.regular(path) if path else None
        if (None if st is None else [st.st_mtime_ns, st.st_size]) != stamp:
            return False
    return True


def holds_too_few(prompt: str, held: bytes, least: int) -> bool:
    """Whether ``prompt`` asks for no day and holds fewer than ``least`` of the ``held`` terms (one a
    line, between line breaks): then it recalls nothing, whatever ranking does."""
    import time

    from keeper.recall import dates
    from keeper.recall.tokens import date_slots, words

    now = time.localtime()
    if date_slots(prompt, dates.days_from_civil(now.tm_year, now.tm_mon, now.tm_mday))[0]:
        return False  # a day asked for is matched by the dates the memory holds: the search decides
    present = 0
    for term in dict.fromkeys(term for _, term in words(prompt)):
        if b"\n" + term.encode("utf-8", "surrogatepass") + b"\n" in held:
            present += 1
            if present >= least:
                return False
    return True
