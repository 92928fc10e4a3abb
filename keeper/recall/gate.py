"""Whether a prompt could recall anything, told before the index opens (the SQLite module alone
costs a prompt more than Python's own start).

Automatic recall keeps a section only when it holds at least two of the prompt's terms
(``prompts.MIN_HITS``), and without typo correction a term matches only itself: so a prompt with
fewer than two terms the index holds anywhere recalls nothing, whatever ranking does. After each
search, the index's terms are kept as a Bloom filter in ``state/recall-gate`` (derived, machine-local,
deletable), with the stamps they rest on as the index itself saw them: the sessions folder's time
(a file added, removed or replaced), memory.md, the newest session files, the outside sources
(global, team, Claude Code's auto memory, its folder as it was before the index listed it) and
whether the team notes were on. A prompt first compares those stamps with the files (what the
index's quick check compares, in the same way); on any difference, or a prompt that asks for a
date, or no filter at all, it searches as before. The filter errs only towards searching.

One thing the gate does not see, as the index sees it only in time: an older session file edited
in place (no rename, so the folder keeps its time), which the index finds by a random window of
stats over a few prompts; the gate finds it at the next save, new session or replaced file.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.store import identity, paths

TAG = b"keeper-recall-gate 1\n"
HASHES = 3  # bits per term
BITS_PER_TERM = 16  # with 3 hashes: about 1 term in 500 wrongly present, which only searches
LEAST_BITS = 1 << 13

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    Stamp = list[int] | None  # [mtime_ns, size] of a file, as the index records it


def _file(project: paths.Project) -> str:
    return os.path.join(project.state, paths.RECALL_GATE)


def _positions(term: str, bits: int) -> list[int]:
    digest = identity.sha256_hex(term.encode("utf-8", "surrogatepass"))
    return [int(digest[8 * i : 8 * i + 8], 16) % bits for i in range(HASHES)]


def folder_stamp(folder: str) -> list[int] | None:
    """A folder's and its parent's (type, mtime) by ``lstat``: what says its listing or a link changed."""
    try:
        here, parent = os.lstat(folder), os.lstat(os.path.dirname(folder))
    except (OSError, ValueError):
        return None
    return [here.st_mode, here.st_mtime_ns, parent.st_mode, parent.st_mtime_ns]


def keep(project: paths.Project, key: dict[str, object], terms: Iterable[str], count: int) -> None:
    """Write the filter of ``terms`` (``count`` of them) with the ``key`` the index's view gives."""
    from keeper.store.fsutil import atomic_write

    bits = max(LEAST_BITS, 1 << (count * BITS_PER_TERM - 1).bit_length())
    bitmap = bytearray(bits // 8)
    for term in terms:
        for at in _positions(term, bits):
            bitmap[at >> 3] |= 1 << (at & 7)
    header = jsonio.dumps({**key, "bits": bits}).encode("utf-8", "surrogateescape")
    try:
        atomic_write(_file(project), TAG + header + b"\n" + bytes(bitmap))
    except (OSError, ValueError):
        pass  # only a shortcut: the next search writes it again


def kept_key(project: paths.Project) -> dict[str, object] | None:
    """The key of the filter on disk, or None."""
    found = _read(project)
    return found[0] if found else None


def _read(project: paths.Project) -> tuple[dict[str, object], bytes] | None:
    try:
        with open(_file(project), "rb") as fh:
            data = fh.read()
    except (OSError, ValueError):
        return None
    if not data.startswith(TAG):
        return None
    header, _, bitmap = data[len(TAG) :].partition(b"\n")
    try:
        key = jsonio.loads(header.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(key, dict) or key.get("bits") != len(bitmap) * 8 or not bitmap:
        return None
    return {k: v for k, v in key.items() if k != "bits"}, bitmap


def _stat(path: str | None) -> Stamp:
    try:
        st = os.stat(path) if path else None
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size] if st else None


def _unchanged(project: paths.Project, team: bool, key: dict[str, object]) -> bool:
    """Whether every stamp the filter rests on still holds, and the team notes are as they were."""
    from keeper.recall import sources
    from keeper.store import repo

    sessions, outside = key.get("sessions"), key.get("outside")
    if key.get("team") is not team or not isinstance(sessions, dict) or not isinstance(outside, dict):
        return False
    try:
        folder = str(os.stat(project.sessions).st_mtime_ns)
    except (OSError, ValueError):
        folder = "-"
    if key.get("folder") != folder or key.get("memory") != _stat(project.memory):
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


def nothing_to_recall(project: paths.Project, team: bool, prompt: str, least: int) -> bool:
    """True when ``prompt`` holds fewer than ``least`` terms the index holds, by a filter that still
    rests on the files as they are; False when it may recall, or it cannot be told here."""
    found = _read(project)
    if found is None or not _unchanged(project, team, found[0]):
        return False
    import time

    from keeper.recall import dates
    from keeper.recall.tokens import date_slots, words

    now = time.localtime()
    if date_slots(prompt, dates.days_from_civil(now.tm_year, now.tm_mon, now.tm_mday))[0]:
        return False  # a day asked for is matched by the dates the memory holds: the search decides
    bitmap = found[1]
    bits = len(bitmap) * 8
    present = 0
    for term in dict.fromkeys(term for _, term in words(prompt)):
        if all(bitmap[at >> 3] >> (at & 7) & 1 for at in _positions(term, bits)):
            present += 1
            if present >= least:
                return False
    return True
