"""merge3: two versions of a memory.md against their ancestor, by Keeper's rules (issue 19)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keeper.memory import document, items
from keeper.memory.merge import merge3

BASE = """# Project Memory: api

## Core Decisions

- Use Postgres (2026-01-01)
- Keep money in integer cents (2026-01-01)

## Current State

- Last updated: 2026-01-01 10:00
- Base state

## Recent Context

- 2026-01-01: Base work

## Known Issues

- Flaky login test (2026-01-01)

## Notes

A line I wrote by hand.
"""


def keys(text: str, name: str) -> set[str]:
    return {items.key(t) for t, _ in document.items(text, name)}


def test_a_retirement_on_one_side_stays_gone_and_additions_from_both_are_kept() -> None:
    ours = BASE.replace("- Use Postgres (2026-01-01)\n", "").replace(
        "- Keep money", "- Ship on Fridays (2026-01-02)\n- Keep money"
    )
    theirs = BASE.replace("- Flaky login test (2026-01-01)\n", "- Slow build (2026-01-03)\n")
    merged = merge3(BASE, ours, theirs)
    assert keys(merged, "decisions") == {"keep money in integer cents", "ship on fridays"}
    assert keys(merged, "issues") == {"slow build"}
    assert "A line I wrote by hand." in merged and "<<<<" not in merged


def test_without_an_ancestor_it_is_a_union() -> None:
    ours = BASE.replace("- Use Postgres (2026-01-01)\n", "")
    merged = merge3(None, ours, BASE)
    assert "use postgres" in keys(merged, "decisions")


def test_the_newer_current_state_wins_and_recent_context_goes_by_date() -> None:
    ours = BASE.replace("2026-01-01 10:00\n- Base state", "2026-01-03 09:00\n- Ours is newest").replace(
        "- 2026-01-01: Base work", "- 2026-01-03: Ours\n- 2026-01-01: Base work"
    )
    theirs = BASE.replace("2026-01-01 10:00\n- Base state", "2026-01-02 09:00\n- Theirs").replace(
        "- 2026-01-01: Base work", "- 2026-01-02: Theirs\n- 2026-01-01: Base work"
    )
    for merged in (merge3(BASE, ours, theirs), merge3(BASE, theirs, ours)):
        assert [t for t, _ in document.items(merged, "state")] == ["Last updated: 2026-01-03 09:00", "Ours is newest"]
        assert [t for t, _ in document.items(merged, "recent")] == [
            "2026-01-03: Ours",
            "2026-01-02: Theirs",
            "2026-01-01: Base work",
        ]
    bounded = merge3(BASE, ours, theirs, recent_sessions=2)
    assert [t for t, _ in document.items(bounded, "recent")] == ["2026-01-03: Ours", "2026-01-02: Theirs"]


@pytest.mark.parametrize("both_changed", [False, True])
def test_two_saves_in_the_same_minute_end_with_the_same_current_state_on_both_machines(both_changed: bool) -> None:
    ours = BASE.replace("- Use Postgres (2026-01-01)", "- Use Postgres (2026-01-01)\n- Added on ours (2026-01-01)")
    if both_changed:
        ours = ours.replace("- Base state", "- Ours, the same minute")
    theirs = BASE.replace("- Base state", "- Theirs, the same minute")
    here, there = merge3(BASE, ours, theirs), merge3(BASE, theirs, ours)
    state = [t for t, _ in document.items(here, "state")]
    assert state == [t for t, _ in document.items(there, "state")]  # the two machines converge
    assert len(state) == 2 and state[0] == "Last updated: 2026-01-01 10:00", state
    if not both_changed:
        assert state[1] == "Theirs, the same minute"  # the one side that changed its state since the base
    assert "Added on ours" in here and "Added on ours" in there


def test_a_reconfirmation_on_one_side_travels() -> None:
    theirs = BASE.replace("- Use Postgres (2026-01-01)", "- Use Postgres (2026-02-01)")
    ours = BASE + "\nMore by hand.\n"
    merged = merge3(BASE, ours, theirs)
    assert ("Use Postgres", "2026-02-01") in document.items(merged, "decisions")
    assert "More by hand." in merged


def test_a_section_added_on_either_side_is_kept() -> None:
    theirs = BASE + "\n## Deploy notes\n\nRun make ship.\n"
    merged = merge3(BASE, BASE.replace("Base state", "Base state 2"), theirs)
    assert "## Deploy notes" in merged and "Run make ship." in merged


def test_a_crlf_file_stays_crlf() -> None:
    ours = BASE.replace("\n", "\r\n")
    theirs = BASE.replace("- Slow", "- Slow").replace("## Notes", "## Notes\n\nTheirs by hand.\n")
    merged = merge3(BASE, ours, theirs)
    assert "Theirs by hand.\r\n" in merged


def test_code_blocks_from_both_sides_stay_whole() -> None:
    ours = BASE + "\n```sh\nmake ship\n```\n"
    theirs = BASE + "\n```sh\nmake test\n```\n"
    merged = merge3(BASE, ours, theirs)
    assert "```sh\nmake ship\n```\n" in merged and "```sh\nmake test\n```\n" in merged


@pytest.mark.parametrize("tail", ["## Notes", "## Notes\n- mine"])
def test_a_section_theirs_added_after_our_unended_last_line_starts_a_line_of_its_own(tail: str) -> None:
    base = "# Project Memory: api\n\n## Core Decisions\n\n- Use Postgres\n"
    merged = merge3(base, base + "\n" + tail, base + "\n## Known Issues\n\n- Flaky login\n")
    assert merged == base + "\n" + tail + "\n\n## Known Issues\n\n- Flaky login\n"


LINES = st.sampled_from(
    [
        "- Use Postgres (2026-01-01)",
        "- use postgres",
        "- Use Redis, not Postgres",
        "- Use Postgres, not Redis",
        "- Pin Postgres 15",
        "- Pin Postgres 16",
        "- Do not pin Postgres",
        "Hand-written prose",
        "Another hand line",
        "- 2026-01-02: work",
        "- Last updated: 2026-01-01 10:00",
        "",
        "## Notes",
        "## Core Decisions",
        "## Known Issues",
        "- ~",
        "<<<<<<< HEAD",
        "```",
    ]
)
DOCS = st.lists(LINES, max_size=12).map(lambda lines: "\n".join(lines) + ("\n" if lines else ""))
ODD = st.text(max_size=80)


def unit_keys(text: str) -> set[str]:
    """Every heading, and each item key and hand-written line with the section it stands in."""
    from keeper.markdown import Document
    from keeper.memory.merge import _units

    found = set()
    for section in Document.parse(text).sections:
        head = section.heading.strip() if section.heading is not None else ""
        found.add("h:" + head)
        found |= {head + "|" + u.key for u in _units(section.lines) if u.key}
    return found


@settings(max_examples=300, deadline=None)
@given(DOCS, DOCS)
def test_merging_a_version_with_itself_gives_it_back(base: str, x: str) -> None:
    assert merge3(base, x, x) == x
    assert merge3(None, x, x) == x


@settings(max_examples=300, deadline=None)
@given(DOCS, DOCS, DOCS)
def test_additions_merge_the_same_in_either_order(base: str, x: str, y: str) -> None:
    assert unit_keys(merge3(base, x, y)) == unit_keys(merge3(base, y, x))


@settings(max_examples=300, deadline=None)
@given(DOCS, DOCS, DOCS)
def test_no_merge_resurrects_a_removal_or_loses_an_addition(base: str, x: str, y: str) -> None:
    merged = unit_keys(merge3(base, x, y))
    b, ox, oy = unit_keys(base), unit_keys(x), unit_keys(y)
    removed = {k for k in (b - ox) | (b - oy) if not k.startswith("h:")}  # a heading stays for what was added
    assert not removed & merged  # an item or line removed on either side: gone
    assert ((ox - b) | (oy - b)) <= merged  # added on either side (hand-written lines too): kept
    assert "<<<<<<<" not in merged or "<<<<<<< HEAD" in x + y


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), ODD), ODD, ODD)
def test_any_text_in_gives_a_memory_md_out(base: str | None, x: str, y: str) -> None:
    merged = merge3(base, x, y)
    assert isinstance(merged, str)
    assert merge3(base, merged, merged) == merged


@pytest.mark.parametrize("stamp", ["9999-12-31 23:59", "zzzz"])
def test_a_current_state_dated_in_the_future_never_outranks_a_later_save(stamp: str) -> None:
    """Item 3 of issue 38: a memory.md from elsewhere dated 9999 kept its Current State forever."""
    ours = BASE.replace("2026-01-01 10:00\n- Base state", "2026-01-03 09:00\n- Saved here")
    theirs = BASE.replace("2026-01-01 10:00\n- Base state", f"{stamp}\n- From the future")
    for merged in (merge3(BASE, ours, theirs), merge3(BASE, theirs, ours)):
        assert [t for t, _ in document.items(merged, "state")] == ["Last updated: 2026-01-03 09:00", "Saved here"]
