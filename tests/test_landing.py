"""The one landing path (``keeper.exchange.landing``): what arrives by any road lands once, and what
this folder holds that the arrival did not know of is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from keeper.exchange.landing import Incoming, land
from keeper.exchange.sessions import place
from keeper.store import paths

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MEMORY = "# Project Memory: api\n\n## Core Decisions\n- Use FTS5 (2026-11-01)\n"


def _folder(tmp_path: Path) -> paths.Project:
    folder = tmp_path / "store" / "projects" / "api-1"
    (folder / paths.SESSIONS_DIR).mkdir(parents=True)
    return paths.Project("", "api-1", str(folder))


def test_what_arrives_is_bounded_and_redacted_once_as_it_is_made() -> None:
    arrived = Incoming.arrived(
        [],
        MEMORY + f"- token {SECRET}\n",
        {"2026-11-01_0930.md": f"key {SECRET}\n", ".hidden.md": "x", "../up.md": "x"},
    )
    assert SECRET not in (arrived.memory or "") and SECRET not in arrived.sessions["2026-11-01_0930.md"]
    assert sorted(n for n, _ in arrived.refused) == ["../up.md", ".hidden.md"]
    assert list(arrived.sessions) == ["2026-11-01_0930.md"]


def test_a_session_changed_here_while_its_other_text_arrives_is_kept_beside_it(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    here = Path(folder.sessions) / "2026-11-01_0930.md"
    here.write_bytes(b"sent\nand a line added here since\n")  # as Keeper writes: "\n" on every OS
    sent = Incoming(None, {here.name: "sent\n"})
    landed = land(folder, Incoming.arrived([], None, {here.name: "sent\nand the other side's line\n"}), sent)
    assert here.read_text(encoding="utf-8") == "sent\nand a line added here since\n"
    assert landed.renamed == [(here.name, "2026-11-01_0930-imported.md")]
    other = Path(folder.sessions) / "2026-11-01_0930-imported.md"
    assert other.read_text(encoding="utf-8") == "sent\nand the other side's line\n"


def test_a_session_only_the_other_side_changed_is_replaced_and_a_copy_under_another_name_recognised(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    mine, copy = Path(folder.sessions) / "2026-11-01_0930.md", Path(folder.sessions) / "2026-11-02_1000.md"
    mine.write_bytes(b"sent\n")  # as Keeper writes: "\n" on every OS
    copy.write_bytes(b"one session\n")  # as Keeper writes: "\n" on every OS
    arriving = {mine.name: "sent\nand more\n", "2026-11-02_1000@a1b2c3.md": "one session\n"}
    landed = land(folder, Incoming.arrived([], None, arriving), Incoming(None, {mine.name: "sent\n"}))
    assert mine.read_text(encoding="utf-8") == "sent\nand more\n"
    assert landed.identical == ["2026-11-02_1000@a1b2c3.md"]
    assert sorted(p.name for p in Path(folder.sessions).iterdir()) == [mine.name, copy.name]


def test_a_memory_made_here_after_the_sync_read_the_folder_is_merged_not_replaced(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    Path(folder.memory).write_text(MEMORY, encoding="utf-8")
    theirs = "# Project Memory: api\n\n## Core Decisions\n- Tag releases (2026-11-02)\n"
    landed = land(folder, Incoming.arrived([], theirs), Incoming())  # the base held no memory.md
    text = Path(folder.memory).read_text(encoding="utf-8")
    assert landed.memory == "merged" and "Use FTS5" in text and "Tag releases" in text


def test_landing_the_same_arrival_twice_changes_nothing(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    arriving = Incoming.arrived(
        [],
        MEMORY,
        {"2026-11-01_0930.md": "one\n"},
        '{"at": "2026-11-01T09:30:00", "event": "added", "item": "use fts5"}\n',
    )
    first = land(folder, arriving)
    assert first.memory == "created" and first.added == ["2026-11-01_0930.md"]
    before = {p: p.read_bytes() for p in Path(folder.dir).rglob("*") if p.is_file()}
    second = land(folder, arriving)
    assert second.memory == "unchanged" and second.written == [] and second.identical == ["2026-11-01_0930.md"]
    assert {p: p.read_bytes() for p in Path(folder.dir).rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("name", "held", "placed"),
    [
        ("2026-11-01_0930.md", {}, ("2026-11-01_0930.md", False)),
        ("2026-11-01_0930.md", {"2026-11-01_0930.md": "other"}, ("2026-11-01_0930-imported.md", False)),
        (
            "2026-11-01_0930.md",
            {"2026-11-01_0930.md": "other", "2026-11-01_0930-imported.md": "mine"},
            ("2026-11-01_0930-imported.md", True),
        ),
        (
            "2026-11-01_0930@a1b2c3.md",
            {"2026-11-01_0930@a1b2c3.md": "x", "2026-11-01_0930-imported@a1b2c3.md": "y"},
            ("2026-11-01_0930-imported-2@a1b2c3.md", False),
        ),
    ],
)
def test_a_session_text_whose_name_is_taken_takes_the_one_other_name_whatever_the_road(
    name: str, held: dict[str, str], placed: tuple[str, bool]
) -> None:
    assert place(name, "mine", held.get) == placed
    assert place(name, b"mine", lambda n: held[n].encode() if n in held else None) == placed


OLDER = "# Session 2026-11-28 10:26 · api\n\n- Session id: s-1\n- Started: 2026-11-28 10:26\n\n## Saves\n\n### 10:26 save\n\nfirst\n"
NEWER = (
    "# Session 2026-11-28 10:26 · api\n\n- Session id: s-1\n- Started: 2026-11-28 10:26\n- Tool uses: 9 (2 saves)\n\n"
    "## Saves\n\n### 10:26 save\n\nfirst\n\n### 10:40 save\n\nsecond\n\n## Activity\n\n- Prompts (1):\n  1. go\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("held", ["2026-11-28_1026.md", "2026-11-28_1026@b8e3ef.md", "2026-11-28_1026-imported.md"])
def test_an_older_text_of_a_session_held_here_lands_nothing_one_edited_by_hand_lands_beside_it(
    held: str, newline: str, tmp_path: Path
) -> None:
    """The session went on after an archive was made: its older text arriving again (that archive
    imported, here or on another machine) is the same session, whatever name it is held by; an
    older text with a line of its own among its saves is kept beside it, never lost. The held file
    may have been written back in CRLF (a Windows editor): line endings are not what tells."""
    folder = _folder(tmp_path)
    (Path(folder.sessions) / held).write_text(NEWER, encoding="utf-8", newline=newline)
    landed = land(folder, Incoming(sessions={"2026-11-28_1026.md": OLDER}))
    assert landed.identical == ["2026-11-28_1026.md"] and not landed.added and not landed.renamed
    edited = OLDER.replace("first\n", "first\n- a line added by hand\n")
    landed = land(folder, Incoming(sessions={"2026-11-28_1026.md": edited}))
    assert landed.identical == [] and len(landed.added + landed.renamed) == 1


def test_a_session_file_held_under_another_name_is_no_removal() -> None:
    """A session file sent under one name and held now under the name the repository holds it by
    (``sessions.recognised``) was not deleted: recording it as removed trashed it on every machine."""
    from keeper.exchange.removed import noticed
    from keeper.store import removals

    sent = {"projects/k/sessions/1@m1.md": b"one\n", "projects/k/sessions/2@m1.md": b"two\n"}
    held = {"projects/k/sessions/1@m2.md": b"one\n"}
    record = noticed(removals.empty(), {}, sent, held, {}, "projects/k")
    assert removals.removed(record, "sessions") == {"2@m1.md", removals.text_key(b"two\n")}


def test_an_item_held_here_unsent_comes_back_only_when_saved_after_its_removal() -> None:
    """An item this folder holds and had not sent, removed elsewhere, is brought back only when its
    last save here (provenance) is newer than the removal: saved before it (the long run: saved on
    b, carried to a by an archive, deleted by hand on a), the removal stands."""
    from keeper.exchange.removed import noticed
    from keeper.store import removals

    memory = "# Project Memory: p\n\n## Decisions\n\n- Use FTS5\n"
    sent = {"projects/k/memory.md": b"# Project Memory: p\n\n## Decisions\n"}
    theirs = {
        "projects/k/removals.json": removals.dumps(
            removals.Record(items={"use fts5": ("2026-11-28T05:00:00.000000Z", True)})
        )
    }

    def saved(at: str) -> dict[str, bytes]:
        event = f'{{"at": "{at}", "event": "added", "item": "use fts5", "text": "Use FTS5"}}\n'
        return {"projects/k/memory.md": memory.encode(), "projects/k/provenance.jsonl": event.encode()}

    before = noticed(removals.empty(), {}, sent, saved("2026-11-28T04:59:00+00:00"), theirs, "projects/k")
    after = noticed(removals.empty(), {}, sent, saved("2026-11-28T05:01:00+00:00"), theirs, "projects/k")
    unrecorded = noticed(removals.empty(), {}, sent, {"projects/k/memory.md": memory.encode()}, theirs, "projects/k")
    assert removals.removed(before, "items") == {"use fts5"}
    assert removals.removed(after, "items") == removals.removed(unrecorded, "items") == set()


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_save_dated_where_no_utc_time_exists_never_stops_the_sync(at: str) -> None:
    """A provenance line that arrived from elsewhere, dated at the edge of the calendar with an
    offset that moves it past it: read to see whether an item removed elsewhere was saved here
    again, it raised OverflowError, and every sync of the store failed on it. It is no date: read as
    an item held here with no save recorded."""
    from keeper.exchange.removed import noticed
    from keeper.store import removals

    sent = {"projects/k/memory.md": b"# Project Memory: p\n\n## Decisions\n"}
    theirs = {
        "projects/k/removals.json": removals.dumps(
            removals.Record(items={"use fts5": ("2026-11-28T05:00:00.000000Z", True)})
        )
    }
    event = f'{{"at": "{at}", "event": "added", "item": "use fts5", "text": "Use FTS5"}}\n'
    held = {
        "projects/k/memory.md": b"# Project Memory: p\n\n## Decisions\n\n- Use FTS5\n",
        "projects/k/provenance.jsonl": event.encode(),
    }
    found = noticed(removals.empty(), {}, sent, held, theirs, "projects/k")
    unrecorded = noticed(
        removals.empty(), {}, sent, {"projects/k/memory.md": held["projects/k/memory.md"]}, theirs, "projects/k"
    )
    assert removals.removed(found, "items") == removals.removed(unrecorded, "items")


def test_a_session_removed_by_its_text_goes_whatever_name_it_has_in_the_files_exchanged() -> None:
    """A removal names a session file by its name and by its text (``removals.text_key``): the copy
    of the same session another machine sends under its own name goes too (by name alone it came
    back after a clear, found by the state machine with archives)."""
    from keeper.exchange.removed import take_out
    from keeper.store import removals

    record = removals.Record({"1@m1.md": (removals.now(), True), removals.text_key(b"one\n"): (removals.now(), True)})
    files = {
        "projects/k/sessions/1@m2.md": b"one\n",  # the same session, under the machine that made it
        "projects/k/sessions/2@m2.md": b"two\n",
        "projects/j/sessions/1@m2.md": b"one\n",  # another folder's: its own record decides
    }
    take_out(record, files, "projects/k")
    assert sorted(files) == ["projects/j/sessions/1@m2.md", "projects/k/removals.json", "projects/k/sessions/2@m2.md"]


def test_an_arriving_session_whose_text_was_removed_here_stays_out_whatever_its_name(tmp_path: Path) -> None:
    """Every road honours a removal: an archive that still holds a session cleared here (under the
    name it has on the machine that made it) does not bring it back; a restore lets it in again."""
    from keeper.store import removals

    folder = _folder(tmp_path)
    removals.write(folder.dir, removals.Record({removals.text_key(b"cleared\n"): (removals.now(), True)}))
    arriving = Incoming.arrived([], None, {"2026-11-01_0930.md": "cleared\n", "2026-11-02_1000.md": "kept\n"})
    landed = land(folder, arriving)
    assert landed.removed == ["2026-11-01_0930.md"] and landed.added == ["2026-11-02_1000.md"]
    assert sorted(p.name for p in Path(folder.sessions).iterdir()) == ["2026-11-02_1000.md"]
    removals.write(folder.dir, removals.Record({removals.text_key(b"cleared\n"): (removals.now(), False)}))
    assert land(folder, arriving).added == ["2026-11-01_0930.md"]
