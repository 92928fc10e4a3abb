"""Whether an arriving session file is one this folder already holds, under whatever name.

A session is one file on every machine: the same session file that arrives again, by an archive or
by sync and under another name (a machine suffix added, or none), is recognised here rather than
kept a second time (``Known``). A session file is known by its text, which records its session id
and start: ids alone are not unique across machines (a save typed outside an agent's session is
``manual-<day>`` on every machine), and two texts of one session are both kept, never one lost.
"""

from __future__ import annotations

import os

from keeper.store import paths
from keeper.store.fsutil import read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping
    from typing import TypeVar

    T = TypeVar("T", str, bytes)  # a session's text, or its bytes in the sync repository


class Known:
    """Session files by text, ``(name, text)`` pairs, the first name of a text kept; a folder's files
    are read only when a text of their size is asked after (``in_folder``)."""

    def __init__(self, files: Iterable[tuple[str, str]] = ()) -> None:
        self._names: dict[str, str] = {}
        self._unread: dict[int, list[str]] = {}  # size in bytes -> files of a folder not read yet
        self._folder = ""
        for name, text in files:
            self.add(name, text)

    def add(self, name: str, text: str) -> None:
        self._names.setdefault(text, name)

    def copy_of(self, text: str) -> str | None:
        """The name of a file here holding exactly ``text``, if there is one."""
        if self._unread:
            size = len(text.encode("utf-8", "surrogateescape"))
            for name in self._unread.pop(size, ()):
                found = read_text(os.path.join(self._folder, name), exact=True)
                if found is not None:
                    self.add(name, found)
        return self._names.get(text)

    @classmethod
    def in_folder(cls, sessions: str, leaving: Collection[str] = ()) -> Known:
        """The session files of a ``sessions`` folder but those ``leaving`` it (being replaced): a stat
        each, and a file read only when a text of its size is looked for (a folder of 10,000
        sessions gets one new one)."""
        known = cls()
        known._folder = sessions
        try:
            entries = sorted(os.scandir(sessions), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            if (
                entry.name not in leaving
                and paths.safe_session_name(entry.name)
                and entry.is_file(follow_symlinks=False)
            ):
                known._unread.setdefault(entry.stat().st_size, []).append(entry.name)
        return known


def supersedes(newer: str, older: str) -> bool:
    """Whether ``older`` is an earlier text of the session ``newer`` holds: the same session id and
    start, its saves the beginning of ``newer``'s, each of its sections in ``newer`` too (its activity
    is an earlier digest of the same transcript). Such a text arriving again (an older archive) is
    not a second session; one with a line of its own among its saves (an edit by hand) is."""
    if newer == older:
        return False
    mine, theirs = _facts(newer), _facts(older)
    return (
        theirs is not None
        and mine is not None
        and mine[0] == theirs[0]
        and mine[1].startswith(theirs[1])
        and theirs[2] <= mine[2]
    )


def _facts(text: str) -> tuple[tuple[str, str], str, set[str]] | None:
    """A session file's id and start, its saves' text, and its section headings; None without an id.
    Line endings are not facts: a file a Windows editor wrote back in CRLF holds the same session."""
    head, _, rest = text.replace("\r\n", "\n").partition("\n## ")
    ids = [line for line in head.splitlines() if line.startswith(("- Session id: ", "- Started: "))]
    if len(ids) != 2:
        return None
    body = "## " + rest if rest else ""
    headings = {line for line in body.splitlines() if line.startswith("## ")}
    saves = body.partition("## Saves\n")[2].split("\n## ", 1)[0] if "## Saves\n" in body else ""
    return (ids[0], ids[1]), saves, headings


FORKED = "-imported"  # a session's other text under a name taken: ``<stem>-imported[-N].md``


def other_name(name: str, tries: int) -> str:
    """A session file's name (``tries`` 0) or its ``tries``-th other name, for a text whose name is
    taken by another: ``<stem>-imported.md``, ``<stem>-imported-2.md`` …; a name in the sync
    repository keeps its maker's ``@machine`` last (``2026-11-24_0930-imported@a1b2c3.md``), so
    the file is ``2026-11-24_0930-imported.md`` on that machine, as an import there names it."""
    if tries == 0:
        return name
    stem, at, maker = name[: -len(".md")].partition("@")
    return f"{stem}{FORKED}{'' if tries == 1 else f'-{tries}'}{at}{maker}.md"


def place(name: str, text: T, holding: Callable[[str], T | None]) -> tuple[str, bool]:
    """Where a session text called ``name`` goes, whatever road brought it, and whether it is there
    already: ``name`` itself or the first other name (``other_name``) that is free or already holds
    this text. ``holding`` says what a name holds (None: free). Nothing already placed is renamed."""
    tries = 0
    while True:
        candidate = other_name(name, tries)
        there = holding(candidate)
        if there is None or there == text:
            return candidate, there is not None
        tries += 1


def recognised(
    arriving: Mapping[str, str], held: Iterable[tuple[str, str]], taken: Collection[str] = ()
) -> dict[str, str]:
    """Each arriving session file (name: text) that ``held`` (``(name, text)`` pairs) holds under
    another name, with that name (the first that holds its text): the same session is sent and kept
    under the one name it already has, never a second time. A name in ``taken`` is no one's to take."""
    known = Known(held)
    found: dict[str, str] = {}
    for name, text in arriving.items():
        other = known.copy_of(text)
        if other is not None and other != name and other not in taken and other not in found.values():
            found[name] = other
    return found
