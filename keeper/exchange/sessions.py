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
    from collections.abc import Collection, Iterable


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
