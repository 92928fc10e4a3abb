"""memory.md merge rules, as the contract fixes them."""

from __future__ import annotations

from datetime import datetime

from keeper.capture import saving
from keeper.markdown import Document
from keeper.memory import document

NOW = datetime(2026, 11, 21, 14, 30)


def merge(
    text: str | None,
    prov: document.OwnedLines | None = None,
    session: str = "s1",
    now: datetime = NOW,
    cap: int = 3,
    **data,
):
    return document.merge(
        text,
        prov or document.OwnedLines(),
        document.SaveInput(**data),
        project_name="api",
        session_id=session,
        now=now,
        recent_sessions=cap,
    )


def section_lines(text: str, title: str) -> list[str]:
    doc = Document.parse(text)
    section = doc.find((title.lower(),))
    assert section is not None, title
    return [line.rstrip("\n") for line in section.lines if line.strip()]


def test_a_new_memory_has_the_four_sections_in_order() -> None:
    text, _, _ = merge(None, summary="first")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# Project Memory: api",
        "## Core Decisions",
        "## Current State",
        "## Recent Context",
        "## Known Issues",
    ]


def test_decisions_are_deduplicated_after_normalising() -> None:
    text, _, report = merge(None, decisions=["Use SQLite FTS5 for search", "use sqlite  FTS5 for search!"])
    assert report.added_decisions == ["Use SQLite FTS5 for search"]
    text, _, report = merge(text, decisions=["Use SQLite FTS5 for search.", "Use Redis for sessions"])
    assert report.known_decisions == ["Use SQLite FTS5 for search."]
    assert report.added_decisions == ["Use Redis for sessions"]
    assert len(section_lines(text, "Core Decisions")) == 2


def test_a_near_duplicate_is_added_and_pointed_out_never_dropped() -> None:
    text, _, _ = merge(None, decisions=["Use SQLite FTS5 for search"])
    text, _, report = merge(text, decisions=["Use SQLite FTS5 for searching"])
    assert report.added_decisions == ["Use SQLite FTS5 for searching"]
    assert report.similar == [("Use SQLite FTS5 for searching", "Use SQLite FTS5 for search")]
    assert any("similar to existing" in line for line in saving.report_lines(report))
    assert len(section_lines(text, "Core Decisions")) == 2


def test_decisions_differing_in_numbers_or_negation_are_both_kept() -> None:
    text, _, _ = merge(None, decisions=["Pin Postgres 15"])
    text, _, report = merge(text, decisions=["Pin Postgres 16", "Do not use an ORM"])
    text, _, report2 = merge(text, decisions=["Use an ORM"])
    assert report.added_decisions == ["Pin Postgres 16", "Do not use an ORM"]
    assert report2.added_decisions == ["Use an ORM"]


def test_decisions_are_never_dropped_by_later_saves() -> None:
    text, prov, _ = merge(None, decisions=["Keep money in integer cents"])
    for i in range(6):
        text, prov, _ = merge(
            text, prov, session=f"s{i}", summary=f"session {i}", state=[f"state {i}"], resolved=["anything"]
        )
    assert "- Keep money in integer cents (2026-11-21)" in text


def test_current_state_is_replaced_and_dated_but_hand_lines_stay() -> None:
    text, prov, _ = merge(None, state=["tests failing", "next: fix the parser"])
    text = text.replace("- next: fix the parser\n", "- next: fix the parser\n- HAND: deploy freeze until Friday\n")
    text, prov, _ = merge(text, prov, now=datetime(2026, 11, 22, 9, 5), state=["tests pass"])
    assert section_lines(text, "Current State") == [
        "- Last updated: 2026-11-22 09:05",
        "- tests pass",
        "- HAND: deploy freeze until Friday",
    ]


def test_recent_context_is_newest_first_one_line_per_session_and_capped() -> None:
    text, prov = None, document.OwnedLines()
    for day in range(1, 6):
        text, prov, _ = merge(text, prov, session=f"s{day}", now=datetime(2026, 11, day), summary=f"work of day {day}")
    text, prov, _ = merge(text, prov, session="s5", now=datetime(2026, 11, 5), summary="day 5, revised")
    assert section_lines(text, "Recent Context") == [
        "- 2026-11-05: day 5, revised",
        "- 2026-11-04: work of day 4",
        "- 2026-11-03: work of day 3",
    ]


def test_a_hand_written_recent_line_is_not_counted_or_dropped() -> None:
    text, prov, _ = merge(None, summary="one", cap=1)
    text = text.replace("## Known Issues", "## Known Issues")  # untouched
    text = text.replace("- 2026-11-21: one\n", "- 2026-11-21: one\n- pinned by hand: read ADR-7 first\n")
    text, prov, _ = merge(text, prov, session="s2", summary="two", cap=1)
    assert section_lines(text, "Recent Context") == ["- 2026-11-21: two", "- pinned by hand: read ADR-7 first"]


def test_issues_are_added_once_and_removed_when_resolved_by_a_clear_near_match() -> None:
    text, _, _ = merge(None, issues=["Login test is flaky on Safari", "Refund rounding off by one cent"])
    text, _, report = merge(text, issues=["login test is flaky on safari"])
    assert report.known_issues == ["login test is flaky on safari"]
    text, _, report = merge(text, resolved=["Login test flaky on Safari"])
    assert report.resolved == ["Login test is flaky on Safari (2026-11-21)"]
    assert section_lines(text, "Known Issues") == ["- Refund rounding off by one cent (2026-11-21)"]


def test_a_resolution_matching_nothing_removes_nothing() -> None:
    text, _, _ = merge(None, issues=["Refund rounding off by one cent"])
    after, _, report = merge(text, resolved=["the websocket reconnect bug"])
    assert report.unmatched == ["the websocket reconnect bug"]
    assert after == text


def test_hand_sections_and_unusual_formatting_survive_byte_for_byte() -> None:
    hand = (
        "\ufeff# Project Memory: api\r\n\r\nIntro written by hand.\r\n\r\n## Team Notes\r\n\t- tabbed line  \r\n"
        "```\r\n## not a heading inside code\r\n```\r\n\r\n## Core Decisions\r\n\r\n- Hand decision\r\n"
    )
    text, _, _ = merge(hand, decisions=["New decision"], summary="did things", issues=["an issue"])
    assert text.startswith(hand[: hand.index("- Hand decision")])
    assert "- Hand decision\r\n- New decision (2026-11-21)\r\n" in text
    assert "## not a heading inside code" in text and "\n" not in text.replace("\r\n", "")
    assert text.startswith("\ufeff")


def test_renamed_sections_are_recognised_by_alias() -> None:
    hand = "# Project Memory: api\n\n## Decisions\n- old one\n\n## Open issues\n- bug A\n"
    text, _, _ = merge(hand, decisions=["new one"], resolved=["bug A"])
    assert text.count("## ") == 2 + text.count("## Current") + text.count("## Recent")
    assert "- old one\n- new one (2026-11-21)\n" in text
    assert "bug A" not in text


def test_missing_provenance_means_nothing_is_removed() -> None:
    text, _, _ = merge(None, state=["old state"], summary="old summary")
    after, _, _ = merge(text, {}, session="s2", state=["new state"], summary="new summary")
    assert "- old state" in after and "old summary" in after and "- new state" in after


def test_overview_counts_what_status_shows() -> None:
    text, _, _ = merge(None, decisions=["a one", "b two"], issues=["c three"], state=["x"], summary="s")
    view = document.overview(text)
    assert (view.decisions, view.issues, view.recent, view.last_updated) == (2, 1, 1, "2026-11-21 14:30")
