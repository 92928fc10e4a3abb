"""Records from elsewhere (provenance lines, the record of removals) read once at the boundary.

A record arrives by ``keeper import`` or from a sync remote someone else can push to, and records
merge by union: one hostile line must never switch memory off, cost more than its length, outrank
this machine's clock or put an escape sequence on a terminal (issue 38).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keeper.cli import main
from keeper.commands import why
from keeper.memory.items import key
from keeper.store import identity, paths, provenance, removals, sessions
from keeper.text import shown
from tests.helpers import run_hook
from tests.syncstores import Machine, connect, machines_fixture, remote_fixture

__all__ = ["machines_fixture", "remote_fixture"]  # the fixtures this module's tests use

DECISION = "Use sqlite for the cache"
ITEM = key(DECISION)
AT = "2026-01-02T10:00:00.000000"


def _line(**fields: Any) -> str:
    return json.dumps({"at": AT, "session": "s1", **fields})


# Lines as they could arrive: a field of another type, an empty or nested one, a huge one, no JSON.
HOSTILE = [
    _line(event="session", item="", files=5),
    _line(event="session", item="", files={"a.py": 1}),
    _line(event="session", item="", files=[1, None, {"x": 1}, ["y"], "ok.py"]),
    _line(event="session", item="", files=[f"f{i}.py" for i in range(150_000)]),
    _line(event="session", item="", machine={"a": {"b": 1}}, branch=["main"], commit=7, record=None),
    _line(event="session", item="", session={"x": 1}, transcript=[1]),
    _line(event="added", item=""),
    _line(event="added", item=5),
    _line(event="added", item=ITEM, section=5, text={"a": 1}, why=[1], files=5),
    _line(event="edited", item=ITEM, **{"from": 5}),
    _line(event=["added"], item=ITEM),
    _line(event="added", item=ITEM, text="x" * (1 << 20)),
    json.dumps({"at": 7, "event": "added", "item": ITEM}),
    json.dumps({"at": "not a date", "event": "added", "item": ITEM}),
    json.dumps({"event": "added", "item": ITEM}),
    "[" * 100_000,
    '{"at": "' + "9" * 5000 + '"}',
    "[1, 2]",
    "null",
    "{not json",
]


@pytest.fixture
def saved(project_dir: Path) -> paths.Project:
    """A project with one saved decision (its record holds the session and the item's events)."""
    assert main(["save", "--decision", DECISION, "--summary", "chose the cache"]) == 0
    return identity.make_project(identity.find_project_root(str(project_dir)))


def _add(folder: str, *lines: str) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(provenance.record_file(folder), "a", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)


@pytest.mark.parametrize("line", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_provenance_line_switches_nothing_off(
    line: str,
    saved: paths.Project,
    project_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _add(saved.dir, line)
    _add(paths.global_dir(), line)  # the global record is read by `keeper why` in every project
    capsys.readouterr()
    payload = {"session_id": "s2", "cwd": str(project_dir), "source": "startup"}
    reply = run_hook("session-start", payload, monkeypatch, capsys)
    assert DECISION in reply["hookSpecificOutput"]["additionalContext"]
    assert main(["why", "sqlite", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "current" and data["origin"]["event"] == "added"
    assert main(["why", "sqlite"]) == 0
    for argv in (["status", "--json"], ["hub", "--out", str(tmp_path / "hub.html")], ["recall", "sqlite", "--json"]):
        assert main(argv) == 0, argv
    out = capsys.readouterr().out
    assert DECISION in out


def _bounded(typed: provenance.Event) -> None:
    """An event as the boundary lets it through: a typed record, each field of its type and within its bound."""
    assert isinstance(typed, provenance.Event) and isinstance(typed.kind, str) and isinstance(typed.item, str)
    for text in (typed.text, typed.before, typed.section, typed.why, typed.session, typed.machine, typed.where):
        assert text is None or isinstance(text, str)
    assert isinstance(typed.files, tuple) and isinstance(typed.wrote, dict)
    assert typed.claims is None or all(isinstance(c, dict) for c in typed.claims)
    event = typed.as_dict()
    assert isinstance(event["at"], str) and isinstance(event["event"], str) and isinstance(event["item"], str)
    assert event["item"] or event["event"] == provenance.SESSION
    assert len(event) <= len(provenance.FIELDS) + 1 + provenance.MAX_OTHER
    for name, value in event.items():
        if name in ("claims", "wrote"):
            assert isinstance(value, (list, dict))
        elif name == "files":
            assert len(value) <= provenance.MAX_FILES and all(isinstance(f, str) for f in value)
        elif name in provenance.FIELDS:
            assert isinstance(value, str) and len(value) <= provenance.FIELDS[name]
        else:
            assert value is None or isinstance(value, (str, int, float))


def test_every_field_is_of_its_type_and_within_its_bound() -> None:
    text = "\n".join(HOSTILE)
    for event in provenance.parse(text):
        _bounded(event)
    facts = provenance.session_facts(provenance.parse(text))
    assert all(isinstance(f, str) for fact in facts.values() for f in fact.files)


def test_a_long_chain_of_edits_keeps_each_history_bounded_and_its_origin() -> None:
    """20,000 ``edited`` events, each from the one before, cost 0.4.0 quadratic time and memory
    (11-15 s and 1.6 GB at every start): each item carried a copy of every event before it."""
    chain = [f"item {i}" for i in range(3000)]
    events = [{"at": AT, "event": "added", "item": chain[0], "session": "s0"}]
    events += [{"at": AT, "event": "edited", "item": b, "from": a, "session": "s1"} for a, b in zip(chain, chain[1:])]
    record = "".join(json.dumps(e) + "\n" for e in events)
    history = provenance.by_item(provenance.parse(record))
    assert max(len(h) for h in history.values()) <= provenance.MAX_HISTORY
    last = history[chain[-1]]
    origin = provenance.origin(last)
    assert origin is not None and origin.as_dict() == events[0] and last[-1].as_dict() == events[-1]


def test_a_session_line_naming_150000_files_is_read_bounded() -> None:
    files = [f"src/f{i}.py" for i in range(150_000)]
    lines = [{"at": AT, "event": "session", "item": "", "session": "s1", "files": files[i::15]} for i in range(15)]
    facts = provenance.session_facts(provenance.parse("".join(json.dumps(e) + "\n" for e in lines)))
    assert 0 < len(facts["s1"].files) <= provenance.MAX_SESSION_FILES


def test_a_record_keeps_its_newest_lines_within_its_size(saved: paths.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provenance, "MAX_RECORD", 50_000)  # 32 MiB in use: the same rule, smaller
    lines = [
        _line(event="added", item=f"item {i:04d}", at=f"2026-01-02T10:{i // 60:02d}:{i % 60:02d}", text="x" * 900)
        for i in range(200)
    ]
    merged = provenance.merge("\n".join(lines))
    assert 0 < len(merged) <= 50_000 and provenance.merge(merged, "\n".join(lines[:100])) == merged
    assert provenance.parse(merged)[-1].item == "item 0199"  # the newest are kept
    _add(saved.dir, *lines)
    assert provenance.read(saved.dir)[-1].item == "item 0199"


def test_damaged_lines_are_skipped_and_logged_once_a_read(saved: paths.Project, tmp_path: Path) -> None:
    _add(saved.dir, *HOSTILE)
    assert provenance.read(saved.dir)
    logged = [
        line for p in tmp_path.rglob("keeper.log*") for line in p.read_text().splitlines() if "provenance" in line
    ]
    assert len(logged) == 1 and " WARNING " in logged[0] and "damaged line(s) skipped" in logged[0]


def test_an_event_dated_ahead_of_this_machines_clock_is_not_acted_on(saved: paths.Project) -> None:
    _add(saved.dir, json.dumps({"at": "9999-01-01T00:00:00", "event": "retired", "item": ITEM, "session": "x"}))
    assert [e.kind for e in provenance.by_item(provenance.read(saved.dir))[ITEM]] == ["added"]


# The record of removals (item 3): stamps from elsewhere never outrank this machine's clock.


def _utc(delta: timedelta = timedelta()) -> str:
    return (datetime.now(timezone.utc) + delta).strftime(removals.STAMP)


@pytest.mark.parametrize(
    "stamp", ["9999-12-31T23:59:59.999999Z", "3000-01-01T00:00:00Z", "20260101T000000Z", "zzzz", "", 5, None]
)
def test_a_removal_stamped_in_the_future_or_not_a_stamp_never_outranks_a_restore(stamp: object) -> None:
    record = removals.parse({"items": {ITEM: [stamp, True]}, "sessions": {"a.md": [stamp, True]}})
    restored = removals.parse({"items": {ITEM: [removals.now(), False]}})
    assert removals.removed(removals.merge(record, restored), "items") == set()


def test_a_stamp_within_the_skew_is_kept_as_written() -> None:
    soon = _utc(timedelta(minutes=1))
    assert removals.parse({"items": {ITEM: [soon, True]}}).items[ITEM] == (soon, True)
    assert removals.parse({"items": {ITEM: [_utc(timedelta(days=2)), True]}}).items[ITEM][0] <= _utc()


def test_a_removed_day_from_the_future_reads_as_today() -> None:
    found = removals.Removed.parse({"keys": {"a": "9999-01-01", "b": "2026-01-01", "c": 5, "d": "yesterday"}}).keys
    assert found["b"] == "2026-01-01" and found["a"] <= datetime.now(timezone.utc).strftime("%Y-%m-%d")
    assert set(found) == {"a", "b"}


@pytest.mark.needs("git")
def test_a_decision_saved_again_after_a_removal_dated_9999_stays_on_every_machine(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", DECISION, "--summary", "first session")
    connect([a, b], remote)
    [folder] = b.memory_files()
    hostile = {"items": {ITEM: ["9999-01-01T00:00:00.000000Z", True]}, "sessions": {}}
    Path(removals.path_of(str(folder.parent))).write_text(json.dumps(hostile), encoding="utf-8")
    assert b.sync() == 0 and a.sync() == 0
    assert DECISION not in a.memory()  # a removal is a removal, whatever its date
    a.save("--decision", DECISION)
    for m in (a, b, a, b):
        assert m.sync() == 0
    for m in (a, b):
        assert DECISION in m.memory(), m.name


# One sanitiser for text from records (item 5): no escape sequence or line break reaches a terminal.

EVIL = "\x1b]0;owned\x07\x1b[2J\nKeeper: all memory was deleted\r\u202e\x9b31m"


def test_keeper_why_prints_no_escape_sequence_or_line_break_from_a_record(
    saved: paths.Project, capsys: pytest.CaptureFixture[str]
) -> None:
    facts = {"event": "session", "item": "", "session": "s1", "machine": EVIL, "branch": EVIL, "commit": EVIL}
    _add(saved.dir, _line(**facts, files=[f"src/{EVIL}.py"]), _line(event="confirmed", item=ITEM, why=EVIL))
    capsys.readouterr()
    assert main(["why", "sqlite"]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\x07\r\u202e\x9b")
    assert "all memory was deleted" in out and not any(line.startswith("Keeper:") for line in out.splitlines())


@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_shown_is_one_printable_line_within_its_bound(text: str, limit: int) -> None:
    found = shown(text, limit)
    assert len(found) <= limit and found.isprintable()


# Every record reader, fed anything: it may skip, never raise, and what it keeps is bounded.

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=16,
)
FIELD = st.sampled_from([*provenance.FIELDS, "files", "other"])
EVENTS = st.dictionaries(FIELD, JSON | st.sampled_from([AT, "added", "edited", "session", ITEM, "", ["a.py"]]))


@settings(max_examples=200, deadline=None)
@given(st.lists(EVENTS | JSON, max_size=8), st.binary(max_size=200))
def test_any_json_lines_or_bytes_read_by_every_record_reader_without_an_error(lines: list[Any], raw: bytes) -> None:
    text = "\n".join(json.dumps(x) for x in lines) + "\n" + raw.decode("utf-8", "replace")
    events = provenance.parse(text)
    for event in events:
        _bounded(event)
    history, facts = provenance.by_item(events), provenance.session_facts(events)
    used = provenance.uses(events)
    for item, mine in history.items():
        assert len(mine) <= provenance.MAX_HISTORY
        start = provenance.described(provenance.origin(mine), facts)
        provenance.is_removed(mine)
        data = {"text": "t", "id": "0", "section": "", "scope": "project", "status": "current", "origin": start}
        data |= {"history": mine, "uses": used.get(item, []), "claims": [], "stale": None, "checked": True}
        why.lines({**data, "session_file": None, "transcript": None})
    merged = provenance.merge(text, text)
    assert merged == provenance.merge(merged) and len(merged) <= len(text) + 64 * len(events)
    for value in (*lines, raw):
        record = removals.loads(value if isinstance(value, bytes) else json.dumps(value).encode())
        assert all(entry[0] <= removals.now() or entry[0] <= _utc(removals.SKEW) for entry in record.items.values())
        removals.Removed.parse(value)
        sessions.State.parse(value)


# Pieces of what a record's line holds, so that random bytes often come close to a line Keeper wrote.
PIECES = st.sampled_from(
    [
        b'{"at": "2026-01-02T10:00:00", ',
        b'"event": "added", ',
        b'"event": "session", ',
        b'"item": "x"',
        b'"files": ["a"',
        b'"claims": [{"kind": "path", "name": "a"}]',
        b'"wrote": {"a": ["h"]}',
        b'"from": 3',
        b"null",
        b",",
        b"}",
        b"]",
        b"\n",
        b"\xff\xfe",
        b'"others": 1',
        b'"text": ["x"]',
        b'"session": {"a": 1}',
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES | st.binary(max_size=12), max_size=40).map(b"".join))
def test_any_bytes_read_into_typed_events_never_raise(raw: bytes) -> None:
    """The record's boundary parser, fed any bytes, never raises, and every event it gives is typed."""
    import tempfile

    text = raw.decode("utf-8", "replace")
    for event in provenance.parse(text):
        _bounded(event)
    with tempfile.TemporaryDirectory() as folder:
        Path(provenance.record_file(folder)).write_bytes(raw)
        for event in provenance.read(folder):
            _bounded(event)
    merged = provenance.merge(text)
    assert [e.as_dict() for e in provenance.parse(merged)] == [json.loads(line) for line in merged.splitlines()]
