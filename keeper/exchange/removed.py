"""What a memory folder removed since it last sent its files, made a recorded fact that travels.

A removal is a recorded fact, never an absence (``keeper.store.removals``): when a folder's files
are exchanged again, what it sent last time and no longer holds is what a person removed here (a
session file deleted or cleared, an item deleted by hand), and what it retired or resolved is in
its machine-local record of retirements. ``noticed`` adds these to the record of removals, and
what it holds again to the restored; ``take_out`` removes from the files being exchanged what that
record says is removed. Plain functions over a folder's files as bytes, by their path in the sync
repository (under ``within``: ``global`` or ``projects/<key>``).
"""

from __future__ import annotations

from datetime import datetime, timezone

from keeper.exchange.landing import acceptable
from keeper.memory.merge import drop_items, item_keys
from keeper.store import paths, provenance, removals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, MutableMapping


def record_path(within: str) -> str:
    """Where a folder's record of removals travels beside its memory.md."""
    return f"{within}/{paths.REMOVALS}"


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def noticed(
    here: removals.Record,
    retired: Mapping[str, str],
    sent: Mapping[str, bytes],
    held: Mapping[str, bytes],
    theirs: Mapping[str, bytes],
    within: str,
    kept: Iterable[bytes] = (),
) -> removals.Record:
    """The record of removals of a folder once it meets another side's: the newest entry of its own
    (``here``), the one it ``sent`` last and ``theirs``, with what it did since it last sent its files
    (``held``: its files now, and ``kept``: the texts of session files it holds but does not send, their
    names looking like a secret): a session file it sent and no longer holds, under any name, is removed,
    by its name and by its text (``removals.text_key``); an item it retired or resolved (``retired``:
    key -> day) is removed unless brought back since; an item of a section Keeper does not roll on
    its own that it sent and no longer holds was deleted by hand; an item removed that it holds
    again, and did not hold when it sent, is brought back."""
    at = record_path(within)
    record = removals.merge(here, removals.loads(sent.get(at)), removals.loads(theirs.get(at)))
    stamp = removals.now()
    sessions = f"{within}/{paths.SESSIONS_DIR}/"
    still: set[bytes] | None = None  # the session texts it holds, read only if one it sent is gone
    for path, data in sent.items():
        if path.startswith(sessions) and path not in held and acceptable(path, data):
            if still is None:
                still = {*(d for p, d in held.items() if p.startswith(sessions)), *kept}
            if data in still:
                continue  # held under another name (the one the repository holds it by): not removed
            for name in (path[len(sessions) :], removals.text_key(data)):  # by its name and its text
                if not record.sessions.get(name, ("", False))[1]:
                    record.sessions[name] = (stamp, True)  # deleted or cleared here since the last exchange
    for key, day in retired.items():
        entry = record.items.get(key)
        if entry is None or (not entry[1] and entry[0][:10] < day):
            record.items[key] = (stamp, True)
    memory = f"{within}/{paths.MEMORY_FILE}"
    ours, was = _text(held.get(memory)), _text(sent.get(memory))
    if ours is None or was is None or ours == was:
        return record
    holds = item_keys(ours)
    for key in item_keys(was, lasting=True) - holds:
        if not record.items.get(key, ("", False))[1]:
            record.items[key] = (stamp, True)  # taken out of memory.md by hand here since the last exchange
    back = removals.removed(record, "items") & holds - item_keys(was)
    added = _added(held.get(f"{within}/{paths.PROVENANCE_FILE}"), back) if back else {}
    for key in back:
        when = added.get(key, stamp)
        if when > record.items[key][0]:
            record.items[key] = (when, False)  # added here again since the last exchange
    return record


def _added(record: bytes | None, keys: set[str]) -> dict[str, str]:
    """When each of ``keys`` was last saved (``provenance.EVIDENCE``), as a removal's stamp: an item
    saved here before another machine removed it, and not sent since, is not brought back by it."""
    found: dict[str, str] = {}
    for event in provenance.parse(_text(record)):
        if event.item in keys and event.kind in provenance.EVIDENCE:
            try:  # to the microsecond, as a removal is stamped (a naive time is this machine's)
                stamp = datetime.fromisoformat(event.at).astimezone(timezone.utc).strftime(removals.STAMP)
            except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 moved past it by its offset
                continue
            found[event.item] = max(found.get(event.item, ""), stamp)
    return found


def take_out(record: removals.Record, files: MutableMapping[str, bytes], within: str) -> None:
    """Remove from a folder's ``files`` what ``record`` says is removed (session files by name or
    by text, under whatever name they arrived; items of memory.md by key), and put the record
    beside them when it holds anything or was there."""
    sessions = f"{within}/{paths.SESSIONS_DIR}/"
    for name in removals.removed(record, "sessions"):
        files.pop(sessions + name, None)
    texts = removals.texts_removed(record)
    for path in [p for p in files if p.startswith(sessions)] if texts else ():
        if removals.holds_text(texts, files[path]):
            del files[path]
    gone = removals.removed(record, "items")
    memory = f"{within}/{paths.MEMORY_FILE}"
    if gone and memory in files:
        text = _text(files[memory]) or ""
        kept = drop_items(text, gone)
        if kept != text:
            files[memory] = kept.encode("utf-8", "surrogateescape")
    at = record_path(within)
    if record != removals.empty() or at in files:
        files[at] = removals.dumps(record)
