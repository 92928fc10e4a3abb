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
    from collections.abc import Iterable


class Known:
    """Session files by text, ``(name, text)`` pairs, the first name of a text kept."""

    def __init__(self, files: Iterable[tuple[str, str]] = ()) -> None:
        self._names: dict[str, str] = {}
        for name, text in files:
            self.add(name, text)

    def add(self, name: str, text: str) -> None:
        self._names.setdefault(text, name)

    def copy_of(self, text: str) -> str | None:
        """The name of a file here holding exactly ``text``, if there is one."""
        return self._names.get(text)

    @classmethod
    def in_folder(cls, sessions: str) -> Known:
        """The session files of a ``sessions`` folder, read whole."""
        try:
            names = sorted(n for n in os.listdir(sessions) if paths.safe_session_name(n))
        except OSError:
            names = []
        known = cls()
        for name in names:
            text = read_text(os.path.join(sessions, name), exact=True)
            if text is not None:
                known.add(name, text)
        return known
