"""A Stop with nothing new since the last record, known from a few stats: the record's machinery
(``keeper.capture``: the transcript reader, the redactor, provenance) is not even imported.

Stop fires after every reply, and most replies after the first change nothing the session file
holds. Bringing the record up to date (``keeper.capture.record.update``) is idempotent: with the same
inputs it writes nothing. So when a Stop's update found nothing to write, its inputs are kept as a
key, ``state/sessions/<session>.idle``: the tally's counts, the reply's digest, the transcript
named and every file the update reads or that says the record changed, each by its (mtime, size,
inode). A later Stop whose key is the same would find nothing to write either, and skips it.

Never stale: the key is taken *before* the update that proved it idle, so a write that came
during or after that update changes a stamp the next Stop compares. Anything the key cannot
see (no transcript named, an end marker to clear) gives no key, and the update runs as before.
"""

from __future__ import annotations

import os
import stat

from keeper.store import counters, identity, paths

TAG = "keeper-idle 1"


def _stamp(path: str, regular: bool = False) -> str:
    """A file's (mtime, size, inode), "-" when there is none (or, ``regular``, it is no regular file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return "-"
    return "-" if regular and not stat.S_ISREG(st.st_mode) else f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


def stop_key(project: paths.Project, session: str, seen: bytes, reply: str, transcript: str) -> str | None:
    """What a Stop's update rests on, or None where it cannot be told from stats alone."""
    if not transcript.endswith(".jsonl") or "\n" in transcript:
        return None  # the update would look for another (the state's, the start marker's)
    if os.path.exists(project.session_file(session, "end")):
        return None  # the update clears it: a session thought over turns out alive
    if not os.path.exists(os.path.join(project.state, paths.OPEN_SESSIONS, session)) and os.path.isdir(
        os.path.join(project.state, paths.OPEN_SESSIONS)
    ):
        return None  # the update marks it open again
    held = _stamp(transcript, regular=True)
    if held == "-":
        return None  # the update would look for another transcript
    digest = identity.sha256_hex(reply.encode("utf-8", "surrogatepass"))[:16] if reply.strip() else ""
    files = [project.session_file(session, kind) for kind in ("json", "start", "shown", "receipts")]
    stamps = " ".join(_stamp(path) for path in [*files, project.sessions, project.memory])
    uses = f"{counters.total_uses(seen)}:{counters.saves(seen)}"
    return f"{TAG}\n{uses} {digest} {held} {stamps}\n{transcript}\n"


def unchanged(project: paths.Project, session: str, key: str) -> bool:
    """Whether the last idle Stop of this session rested on exactly ``key``."""
    try:
        with open(project.session_file(session, "idle"), encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read(len(key) + 1) == key
    except (OSError, ValueError):
        return False


def remember(project: paths.Project, session: str, key: str) -> None:
    """Keep ``key``: an update that rested on it found nothing to write."""
    from keeper.store.fsutil import atomic_write

    try:
        atomic_write(project.session_file(session, "idle"), key)
    except (OSError, ValueError):
        pass  # only a shortcut: the next Stop runs the update and tries again
