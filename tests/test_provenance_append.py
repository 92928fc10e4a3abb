"""Adding to the provenance record: appended in place when that gives the full merge's bytes.

A save and every Stop that records use receipts add a few events to a record of up to 50,000; the
record is appended to (its inode stays) only while it is exactly what Keeper last wrote (its
seal) and the new lines sort after its last; otherwise it is merged whole. Either way the bytes
are ``merge(current, new)``'s.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.store import paths, provenance

STAMPS = ["2026-11-20T10:00:00.000001+00:00", "2026-11-21T09:30:00.5+01:00", "2026-11-22T18:00:00", "2026-11-23"]


def event(at: str, item: str, kind: str = "used", **more: Any) -> dict[str, Any]:
    return {"at": at, "event": kind, "item": item, "session": "s1", **more}


EVENT = st.builds(
    event,
    st.sampled_from(STAMPS),
    st.text(max_size=6),
    st.sampled_from(["used", "added", "session", "Not a word", ""]),
    other=st.none() | st.integers() | st.text(max_size=4) | st.lists(st.integers(), max_size=2),
    files=st.lists(st.text(max_size=3), max_size=2) | st.integers(),
)


def record(folder: Path) -> Path:
    return Path(provenance.record_file(str(folder)))


def seal(folder: Path) -> Path:
    return folder / paths.STATE_DIR / paths.RECORD_SEAL


def lines_of(events: list[dict[str, Any]]) -> str:
    """The new events as ``append`` hands them to ``merge``."""
    return "".join(provenance._line(e) + "\n" for e in events)


def appended(folder: Path, events: list[dict[str, Any]]) -> bool:
    """Append, and say whether the record was appended to in place (the same file) or rewritten."""
    before = record(folder).stat().st_ino
    provenance.append(str(folder), events)
    return record(folder).stat().st_ino == before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(EVENT, min_size=1, max_size=8),
    st.lists(st.tuples(st.booleans(), st.lists(EVENT, min_size=1, max_size=4)), max_size=4),
    st.integers(min_value=1, max_value=12) | st.just(provenance.KEPT),
    st.integers(min_value=80, max_value=1500) | st.just(provenance.MAX_RECORD),
)
def test_appending_gives_the_bytes_of_the_full_merge_whichever_path_it_takes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: list[dict[str, Any]],
    later: list[tuple[bool, list[dict[str, Any]]]],
    kept: int,
    size: int,
) -> None:
    monkeypatch.setattr(provenance, "KEPT", kept)
    monkeypatch.setattr(provenance, "MAX_RECORD", size)
    sealed, merged = Path(tempfile.mkdtemp(dir=tmp_path)), Path(tempfile.mkdtemp(dir=tmp_path))
    for folder in (sealed, merged):
        provenance.append(str(folder), first)
    assert record(sealed).read_bytes() == provenance.merge(lines_of(first)).encode()
    for day, (now, drawn) in enumerate(later, 1):
        events = [{**e, "at": f"2026-12-{day:02d}T00:00:00Z"} if now else e for e in drawn]  # now: after all
        before = record(sealed).read_text()
        provenance.append(str(sealed), events)
        seal(merged).unlink(missing_ok=True)  # this one always merges whole
        provenance.append(str(merged), events)
        assert record(sealed).read_bytes() == record(merged).read_bytes()
        assert record(sealed).read_text() == provenance.merge(before, lines_of(events))


def test_receipts_after_the_last_event_are_appended_in_place(tmp_path: Path) -> None:
    provenance.append(str(tmp_path), [event(STAMPS[0], "a"), event(STAMPS[0], "b", "added")])
    later = [event("2026-11-27T23:00:00.000001+00:00", item) for item in ("c", "a")]
    before = record(tmp_path).read_text()
    assert appended(tmp_path, later)
    again = [event("2026-11-27T23:00:01+00:00", "c")]
    assert appended(tmp_path, again)
    assert record(tmp_path).read_text() == provenance.merge(before, lines_of(later), lines_of(again)) != before
    assert [e.item for e in provenance.read(str(tmp_path))] == ["b", "a", "a", "c", "c"]  # "added" sorts first


def test_an_event_older_than_the_last_one_is_merged_into_its_place(tmp_path: Path) -> None:
    provenance.append(str(tmp_path), [event(STAMPS[2], "late")])
    assert not appended(tmp_path, [event(STAMPS[0], "synced from a machine behind")])
    assert [e.item for e in provenance.read(str(tmp_path))] == ["synced from a machine behind", "late"]
    assert appended(tmp_path, [event(STAMPS[3], "next")])  # and sealed again


def hand_edit(folder: Path) -> None:
    """The same number of bytes, one line's keys in another order: not what merge writes."""
    text = record(folder).read_text()
    record(folder).write_text(
        text.replace(
            '{"at": "2026-11-20T10:00:00.000001+00:00", "event": "used"',
            '{"event": "used", "at": "2026-11-20T10:00:00.000001+00:00"',
        )
    )


def torn(folder: Path) -> None:
    """An append killed half-way: part of a line, no newline, the seal not moved."""
    with open(record(folder), "a", encoding="utf-8") as fh:
        fh.write(provenance._line(event(STAMPS[3], "torn"))[:30])


def other_version(folder: Path) -> None:
    seal(folder).write_text("0.0.1 " + seal(folder).read_text().split(" ", 1)[1])


@pytest.mark.parametrize(
    "change", [hand_edit, torn, other_version, lambda f: seal(f).unlink(), lambda f: seal(f).write_text("")]
)
def test_a_record_not_as_keeper_sealed_it_is_merged_whole(tmp_path: Path, change: Any) -> None:
    provenance.append(str(tmp_path), [event(STAMPS[0], "a"), event(STAMPS[1], "b")])
    change(tmp_path)
    current = record(tmp_path).read_text()
    assert not appended(tmp_path, [event(STAMPS[3], "c")])
    assert record(tmp_path).read_text() == provenance.merge(current, lines_of([event(STAMPS[3], "c")]))
    assert [e.item for e in provenance.read(str(tmp_path))] == ["a", "b", "c"]  # no torn line glued on
    assert appended(tmp_path, [event("2026-11-24", "d")])


@pytest.mark.parametrize("bound", ["KEPT", "MAX_RECORD"])
def test_a_full_record_loses_its_oldest_lines_as_merge_cuts_them_without_being_parsed(
    tmp_path: Path, bound: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provenance.append(str(tmp_path), [event(STAMPS[0], "a"), event(STAMPS[1], "b")])
    size = len(record(tmp_path).read_bytes())
    monkeypatch.setattr(provenance, bound, 2 if bound == "KEPT" else size + 20)
    current = record(tmp_path).read_text()
    read, real = [], provenance._event

    def counted(line: str) -> dict[str, Any] | None:
        read.append(line)
        return real(line)

    monkeypatch.setattr(provenance, "_event", counted)
    provenance.append(str(tmp_path), [event(STAMPS[3], "c")])
    assert len(read) == 1  # the new line only: the record was not parsed
    assert record(tmp_path).read_text() == provenance.merge(current, lines_of([event(STAMPS[3], "c")]))
    assert [e.item for e in provenance.parse(record(tmp_path).read_text())] == ["b", "c"]


def test_a_record_whose_line_a_next_read_would_skip_is_not_sealed(tmp_path: Path) -> None:
    claims = [{"kind": "path", "name": "x"}] * 8  # each gains ``"in": []`` when read
    huge = event(STAMPS[0], "a", "added", claims=claims)
    room = provenance.MAX_LINE - 40 - len(provenance._line({**huge, "item": "", "text": "", "from": "", "why": ""}))
    wide = "\u00e9" * (room // 18)  # six characters each in the line, three fields
    huge |= {"item": wide, "text": wide, "from": wide, "why": "w" * (room - 18 * len(wide))}
    assert len(provenance._line(huge)) == provenance.MAX_LINE - 40
    provenance.append(str(tmp_path), [huge])
    assert max(map(len, record(tmp_path).read_text().splitlines())) > provenance.MAX_LINE
    assert not seal(tmp_path).exists()
