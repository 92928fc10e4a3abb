"""The same memory, exactly: one item identity for saves, retirements and resolutions (issue 19)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keeper.capture import saving
from keeper.cli import main
from keeper.hooks import briefing
from keeper.markdown import Document
from keeper.memory import document, items
from keeper.store import config, identity, paths

NOW = datetime(2026, 11, 21, 10, 0)


def merge(text: str | None, **kwargs: object) -> tuple[str, document.MergeReport]:
    data = document.SaveInput(**kwargs)  # type: ignore[arg-type]
    merged, _, report = document.merge(
        text, document.OwnedLines(), data, project_name="p", session_id="s", now=NOW, recent_sessions=3
    )
    return merged, report


def decisions(text: str) -> list[str]:
    return [t for t, _ in document.items(text, "decisions")]


SWAPPED = [
    ("Store sessions in Redis, not Postgres", "Store sessions in Postgres, not Redis"),
    ("Migrate from MySQL to Postgres", "Migrate from Postgres to MySQL"),
    ("The API calls the worker", "The worker calls the API"),
    ("Tabs over spaces", "Spaces over tabs"),
]


@pytest.mark.parametrize(("first", "second"), SWAPPED)
def test_the_same_words_in_another_order_are_another_decision(first: str, second: str) -> None:
    text, _ = merge(None, decisions=[first])
    text, report = merge(text, decisions=[second])
    assert report.added_decisions == [second] and report.known_decisions == []
    assert decisions(text) == [first, second]


@pytest.mark.parametrize(
    ("written", "again"),
    [
        ("Use Redis for sessions", "Use Re\u200bdis for sessions"),  # a zero-width space
        ("Use Redis for sessions", "Ｕｓｅ Ｒｅｄｉｓ ｆｏｒ ｓｅｓｓｉｏｎｓ"),  # fullwidth letters
        ("Use Redis for sessions", "\ufeffuse  REDIS for sessions."),  # a BOM, case, spacing, a full stop
    ],
)
def test_invisible_and_compatibility_forms_are_the_same_decision(written: str, again: str) -> None:
    text, _ = merge(None, decisions=[written])
    text, report = merge(text, decisions=[again])
    assert report.known_decisions == [again] and decisions(text) == [written]


def test_the_key_folds_only_what_cannot_change_meaning() -> None:
    assert items.key("Use Redis (2026-01-02)") == items.key("use redis") == "use redis"
    assert items.key("~") == "~" and items.key("...") == "..."
    assert items.key("Pin Postgres 15") != items.key("Pin Postgres 16")
    assert items.key("Use the ORM") != items.key("Do not use the ORM")


@pytest.mark.parametrize(
    ("kept", "wanted"),
    [
        ("Cache TTL is 30 seconds", "Cache TTL is 60 seconds"),
        ("Use the ORM for reports", "Do not use the ORM for reports"),
        ("Cache TTL is 30 seconds", "cache"),
        ("Store sessions in Postgres, not Redis", "Store sessions in Redis, not Postgres"),
    ],
)
def test_a_retirement_without_its_target_removes_nothing(kept: str, wanted: str) -> None:
    text, _ = merge(None, decisions=[kept, "Ship on Fridays"])
    after, report = merge(text, retired=[wanted])
    assert decisions(after) == [kept, "Ship on Fridays"]
    assert report.retired == [] and report.unmatched_retired == [wanted]


def test_an_ambiguous_retirement_removes_nothing_and_lists_the_candidates() -> None:
    text, _ = merge(None, decisions=["Use Redis for sessions", "Use Redis for caching"])
    after, report = merge(text, retired=["Use Redis"])
    assert after == text and report.unmatched_retired == ["Use Redis"]
    assert report.candidates == [("Use Redis", ["Use Redis for caching", "Use Redis for sessions"])]
    shown = "\n".join(saving.report_lines(report))
    assert "Use Redis for sessions" in shown and "name one exactly" in shown


def test_a_retirement_removes_the_same_item_or_one_clear_near_match() -> None:
    text, _ = merge(None, decisions=["Use Redis for sessions", "Cache TTL is 30 seconds"])
    after, report = merge(text, retired=["use redis for sessions."])
    assert decisions(after) == ["Cache TTL is 30 seconds"] and len(report.retired) == 1
    after, report = merge(text, retired=["Cache TTL is 30 second"])  # a typo: one clear candidate
    assert decisions(after) == ["Use Redis for sessions"] and len(report.retired) == 1


def test_a_project_save_never_retires_from_the_global_memory(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    main(["save", "--project-dir", str(root), "--global", "--feedback", "Run git hooks before commits"])
    main(["save", "--project-dir", str(root), "--global", "--user", "Writes small commits"])
    text = "retired:\n  - git hooks\n  - commits\n"
    save, _ = saving.read_input(text, [])
    saving.save(identity.make_project(str(root)), config.load(None), save, "s")
    kept = Path(paths.global_memory_file()).read_text(encoding="utf-8")
    assert "Run git hooks before commits" in kept and "Writes small commits" in kept


def test_a_reconfirmed_decision_counts_as_confirmed_now_after_500_saves() -> None:
    text, _ = merge(None, decisions=["Keep money in integer cents"])
    for i in range(500):
        text, _ = merge(text, decisions=[f"Decision number {i} about module {i}"])
    text, report = merge(text, decisions=["Keep money in integer cents"])
    assert report.reconfirmed == ["Keep money in integer cents"]
    assert decisions(text)[-1] == "Keep money in integer cents"
    shown, _ = briefing.select(text, 600)
    assert "Keep money in integer cents" in shown


def test_a_reconfirmed_decision_carries_todays_date() -> None:
    text = "## Core Decisions\n\n- Keep money in integer cents (2025-01-02)\n- Ship on Fridays (2025-03-04)\n"
    text, _ = merge(text, decisions=["keep money in integer cents"])
    assert document.items(text, "decisions") == [
        ("Ship on Fridays", "2025-03-04"),
        ("Keep money in integer cents", "2026-11-21"),
    ]


@pytest.mark.parametrize("value", ["~", "-", "...", "?"])
def test_a_decision_or_issue_of_only_punctuation_is_stored(value: str) -> None:
    text, _ = merge(None, decisions=[value], issues=[value])
    assert decisions(text) == [value] and [t for t, _ in document.items(text, "issues")] == [value]


@pytest.mark.parametrize("summary", ["- starts with a dash", "* starts with a star", "- Decision: not one"])
def test_a_summary_that_looks_like_a_list_item_is_stored_as_written(tmp_path: Path, summary: str) -> None:
    from keeper.hub.build import Session

    root = tmp_path / "api"
    root.mkdir()
    assert main(["save", "--project-dir", str(root), "--summary", summary]) == 0
    project = identity.make_project(str(root))
    path = next(Path(project.sessions).glob("*.md"))
    record = path.read_text(encoding="utf-8")
    assert "\n- Decision:" not in record
    session = Session(0, str(path), record)
    assert summary in session.summaries and not session.saved


words = st.lists(
    st.sampled_from(["use", "redis", "postgres", "for", "the", "cache", "api", "x"]), min_size=2, max_size=6
)


@given(words, st.data())
def test_dedup_never_merges_another_word_order(text: list[str], data: st.DataObject) -> None:
    other = data.draw(st.permutations(text))
    if other != text:
        assert items.key(" ".join(text)) != items.key(" ".join(other))


@given(words, st.integers(0, 999), st.integers(0, 999))
def test_dedup_never_merges_another_number(text: list[str], a: int, b: int) -> None:
    if a != b:
        assert items.key(" ".join([*text, str(a)])) != items.key(" ".join([*text, str(b)]))
        names = [" ".join([*text, str(a)])]
        assert items.find(" ".join([*text, str(b)]), names).found == []


@given(words, st.sampled_from(["not", "never", "don't", "no"]))
def test_dedup_never_merges_a_negation(text: list[str], negation: str) -> None:
    plain = " ".join(text)
    negated = " ".join([negation, *text])
    assert items.key(plain) != items.key(negated)
    assert items.find(negated, [plain]).found == [] and items.find(plain, [negated]).found == []


def test_a_name_whose_words_one_item_alone_holds_names_that_item() -> None:
    issues = ["Flaky login test on CI", "Slow build"]
    assert items.find("flaky login", issues).found == [0]  # was refused: "could be: 'Flaky login test on CI'"
    assert items.find("flaky login", [*issues, issues[0]]).found == [0, 2]  # every copy of it
    assert items.find("Use Redis", ["Use Redis for caching", "Use Redis for sessions"]).found == []
    assert items.find("login", issues).found == []  # one word is no obvious candidate
    assert items.find("use redis", ["never use redis here"]).found == []  # nor one that negates it


def test_document_sections_parse_after_a_move() -> None:
    text, _ = merge(None, decisions=["a thing", "b thing"], issues=["an issue"])
    text, _ = merge(text, decisions=["a thing"])
    assert [s.title for s in Document.parse(text).sections if s.title] == [
        "Project Memory: p",
        "Core Decisions",
        "Current State",
        "Recent Context",
        "Known Issues",
    ]


def test_a_reconfirmed_issue_or_typed_item_counts_as_confirmed_now_too() -> None:
    text = (
        "## Known Issues\n\n- Flaky login test (2025-01-02)\n- Slow build (2025-03-04)\n\n"
        "## Tools\n\n- ripgrep is installed (2025-01-02)\n- fd is installed (2025-03-04)\n"
    )
    text, report = merge(text, issues=["Flaky login test"], typed={"tool": ["ripgrep is installed"]})
    assert [t for t, _ in document.items(text, "issues")] == ["Slow build", "Flaky login test"]
    assert document.items(text, "tool")[-1] == ("ripgrep is installed", "2026-11-21")
    assert sorted(report.reconfirmed) == ["Flaky login test", "ripgrep is installed"]


def test_an_item_of_invisible_characters_alone_is_still_an_item() -> None:
    """A soft hyphen or a zero-width space alone is what was saved: its key is never empty."""
    from keeper.memory import items

    for text in ("\xad", "\u200b", "\ufeff\u200d"):
        assert items.key(text)


def test_two_spellings_differing_only_in_punctuation_are_one_decision() -> None:
    text, _ = merge(None, decisions=["Use Redis for the job queue."])
    text, report = merge(text, decisions=["Use Redis, for the job queue!"])
    assert report.added_decisions == [] and decisions(text) == ["Use Redis for the job queue."]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Pin Postgres 1.10", "Pin Postgres 1 10"),  # a number's own punctuation
        ("Count 1,000 rows", "Count 1 000 rows"),
        ("Ship v2.3.1 first", "Ship v2 3 1 first"),  # a version
        ("Edit src/api/cache.py", "Edit src/api/cache py"),  # a path
        ("Run `make lint, test`", "Run `make lint test`"),  # code
        ("Use a:b as the key", "Use a b as the key"),
    ],
)
def test_punctuation_inside_numbers_versions_paths_and_code_still_counts(one: str, other: str) -> None:
    assert items.key(one) != items.key(other)


MARKS = st.sampled_from(["", "", ",", ".", "!", "?", ";", ":", "…", " ,", " !"])


def punctuated(text: list[str], marks: list[str]) -> str:
    return " ".join(word + mark for word, mark in zip(text, marks))


@given(words, st.data())
def test_punctuation_alone_never_makes_another_item_nor_hides_order_numbers_or_negation(
    text: list[str], data: st.DataObject
) -> None:
    number, other_number = data.draw(st.integers(0, 999)), data.draw(st.integers(0, 999))
    negation = data.draw(st.sampled_from(["not", "never", "don't", "no"]))
    marks = data.draw(st.lists(MARKS, min_size=len(text) + 2, max_size=len(text) + 2))
    plain = items.key(" ".join(text))
    assert items.key(punctuated(text, marks)) == plain == items.key(plain)
    reordered = data.draw(st.permutations(text))
    if reordered != text:
        assert items.key(punctuated(reordered, marks)) != plain
    if number != other_number:
        assert items.key(punctuated([*text, str(number)], marks)) != items.key(" ".join([*text, str(other_number)]))
    assert items.key(punctuated([negation, *text], marks)) != plain


def test_a_removal_recorded_before_punctuation_folded_still_keeps_its_item_out(tmp_path: Path) -> None:
    record = tmp_path / "removed.json"
    record.write_text(json.dumps({"keys": {"use redis, for the job queue": "2026-11-01"}}), encoding="utf-8")
    assert saving.read_removed(str(record)) == {items.key("Use Redis for the job queue."): "2026-11-01"}
