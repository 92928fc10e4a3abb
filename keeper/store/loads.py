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
    if isinstance(value, list) and len(value) == 4 and all(type(n) is int and n >= 0 for n in value):
        return value
    return None


class Loads:
    """The tally of one project: ``items`` (an item's key, ``memory.items.key`` -> ``[shown, used,
    restated, last]``: keyed as SessionStart knows its items, so it hashes nothing) and the number of
    sessions noted."""

    def __init__(self, data: object = None) -> None:
        found = data if isinstance(data, dict) else {}
        sessions = found.get("sessions")
        self.sessions: int = sessions if type(sessions) is int and sessions >= 0 else 0
        items = found.get("items")
        self.items: dict[str, list[int]] = {}
        for item, value in items.items() if isinstance(items, dict) else ():
            counts = _counts(value)
            if (
                isinstance(item, str) and len(item) <= MAX_KEY and counts is not None
            ):  # a damaged file: what it still holds
                self.items[item] = counts

    def never_used(self, item_key: str) -> bool:
        """Whether ``IDLE_AFTER`` sessions or more were shown the item and none used or restated it."""
        counts = self.items.get(item_key)
        return counts is not None and counts[0] >= IDLE_AFTER and not (counts[1] or counts[2])

    def rank(self, item_key: str, section: str) -> int:
        """``FAVOURED`` when a session used or restated the item within the last ``RECENT``;
        ``IDLE`` when it was ``never_used`` and its section is one of ``DEMOTABLE``; else
        ``NEUTRAL`` (an item not yet judged too). Open issues, the current state and recent context
        are never left out this way, nor feedback and the user's own items, whose use shows in how
        a session works rather than in the words it writes."""
        counts = self.items.get(item_key)
        if counts is None:
            return NEUTRAL
        if counts[1] or counts[2]:
            return FAVOURED if self.sessions - counts[3] < RECENT else NEUTRAL
        return IDLE if section in DEMOTABLE and self.never_used(item_key) else NEUTRAL

    def note(self, shown: Iterable[str] = (), used: Iterable[str] = (), restated: Iterable[str] = ()) -> None:
        """One session's news: items it was shown (a new session when any), used, restated."""
        shown = list(shown)
        if shown:
            self.sessions += 1
        for column, keys in ((0, shown), (1, used), (2, restated)):
            for item in keys:
                if len(item) > MAX_KEY:
                    continue
                counts = self.items.pop(item, None) or [0, 0, 0, 0]
                counts[column] += 1
                if column:
                    counts[3] = self.sessions
                self.items[item] = counts  # the most recently noted last: the first to go are the oldest
        for item in list(self.items)[: max(len(self.items) - MAX_ITEMS, 0)]:
            del self.items[item]


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
