"""Recall: tokenising identifiers, typo correction, ranking order, and silence when nothing matches."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from keeper import paths, search, tokens


def make_project(tmp_path: Path, files: dict[str, str]) -> paths.Project:
    project = paths.Project(root=str(tmp_path / "repo"), id="repo-1", dir=str(tmp_path / "store"))
    for rel, text in files.items():
        target = Path(project.dir) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return project


def test_tokens_split_identifiers_and_fold_case_and_accents() -> None:
    assert {"order_service", "order", "service"} <= set(tokens.tokenize("order_service"))
    assert {"getuserbyid", "get", "user", "id"} <= set(tokens.tokenize("getUserById"))  # "by" is a stop word
    assert {"src/api/cache.py", "src", "api", "cache", "py"} <= set(tokens.tokenize("src/api/cache.py"))
    assert "cafe" in tokens.tokenize("Café")
    assert tokens.stem("caches") == tokens.stem("caching") == tokens.stem("cached") == "cach"


FILES = {
    "memory.md": "# Project Memory: shop\n\n## Core Decisions\n\n- Money is integer cents everywhere\n",
    "sessions/2026-01-05_0900.md": "# Session 2026-01-05 09:00\n\n## Saves\n\n### 09:30 save\n\nMoved the order_service to async workers.\n",
    "sessions/2026-03-01_1000.md": "# Session 2026-03-01 10:00\n\n## Saves\n\n### 10:10 save\n\nFixed getUserById caching bug in src/api/cache.py\n",
    "sessions/2026-03-02_1100.md": "# Session 2026-03-02 11:00\n\n## Saves\n\n### 11:00 save\n\nWrote docs for the billing page.\n",
}


def test_identifiers_find_their_session(tmp_path: Path) -> None:
    project = make_project(tmp_path, FILES)
    top = search.search(project, "order service", today=date(2026, 3, 5))[0]
    assert top.chunk.path.endswith("2026-01-05_0900.md") and top.chunk.date == "2026-01-05"
    assert "order_service" in top.snippet
    assert search.search(project, "cache.py", today=date(2026, 3, 5))[0].chunk.path.endswith("2026-03-01_1000.md")


def test_typos_are_corrected_against_the_vocabulary(tmp_path: Path) -> None:
    project = make_project(tmp_path, FILES)
    for query in ("integr cents", "intger cnets", "getUserByld cachng"):
        results = search.search(project, query, today=date(2026, 3, 5))
        assert results, query
    assert search.search(project, "intger cnets")[0].chunk.path.endswith("memory.md")


def test_better_matches_rank_first_and_unrelated_queries_find_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path, FILES)
    ranked = search.search(project, "billing docs page", today=date(2026, 3, 5))
    assert ranked[0].chunk.path.endswith("2026-03-02_1100.md")
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert search.search(project, "kubernetes helm chart") == []
    assert search.search(project, "the of and") == []


def test_results_carry_heading_line_and_a_stable_id(tmp_path: Path) -> None:
    project = make_project(tmp_path, FILES)
    first = search.search(project, "integer cents")[0].as_dict()
    again = search.search(project, "integer cents")[0].as_dict()
    assert first["id"] == again["id"] == "memory.md:3"
    assert first["heading"] == "Project Memory: shop > Core Decisions"


def test_day_numbers_count_days_like_datetime() -> None:
    from datetime import date, timedelta

    start = date(1999, 12, 25)
    for offset in range(0, 4000, 37):
        day = start + timedelta(days=offset)
        assert search.day_number(day.isoformat()) - search.day_number(start.isoformat()) == offset
    assert (
        search.day_number("2026-13-01") is None
        and search.day_number("soon") is None
        and search.day_number(None) is None
    )
