"""Each JSON file Keeper keeps is read once into a typed record: any JSON at all reads without an
error (a damaged file is an empty record), a record reads back as it was written, and what earlier
releases wrote is written back byte for byte."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keeper.commands import archive
from keeper.memory import document, items
from keeper.store import config, migrate, pins, projects, removals, resolve, sessions, trash
from keeper.sync import remote
from tests.conftest import REPO

STORES = REPO / "tests" / "fixtures" / "stores"

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
TEXT = st.text(max_size=30)

STATES = st.builds(
    sessions.State,
    activity=st.none() | st.dictionaries(TEXT, JSON, max_size=4),
    facts=st.none() | st.dictionaries(TEXT, st.none() | TEXT, max_size=4),
    file=st.none() | st.from_regex(r"[0-9][0-9A-Za-z_@-]{0,20}\.md", fullmatch=True),
    last_save=st.none() | TEXT,
    offset=st.none() | st.integers(min_value=0),
    reply=st.none() | TEXT,
    transcript=st.none() | TEXT,
)
OWNED_LINES = st.builds(
    document.OwnedLines,
    st.lists(TEXT, max_size=4),
    st.lists(st.builds(document.RecentLine, TEXT, TEXT), max_size=4),
)
# recent (older ones are dropped) and never ahead of this machine's clock (later ones are read as now)
STAMPS = st.datetimes(datetime.utcnow() - timedelta(days=300), datetime.utcnow()).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
)
ENTRIES = st.dictionaries(TEXT.filter(bool), st.tuples(STAMPS, st.booleans()), max_size=4)
REMOVALS = st.builds(removals.Record, ENTRIES, ENTRIES)
KEYS = st.from_regex(r"[a-z0-9]+( [a-z0-9]+)*", fullmatch=True).filter(lambda k: items.key(k) == k)
DAYS = st.dates(date(2000, 1, 1), date.today()).map(date.isoformat)
REMOVED = st.builds(removals.Removed, st.dictionaries(KEYS, DAYS, max_size=4))
ROOT_RECORDS = st.builds(resolve.RootRecord, TEXT, TEXT)
FORMATS = st.builds(migrate.Format, st.integers(min_value=0), st.lists(TEXT, max_size=4), TEXT)
MANIFESTS = st.builds(
    trash.Manifest,
    TEXT,
    TEXT,
    st.lists(TEXT, max_size=3),
    TEXT,
    st.none() | st.floats(allow_nan=False, allow_infinity=False),
)
PINS = st.builds(pins.Pins, st.lists(st.builds(pins.Pin, TEXT, TEXT), max_size=3))
LISTED = st.builds(archive.Listed, TEXT, st.none() | TEXT, st.none() | TEXT, st.integers())
EXPORTS = st.builds(
    archive.Manifest, st.integers(), st.none() | TEXT, TEXT, TEXT, st.lists(LISTED, max_size=3), st.booleans()
)
CACHED = st.builds(
    config.Cached,
    st.none() | st.lists(st.integers(), min_size=2, max_size=2),
    st.dictionaries(TEXT, JSON, max_size=3),
    st.lists(TEXT, max_size=3),
).filter(lambda c: c.stamp is not None or c == config.Cached())  # an entry without a stamp is no entry


@st.composite
def statuses(draw: st.DrawFn) -> remote.Status:
    status = remote.Status()
    status.update(**draw(st.fixed_dictionaries({}, optional=dict.fromkeys(remote.Status.__slots__, TEXT))))
    status.last_sync_epoch = draw(st.none() | st.floats(allow_nan=False, allow_infinity=False))
    return status


# Each record: how to make one, how it is read from parsed JSON, how it is written.
RECORDS: dict[str, tuple[type, st.SearchStrategy[Any], Callable[[object], Any], Callable[[Any], str]]] = {
    "session state": (sessions.State, STATES, sessions.State.parse, sessions.State.dump),
    "owned lines": (document.OwnedLines, OWNED_LINES, document.OwnedLines.parse, document.OwnedLines.dump),
    "removals": (removals.Record, REMOVALS, removals.parse, lambda r: removals.dumps(r).decode("utf-8")),
    "removed items": (removals.Removed, REMOVED, removals.Removed.parse, removals.Removed.dump),
    "root record": (resolve.RootRecord, ROOT_RECORDS, resolve.RootRecord.parse, resolve.RootRecord.dump),
    "store format": (migrate.Format, FORMATS, migrate.Format.parse, migrate.Format.dump),
    "backup manifest": (trash.Manifest, MANIFESTS, trash.Manifest.parse, trash.Manifest.dump),
    "pins": (pins.Pins, PINS, pins.Pins.parse, pins.Pins.dump),
    "export manifest": (archive.Manifest, EXPORTS, archive.Manifest.parse, archive.Manifest.dump),
    "config cache": (config.Cached, CACHED, config.Cached.parse, config.Cached.dump),
    "sync status": (remote.Status, statuses(), remote.Status.parse, remote.Status.dump),
    "sync record": (
        projects.SyncRecord,
        st.builds(projects.SyncRecord, TEXT, TEXT),
        projects.SyncRecord.parse,
        projects.SyncRecord.dump,
    ),
}
# Files earlier releases wrote, by record: each must be written back as it was.
WRITTEN = {
    "session state": "projects/*/state/**/*-*.json",  # state/sessions/ from 0.4.0 on
    "owned lines": "projects/*/state/memory.json",
    "root record": "projects/*/state/project.json",
}


@pytest.mark.parametrize("name", list(RECORDS))
@given(data=st.data())
def test_a_record_reads_back_as_it_was_written(name: str, data: st.DataObject) -> None:
    _, make, parse, dump = RECORDS[name]
    record = data.draw(make)
    assert parse(json.loads(dump(record))) == record


@pytest.mark.parametrize("name", list(RECORDS))
@given(value=JSON)
def test_any_json_reads_as_a_record_without_an_error(name: str, value: object) -> None:
    kind, _, parse, dump = RECORDS[name]
    record = parse(value)
    assert type(record) is kind and isinstance(dump(record), str)  # and it can be written


@pytest.mark.parametrize("name", list(WRITTEN))
def test_what_an_earlier_release_wrote_is_written_back_byte_for_byte(name: str) -> None:
    _, _, parse, dump = RECORDS[name]
    found = sorted(
        path for release in ("0.1.0", "0.2.0", "0.3.0", "0.4.0") for path in (STORES / release).glob(WRITTEN[name])
    )
    assert found
    for path in found:
        text = path.read_text(encoding="utf-8")
        assert dump(parse(json.loads(text))) == text, path


def test_a_damaged_session_state_reads_field_by_field() -> None:
    state = sessions.State.parse({"file": "../../memory.md", "offset": -5, "facts": {"A": 1, "B": "b"}, "reply": 3})
    assert state == sessions.State(facts={"B": "b"})


def test_a_session_state_file_that_is_no_json_object_is_empty(tmp_path: Path) -> None:
    for text in ("[1, 2]", "{", ""):
        (tmp_path / "s.json").write_text(text, encoding="utf-8")
        assert sessions.state_at(str(tmp_path / "s.json")) == sessions.State()
