"""Recall on real conversations: names spelled another way, short names, mistyped date words, and
questions whose answer spans sessions seeing distinct sessions."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keeper.recall import dates, search, tokens
from keeper.recall.chunks import Chunk
from tests.test_search import make_project

TODAY = date(2025, 6, 1)


def chat(day: str, *lines: str) -> str:
    return f"# Session {day} 10:00\n\n## Chat\n\n" + "".join(f"- {line}\n" for line in lines)


def _names(results: list[search.Result]) -> list[str]:
    return list(dict.fromkeys(Path(r.chunk.path).name[:10] for r in results))


FRIENDS = {
    "sessions/2025-01-10_1000.md": chat("2025-01-10", "Maya: Katherine got a job at Spotify!!", "Theo: omg"),
    "sessions/2025-02-11_1000.md": chat("2025-02-11", "Maya: Kathryn adopted a ferret lol"),
    "sessions/2025-03-12_1000.md": chat("2025-03-12", "Theo: karaoke with John tonight"),
    "sessions/2025-04-13_1000.md": chat("2025-04-13", "Theo: same tbh, so tired"),
    "sessions/2025-05-14_1000.md": chat("2025-05-14", "Theo: Jen is moving to Porto"),
    "sessions/2025-05-15_1000.md": chat("2025-05-15", "Maya: Sam went bouldering"),
}


@pytest.mark.parametrize(
    ("question", "day"),
    [
        ("Where did Kathryn get a job?", "2025-01-10"),  # the memory spells her Katherine there
        ("Which pet did Katherine adopt?", "2025-02-11"),
        ("When did Theo do karaoke with Jon?", "2025-03-12"),  # three letters, one more in the memory
    ],
)
def test_a_name_spelled_another_way_finds_what_was_said(tmp_path: Path, question: str, day: str) -> None:
    project = make_project(tmp_path, FRIENDS)
    assert _names(search.search(project, question, today=TODAY))[0] == day


def test_a_short_name_is_not_taken_for_an_english_word_or_another_name(tmp_path: Path) -> None:
    project = make_project(tmp_path, FRIENDS)
    assert _names(search.search(project, "what did Sam do", today=TODAY)) == ["2025-05-15"]  # never "same"
    # Jen is another person: one letter changed is no spelling of Jon, one letter more is (John)
    assert _names(search.search(project, "what did Jon say", today=TODAY)) == ["2025-03-12"]


def test_names_are_words_written_with_a_capital() -> None:
    assert search.names_in("Did Kathryn's dog meet O'Brien and Theo? the iPhone, JSON") == {
        "did",
        "kathryn",
        "brien",
        "theo",
    }


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Janury", "january"),
        ("yesterdy", "yesterday"),
        ("Fridya", "friday"),
        ("weekned", "weekend"),
        ("Agust", "august"),
    ],
)
def test_a_mistyped_date_word_reads_as_the_word(typed: str, meant: str) -> None:
    assert dates.respelled(typed) == meant


@pytest.mark.parametrize("word", ["order", "under", "junior", "great", "months", "report", "settings", "mayor"])
def test_ordinary_words_are_no_date_words(word: str) -> None:
    assert dates.respelled(word) is None


def test_a_mistyped_relative_date_in_a_question_still_resolves() -> None:
    today = dates.days_from_civil(2025, 6, 1)
    assert (
        tokens.date_slots("what did we do yesterdy", today)[0]
        == tokens.date_slots("what did we do yesterday", today)[0]
    )
    assert tokens.date_slots("Janury 19th", today)[0] == tokens.date_slots("January 19th", today)[0]


def _result(path: str, score: float) -> search.Result:
    return search.Result(Chunk(path, "h", 1, "text", None, {}, 1), score, set(), "/", 1.0, 1)


@given(st.lists(st.sampled_from("abcdef"), max_size=30))
def test_one_section_per_session_first_keeps_every_result_and_the_order(paths: list[str]) -> None:
    results = [_result(p, -i) for i, p in enumerate(paths)]
    spread = search._one_per_session(results)
    assert sorted(map(id, spread)) == sorted(map(id, results))
    distinct = list(dict.fromkeys(paths))
    assert [r.chunk.path for r in spread[: len(distinct)]] == distinct
    for path in distinct:  # each session's own sections keep their order
        assert [r for r in spread if r.chunk.path == path] == [r for r in results if r.chunk.path == path]


@pytest.mark.parametrize(
    ("question", "spans"),
    [
        ("how many times did I go to parkrun", True),
        ("what did Maya do after the interview", True),
        ("which cafe did she like more", True),
        ("when did we first talk about the migration", True),
        ("compare the two gyms", True),
        ("where did Kathryn get a job", False),
        ("fix the flaky checkout test", False),
    ],
)
def test_questions_that_span_sessions_are_told_apart(question: str, spans: bool) -> None:
    assert search.spans_sessions(question) is spans


def _saves(day: str, count: int, what: str) -> str:
    return f"# Session {day} 10:00\n\n## Saves\n\n" + "".join(
        f"### 1{i}:00 save\n\n{what} {i}\n\n" for i in range(count)
    )


def test_a_question_that_spans_sessions_sees_distinct_sessions(tmp_path: Path) -> None:
    project = make_project(
        tmp_path,
        {
            "sessions/2025-01-01_1000.md": _saves("2025-01-01", 4, "parkrun with Ana, parkrun times, parkrun again"),
            "sessions/2025-02-01_1000.md": _saves("2025-02-01", 1, "went to parkrun"),
            "sessions/2025-03-01_1000.md": _saves("2025-03-01", 1, "parkrun in the rain"),
            "sessions/2025-04-01_1000.md": _saves("2025-04-01", 1, "nothing about running"),
        },
    )
    spanning = search.search(project, "how many times did I go to parkrun", limit=3, today=TODAY)
    assert len({r.chunk.path for r in spanning}) == 3
    ordinary = search.search(project, "parkrun notes", limit=3, today=TODAY)
    assert len({r.chunk.path for r in ordinary}) < 3  # an ordinary question keeps its best session's sections
