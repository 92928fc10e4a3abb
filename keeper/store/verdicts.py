"""The stale check's verdicts, kept between session starts and used only while all they rest on is unchanged.

Every SessionStart asks which items of memory.md may be stale (``provenance.stale_items``): it parses
the provenance record and memory.md, then stats the files the items rest on. The record and
memory.md change at a save, the files far less often than sessions start; so the verdicts are kept
in a derived file of the project's state folder (``paths.STALE_CACHE``: deleting it costs one full
check) beside what they were worked out from: the work tree checked (worktrees share one memory,
not their files), memory.md's text (its digest), the record's ``(mtime_ns, size, inode)``, the time zone
(the reasons carry local dates), the live sessions the check asked about, and every path it
stat'ed with the ``mtime_ns`` it had or that it was gone (the repository's top folder too: which
first folders exist). A start stats those paths again, which is the check's own cost without the
parsing, and takes the verdicts only when every answer is the same; any difference, or a damaged
file, is a miss and the check runs in full.

A file can change again within one tick of its clock with the same size: nothing is kept while an
input the check read is younger than ``GRANULARITY_NS`` (2 s: FAT's tick; others are finer).
"""

from __future__ import annotations

import os
import time

from keeper import __version__, jsonio
from keeper.store import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    Verdict = tuple[str, str, str, str, float]  # an item's key, text, section, why, when (``provenance.Stale``)

FORMAT = 1  # raise it when the check's rules change within a version
GRANULARITY_NS = 2_000_000_000


def cache_file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.STALE_CACHE)


def mtime_ns(path: str) -> int | None:
    """A path's ``st_mtime_ns``; None when it is gone (or cannot be stat'ed)."""
    try:
        return os.stat(path).st_mtime_ns
    except (OSError, ValueError):
        return None


def key(project: paths.Project, text: str) -> dict[str, Any]:
    """What the verdicts on ``text`` (memory.md) rest on besides the paths the check stats and the
    live sessions; taken before the check reads the record, so a save during the check is a miss."""
    from keeper.store.identity import sha256_hex

    try:
        found = os.stat(project.provenance)
        record = [found.st_mtime_ns, found.st_size, found.st_ino]  # Keeper replaces it: a new inode
    except (OSError, ValueError):
        record = [0, -1, 0]
    return {
        "format": FORMAT,
        "version": __version__,
        "checkout": project.checkout,  # worktrees share one memory, not their files
        "text": sha256_hex(text.encode("utf-8", "surrogatepass")),
        "record": record,
        "zone": [os.environ.get("TZ", ""), time.timezone, time.altzone, time.daylight, *time.tzname],
    }


def _verdict(row: object) -> Verdict | None:
    if not isinstance(row, list) or len(row) != 5 or not all(isinstance(v, str) for v in row[:4]):
        return None
    when = row[4]
    return (row[0], row[1], row[2], row[3], float(when)) if isinstance(when, (int, float)) else None


def load(
    project: paths.Project, want: dict[str, Any], live: Iterable[str]
) -> tuple[list[Verdict], dict[str, str]] | None:
    """The kept verdicts, in the check's order, and items' first lines -> keys, when they were worked
    out from ``want`` (``key``) and every path the check stat'ed is as it was; else None."""
    try:
        with open(cache_file(project), encoding="utf-8") as fh:
            kept = jsonio.loads(fh.read())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != want:
        return None
    asked, stats, firsts, rows = (kept.get(k) for k in ("asked", "stats", "firsts", "verdicts"))
    if not (isinstance(asked, list) and isinstance(stats, dict) and isinstance(firsts, dict)):
        return None
    if not all(isinstance(v, str) for v in [*asked, *firsts.values()]):
        return None
    if kept.get("live") != sorted(set(asked) & set(live)):
        return None
    if any(mtime_ns(path) != stamp for path, stamp in stats.items()):
        return None
    verdicts = [_verdict(row) for row in rows] if isinstance(rows, list) else [None]
    if any(v is None for v in verdicts):
        return None
    return [v for v in verdicts if v is not None], firsts


def save(
    project: paths.Project,
    want: dict[str, Any],
    live: Iterable[str],
    asked: Iterable[str],
    stats: dict[str, int | None],
    verdicts: list[Verdict],
    firsts: dict[str, str],
) -> None:
    """Keep the verdicts of a full check of ``want`` (``key``; ``asked``: the sessions whose end it
    looked up; ``stats``: every path it stat'ed, before reading, -> ``mtime_ns`` or None), unless an
    input is too young to trust."""
    newest = max([want["record"][0], *(stamp for stamp in stats.values() if stamp is not None)])
    if newest > time.time_ns() - GRANULARITY_NS:
        return
    ids = sorted(set(asked))
    # newest first: what changed lately is likeliest to change again, so a miss stops after few stats
    stats = dict(sorted(stats.items(), key=lambda kv: -(1 << 63) if kv[1] is None else -kv[1]))
    data: dict[str, object] = {"key": want, "asked": ids, "live": sorted(set(ids) & set(live)), "stats": stats}
    data.update(firsts=firsts, verdicts=[list(v) for v in verdicts])
    path = cache_file(project)
    tmp = os.path.join(project.state, f".{paths.STALE_CACHE}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(tmp, flags, 0o600), "wb") as fh:  # private, like the memory it quotes
            fh.write(jsonio.dumps(data).encode("utf-8", "surrogatepass"))
        try:  # a new name, not a replaced file: on ext4 replacing one makes the rename start writeback
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
