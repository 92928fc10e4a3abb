"""Dates as people write them: every numeric and spoken form of a day is the same terms, relative
dates are read against the day they were written (or asked), and recall finds sessions by them."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from keeper.cli import main
from keeper.recall import dates, search, tokens
from tests.helpers import run_hook
from tests.test_search import make_project

DAYS = st.dates(min_value=date(1990, 1, 1), max_value=date(2150, 12, 31))
MONTH_ABBREVIATIONS = [m[:3].title() for m in tokens.MONTHS]


def _number(day: date) -> int:
    return dates.days_from_civil(day.year, day.month, day.day)


def written_forms(day: date) -> list[str]:
    """The forms that name one day whatever the reader's habit (day-first or month-first)."""
    d, m, y, name = day.day, day.month, day.year, tokens.MONTHS[day.month - 1].title()
    forms = [
        f"{d:02d}.{m:02d}.{y}",
        f"{d}.{m}.{y}",
        f"{y}/{m:02d}/{d:02d}",
        f"{y}.{m}.{d}",
        f"{name} {d}, {y}",
        f"{d} {MONTH_ABBREVIATIONS[m - 1]} {y}",
        f"{MONTH_ABBREVIATIONS[m - 1]} {d}{'th' if 4 <= d <= 20 or d % 10 > 3 or d % 10 == 0 else ('st', 'nd', 'rd')[d % 10 - 1]}, {y}",
    ]
    if d > 12 or d == m:  # unambiguous either way round
        forms += [f"{d:02d}/{m:02d}/{y}", f"{m:02d}/{d:02d}/{y}", f"{d}-{m}-{y}"]
        forms += [f"{m}/{d}/{y % 100:02d}"] if 2000 <= y <= 2099 else []  # a two-digit year is this century
    return forms


@given(DAYS)
def test_every_written_form_of_a_day_reads_as_its_date_terms(day: date) -> None:
    iso = day.isoformat()
    wanted = {iso[:7], f"{tokens.MONTHS[day.month - 1]}-{day.day}", tokens.MONTHS[day.month - 1]}
    for form in written_forms(day):
        assert wanted <= set(tokens.tokenize(f"we met on {form} at noon")), form
    for form in written_forms(day)[:4]:  # numeric forms: the whole date, as a session header gives it
        assert set(tokens.date_terms(iso)) <= set(tokens.tokenize(form)), form


@given(st.integers(1, 12), st.integers(1, 12), st.integers(1990, 2150))
def test_a_date_that_reads_both_ways_gives_both_days(first: int, second: int, year: int) -> None:
    readings = set(dates.numeric(f"{first:02d}/{second:02d}/{year}"))
    assert readings == {(year, second, first), (year, first, second)}
    assert set(dates.numeric(f"{first:02d}.{second:02d}.{year}")) == {(year, second, first)}  # dots: day first


@pytest.mark.parametrize(
    "text", ["3.11", "1.2.10", "192.168.1.1", "2.31.0", "10.5", "12345/12", "1/2/3", "v1.2", "19-01"]
)
def test_versions_addresses_and_numbers_are_no_dates(text: str) -> None:
    assert dates.numeric(text) == []
    assert not {t for t in tokens.tokenize(text) if t.startswith(tokens.MONTHS)}


@given(st.integers(-100_000, 100_000))
def test_day_numbers_and_calendar_dates_are_one_to_one(number: int) -> None:
    assert dates.days_from_civil(*dates.civil_from_days(number)) == number
    assert date(1970, 1, 1) + timedelta(days=number) == date(*dates.civil_from_days(number))


def _likeliest(text: str, ref: date) -> list[date]:
    found = dates.relative(text.split(), _number(ref), asked=True)
    return [date(*dates.civil_from_days(max(options, key=lambda o: o[1])[0])) for _, options in found]


@given(DAYS, st.integers(1, 9))
def test_days_and_weeks_ago_count_back_from_the_reference_day(ref: date, count: int) -> None:
    assert _likeliest(f"what did we cook {count} days ago", ref) == [ref - timedelta(days=count)]
    assert _likeliest(f"{count} weeks ago", ref) == [ref - timedelta(weeks=count)]
    assert _likeliest("yesterday", ref) == [ref - timedelta(days=1)]
    assert _likeliest("the day before yesterday", ref) == [ref - timedelta(days=2)]


@given(DAYS, st.sampled_from(range(7)))
def test_last_weekday_is_the_latest_such_day_before(ref: date, weekday: int) -> None:
    (found,) = _likeliest(f"last {tokens.WEEKDAYS[weekday].title()}", ref)
    assert found.weekday() == weekday and 1 <= (ref - found).days <= 7


@given(DAYS)
def test_last_week_month_and_year_are_the_ones_before(ref: date) -> None:
    (week,) = dates.relative(["last", "week"], _number(ref))
    days = [date(*dates.civil_from_days(d)) for d, _ in week[1]]
    assert [d.weekday() for d in days] == list(range(7)) and 1 <= (ref - days[-1]).days <= 7
    (month,) = dates.relative(["last", "month"], _number(ref))
    first = date(*dates.civil_from_days(month[1][0][0]))
    assert first.day == 1 and first < ref.replace(day=1) and (ref.replace(day=1) - first).days <= 31


def test_words_that_only_look_relative_are_not_dates() -> None:
    assert dates.relative(["at", "last", "we", "won", "the", "19th", "game", "last", "time"], 20_000) == []
    assert dates.relative(["the", "last", "of", "the", "3", "days"], 20_000) == []


def test_a_sessions_relative_dates_are_read_against_its_own_date() -> None:
    def terms(text: str, day: str | None) -> set[str]:
        return {term for _, term in tokens.words(text, day)}

    assert {"2024-01-19", "january-19"} <= terms("Yesterday I finally saw Coldplay", "2024-01-20")
    assert "2024-01-19" not in terms("Yesterday I finally saw Coldplay", None)  # no date known: nothing
    assert "january-19" in terms("see you on the 19th", "2024-01-12")


TALK = {
    "sessions/2024-01-19_1000.md": "# Session 2024-01-19 10:00\n\n## Conversation\n\n- Ana: the band was loud tonight\n",
    "sessions/2024-01-20_1000.md": "# Session 2024-01-20 10:00\n\n## Conversation\n\n- Ana: yesterday I saw the band, so loud\n",
    "sessions/2024-01-02_1000.md": "# Session 2024-01-02 10:00\n\n## Conversation\n\n- Ana: the band practised\n",
    "sessions/2024-02-01_1000.md": "# Session 2024-02-01 10:00\n\n## Conversation\n\n- Ana: the band rested\n",
    "sessions/2024-03-05_1000.md": "# Session 2024-03-05 10:00\n\n## Conversation\n\n- Ana: the band toured\n",
    "sessions/2024-03-06_1000.md": "# Session 2024-03-06 10:00\n\n## Conversation\n\n- Ana: notes of 06.02.2024: the band signed\n",
}


def _files(results: list[search.Result]) -> list[str]:
    return list(dict.fromkeys(Path(r.chunk.path).name[:10] for r in results))


@pytest.mark.parametrize(
    "when", ["19.01.2024", "19/01/2024", "01/19/2024", "2024/01/19", "Jan 19th", "the 19th of January"]
)
def test_a_day_asked_in_any_form_finds_what_was_said_on_it_and_about_it(tmp_path: Path, when: str) -> None:
    project = make_project(tmp_path, TALK)
    found = _files(search.search(project, f"the band on {when}", today=date(2024, 3, 10)))
    assert set(found[:2]) == {"2024-01-19", "2024-01-20"}  # the day itself, and "yesterday" the day after


def test_a_date_that_reads_both_ways_finds_both_days_first(tmp_path: Path) -> None:
    project = make_project(tmp_path, TALK)
    found = _files(search.search(project, "the band on 01/02/2024", today=date(2024, 3, 10)))
    assert set(found[:2]) == {"2024-01-02", "2024-02-01"}


def test_a_date_in_the_text_is_found_by_another_form(tmp_path: Path) -> None:
    project = make_project(tmp_path, TALK)
    assert _files(search.search(project, "band February 6th 2024", today=date(2024, 3, 10)))[0] == "2024-03-06"


@pytest.mark.parametrize(
    ("question", "today", "days"),
    [
        ("what about the band yesterday", date(2024, 3, 6), {"2024-03-05"}),
        ("the band two weeks ago", date(2024, 2, 2), {"2024-01-19", "2024-01-20"}),
        ("the band last Friday", date(2024, 1, 23), {"2024-01-19", "2024-01-20"}),  # the 20th said "yesterday"
        ("the band 4 days ago", date(2024, 2, 5), {"2024-02-01"}),
    ],
)
def test_a_relative_day_asked_is_read_against_today(tmp_path: Path, question: str, today: date, days: set[str]) -> None:
    project = make_project(tmp_path, TALK)
    assert set(_files(search.search(project, question, today=today))[: len(days)]) == days


def test_a_dashed_date_that_reads_both_ways_is_read_day_first_before_month_first(tmp_path: Path) -> None:
    project = make_project(tmp_path, TALK)
    dashed = _files(search.search(project, "the band on 02-01-2024", today=date(2024, 3, 10)))
    assert dashed[:2] == ["2024-01-02", "2024-02-01"]  # though the 1st of February is the more recent
    slashed = _files(search.search(project, "the band on 02/01/2024", today=date(2024, 3, 10)))
    assert set(slashed[:2]) == {"2024-02-01", "2024-01-02"}


@pytest.mark.parametrize(
    "prompt", ["march ² please", "what did we do ² days ago", "on the ³rd of May", "2026-1²-01 notes"]
)
def test_a_digit_int_refuses_is_no_date_and_no_crash(prompt: str) -> None:
    """Superscripts are digits to ``str.isdigit`` but not numbers to ``int``: a prompt holding one is read
    without a date from it (it raised ValueError, and the hook logged an error and recalled nothing)."""
    day = dates.days_from_civil(2026, 11, 28)
    tokens.date_slots(prompt, day)
    tokens.words(prompt, day)


# digits of every kind: ASCII, superscript (isdigit, not isdecimal), Arabic-Indic and fullwidth
# (isdecimal: int() reads them), circled and Roman (numeric only), math bold (decimal, outside the BMP)
DIGITS = "0123456789" + "¹²³⁰⁴⁹" + "٠١٢٣٩" + "０１２９" + "①⑨Ⅻ½" + "𝟎𝟏𝟐"
NUMBER = st.text(alphabet=DIGITS, min_size=1, max_size=5)
DATE_WORD = st.sampled_from(
    [
        *tokens.MONTHS,
        *MONTH_ABBREVIATIONS,
        "may",
        "the",
        "of",
        "on",
        "ago",
        "days",
        "weeks",
        "last",
        "yesterday",
        "few",
        "several",
        "st",
        "nd",
        "rd",
        "th",
        "2024",
        "1999",
        "31",
        "7th",
    ]
)
PIECE = st.one_of(NUMBER, DATE_WORD, st.tuples(NUMBER, st.sampled_from(["st", "nd", "th", ""])).map("".join))
DATED = st.lists(
    st.tuples(PIECE, st.sampled_from([" ", " ", "-", "/", ".", ", ", ":", "_"])), min_size=1, max_size=8
).map(lambda parts: "".join(p + s for p, s in parts))


@given(DATED, DATED)
def test_recall_reads_any_number_or_date_without_raising(
    tmp_path_factory: pytest.TempPathFactory, asked: str, said: str
) -> None:
    """Numbers and dates of any digits, in a prompt and in a session file: recall never raises
    ("march 5 20²4": a year of four digits that int() refuses raised ValueError)."""
    day = dates.days_from_civil(2026, 11, 28)
    tokens.date_slots(asked, day)
    tokens.words(asked, day)
    folder = tmp_path_factory.mktemp("dated")
    project = make_project(
        folder,
        {
            "memory.md": f"# Project Memory: x\n\n## Current State\n\n- {said}\n",
            "sessions/2026-11-20_1000.md": f"# Session\n\n## Saves\n\n{said}\n",
        },
    )
    search.search(project, f"{asked} deploy", today=date(2026, 11, 28))
    search.search(project, said, today=date(2026, 11, 28))


@pytest.mark.parametrize("prompt", ["march 5 20²4", "on march 5th 20¹9 we deployed", "5 march 20²4 deploy"])
def test_a_year_int_refuses_is_no_year(prompt: str) -> None:
    day = dates.days_from_civil(2026, 11, 28)
    tokens.date_slots(prompt, day)
    tokens.words(prompt, day)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(DATED)
@example("deployed the ledger on march 5 20²4 again")
def test_the_prompt_hook_reads_any_number_or_date_without_an_error(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], asked: str
) -> None:
    """The prompt hook answers every prompt; the tests fail on any ERROR Keeper logs."""
    if not Path(project_dir, ".keeper-saved").exists():
        assert main(["save", "--summary", "Deployed the ledger on 5 March 2024 and on 2024-03-07."]) == 0
        Path(project_dir, ".keeper-saved").touch()
    capsys.readouterr()
    payload = {"session_id": "s-1", "cwd": str(project_dir), "prompt": f"what about the ledger deploy {asked}"}
    run_hook("user-prompt-submit", payload, monkeypatch, capsys)
