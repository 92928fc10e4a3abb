"""What the sessions this machine started did with each item they were shown: SessionStart's evidence.

For every item the start-up context showed and the use receipts watch (``keeper.capture.receipts``):
in how many sessions it was shown, in how many it was used, how often a save restated it, and when
(counted in sessions) it was last used or restated. SessionStart reads this one small file to put
what sessions use first and to leave to recall what many sessions were shown and none used
(``rank``). It is derived and machine-local (``paths.LOADS``): deleting it loses the ordering's
evidence, never memory; receipts themselves stay in the durable record (``provenance``).
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.store import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

DEMOTABLE = ("decisions", "tool", "reference")  # the sections whose idle items are left to recall (``rank``)
IDLE_AFTER = 5  # sessions an item is shown in, never used nor restated, before it is left to recall
RECENT = 20  # sessions within which a use or a restatement puts an item first in its rank
MAX_ITEMS = 5000  # items kept, the most recently noted
MAX_KEY = 2000  # characters of an item's key: a longer item is not tallied (it loads as it would without)
FAVOURED, NEUTRAL, IDLE = -1, 0, 1  # ``rank``: before the others of its tier, in its place, left to recall


def _file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.LOADS)


def _counts(value: object) -> list[int] | None:
    """``[shown, used, restated, last]`` as whole numbers, or None for anything else."""
    if type(value) is list and len(value) == 4 and [type(n) for n in value] == _INTS and min(value) >= 0:
        return value
    return None


_INTS = [int] * 4


class Loads:
    """The tally of one project: each item's counts (by its key, ``memory.items.key``: keyed as
    SessionStart knows its items, so it hashes nothing) and the number of sessions noted.

    A file from disk is taken as parsed and each item's counts checked when asked for (``counts``):
    a start looks up the items it shows, not all the file holds; a damaged entry reads as none."""

    def __init__(self, data: object = None) -> None:
        found = data if isinstance(data, dict) else {}
        sessions = found.get("sessions")
        self.sessions: int = sessions if type(sessions) is int and sessions >= 0 else 0
        items = found.get("items")
        self.items: dict[str, object] = items if isinstance(items, dict) else {}

    def counts(self, item_key: str) -> list[int] | None:
        """``[shown, used, restated, last]`` of an item; None when it has none (or they are damaged)."""
        return _counts(self.items.get(item_key))

    def never_used(self, item_key: str) -> bool:
        """Whether ``IDLE_AFTER`` sessions or more were shown the item and none used or restated it."""
        counts = self.counts(item_key)
        return counts is not None and counts[0] >= IDLE_AFTER and not (counts[1] or counts[2])

    def rank(self, item_key: str, section: str) -> int:
        """``FAVOURED`` when a session used or restated the item within the last ``RECENT``;
        ``IDLE`` when it was ``never_used`` and its section is one of ``DEMOTABLE``; else
        ``NEUTRAL`` (an item not yet judged too). Open issues, the current state and recent context
        are never left out this way, nor feedback and the user's own items, whose use shows in how
        a session works rather than in the words it writes."""
        value = self.items.get(item_key)
        counts = None if value is None else _counts(value)  # most items of a start: no lookup further
        if counts is None:
            return NEUTRAL
        if counts[1] or counts[2]:
            return FAVOURED if self.sessions - counts[3] < RECENT else NEUTRAL
        return IDLE if section in DEMOTABLE and counts[0] >= IDLE_AFTER else NEUTRAL

    def note(self, shown: Iterable[str] = (), used: Iterable[str] = (), restated: Iterable[str] = ()) -> None:
        """One session's news: items it was shown (a new session when any), used, restated."""
        shown = list(shown)
        if shown:
            self.sessions += 1
        kept = {k: c for k, c in ((k, self.counts(k)) for k in self.items) if c is not None and len(k) <= MAX_KEY}
        for column, keys in ((0, shown), (1, used), (2, restated)):
            for item in keys:
                if len(item) > MAX_KEY:
                    continue
                counts = kept.pop(item, None) or [0, 0, 0, 0]
                counts[column] += 1
                if column:
                    counts[3] = self.sessions
                kept[item] = counts  # the most recently noted last: the first to go are the oldest
        for item in list(kept)[: max(len(kept) - MAX_ITEMS, 0)]:
            del kept[item]
        self.items = dict(kept)


def read(project: paths.Project) -> Loads:
    """The project's tally (empty when there is none or it cannot be read)."""
    try:
        with open(_file(project), encoding="utf-8") as fh:
            return Loads(jsonio.loads(fh.read()))
    except (OSError, ValueError, RecursionError):
        return Loads()


def note(
    project: paths.Project, shown: Iterable[str] = (), used: Iterable[str] = (), restated: Iterable[str] = ()
) -> None:
    """Add one session's news to the tally (call under the project's lock); a tally that cannot be
    written is left as it was: it is evidence for the ordering, never memory."""
    from keeper.store.fsutil import atomic_write

    shown, used, restated = list(shown), list(used), list(restated)
    if not (shown or used or restated):
        return
    tally = read(project)
    tally.note(shown, used, restated)
    try:
        os.makedirs(project.state, exist_ok=True)
        atomic_write(_file(project), jsonio.dumps({"sessions": tally.sessions, "items": tally.items}), durable=False)
    except OSError:
        pass


def idle_items(project: paths.Project, text: str | None) -> list[dict[str, str]]:
    """The items of memory.md (``text``) SessionStart leaves to recall: ``{id, section, text}``."""
    from keeper.store import provenance

    tally = read(project)
    if not text or not tally.items:
        return []
    found = []
    for section, item_key, item, _ in provenance.listed(text):
        if tally.rank(item_key, section) == IDLE:
            found.append({"id": provenance.item_id(item_key), "section": section, "text": item})
    return found
