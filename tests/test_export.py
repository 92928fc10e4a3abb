"""``keeper export`` / ``keeper import``: a round trip loses nothing, a merge adds without loss, and
hostile archives write nothing outside Keeper's layout (or nothing at all)."""

from __future__ import annotations

from keeper import memory


def test_merge_file_keeps_a_persons_lines_and_is_idempotent() -> None:
    mine = (
        "# Project Memory: api\n\nIntro by hand.\n\n## Core Decisions\n- Use Postgres (2026-01-01)\n- hand decision\n\n"
        "## Current State\n- Last updated: 2026-03-05 10:00\n- mine is newer\n- a hand note\n"
    )
    theirs = (
        "# Project Memory: api\n\nIntro by hand.\nTheir intro.\n\n## Core Decisions\n- use postgres! (2026-02-01)\n"
        "- Two lines\n  of decision (2026-02-02)\n\n## Current State\n- Last updated: 2026-03-01 10:00\n- older\n\n"
        "## Recent Context\n- 2026-03-01: theirs\n"
    )
    owned = {"state": ["- Last updated: 2026-03-05 10:00", "- mine is newer"], "recent": []}
    their_owned = {
        "state": ["- Last updated: 2026-03-01 10:00", "- older"],
        "recent": [{"session": "x", "line": "- 2026-03-01: theirs"}],
    }
    merged, provenance, report = memory.merge_file(mine, owned, theirs, their_owned)
    assert merged == (
        "# Project Memory: api\n\nIntro by hand.\nTheir intro.\n\n## Core Decisions\n- Use Postgres (2026-01-01)\n"
        "- hand decision\n- Two lines\n  of decision (2026-02-02)\n\n"
        "## Current State\n- Last updated: 2026-03-05 10:00\n- mine is newer\n- a hand note\n\n"
        "## Recent Context\n\n- 2026-03-01: theirs\n"
    )
    assert provenance["state"] == owned["state"] and provenance["recent"] == their_owned["recent"]
    assert (
        report.added == {"Project Memory: api": 1, "Core Decisions": 1, "Recent Context": 1}
        and not report.state_replaced
    )
    assert memory.merge_file(merged, provenance, theirs, their_owned)[0] == merged


def test_merge_file_keeps_crlf_files_crlf() -> None:
    mine = "# Project Memory: api\r\n\r\n## Known Issues\r\n- one\r\n"
    merged, _, _ = memory.merge_file(mine, {}, "## Known Issues\n- two\n", {})
    assert merged == "# Project Memory: api\r\n\r\n## Known Issues\r\n- one\r\n- two\r\n"


def test_merge_file_keeps_near_identical_summaries_of_two_sessions() -> None:
    mine = "## Recent Context\n- 2026-03-02: b work\n- 2026-03-01: base\n"
    merged, _, _ = memory.merge_file(mine, {}, "## Recent Context\n- 2026-03-02: a work\n- 2026-03-01: base\n", {})
    assert merged == "## Recent Context\n- 2026-03-02: b work\n- 2026-03-02: a work\n- 2026-03-01: base\n"
