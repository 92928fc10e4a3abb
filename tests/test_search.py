"""Recall: tokenising identifiers, typo correction, ranking order, and silence when nothing matches."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from keeper.recall import dates, search, tokens
from keeper.recall.stemmer import IRREGULAR, stem
from keeper.store import paths


def make_project(tmp_path: Path, files: dict[str, str]) -> paths.Project:
    project = paths.Project(root=str(tmp_path / "repo"), id="repo-1", dir=str(tmp_path / "store"))
    for rel, text in files.items():
        target = Path(project.dir) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return project


def test_tokens_split_identifiers_and_fold_case_and_accents() -> None:
    assert {"order_service", "order", "servic"} <= set(tokens.tokenize("order_service"))  # parts are stemmed
    assert {"getuserbyid", "get", "user", "id"} <= set(tokens.tokenize("getUserById"))  # "by" is a stop word
    assert {"src/api/cache.py", "src", "api", "cach", "py"} <= set(tokens.tokenize("src/api/cache.py"))
    assert "cafe" in tokens.tokenize("Café")
    assert tokens.stem("caches") == tokens.stem("caching") == tokens.stem("cached") == "cach"


_ASCII_TO_SPACE = str.maketrans({chr(i): " " for i in range(128) if chr(i) not in tokens._IDENT_CHARS})


def _runs_by_characters(text: str) -> list[str]:
    """The runs as read one character at a time: a non-ASCII character that is no letter or digit is
    a space, and so is an ASCII one that is not an identifier's."""
    kept = "".join(c if c.isascii() or c.isalnum() else " " for c in text)
    return kept.translate(_ASCII_TO_SPACE).split()


@given(st.text(st.characters(blacklist_categories=()), max_size=80))
def test_runs_split_as_each_characters_class_says(text: str) -> None:
    """Read through UTF-8 bytes (lone surrogates, accents, CJK, odd spaces and all), the runs are those
    of the text read character by character."""
    assert tokens._runs(text) == _runs_by_characters(text)


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
        assert dates.day_number(day.isoformat()) - dates.day_number(start.isoformat()) == offset
    assert (
        dates.day_number("2026-13-01") is None and dates.day_number("soon") is None and dates.day_number(None) is None
    )


# -- what ranking used to get wrong (issue 12), one test per cause -----------------------------


def test_pronouns_and_function_words_are_not_terms() -> None:
    assert tokens.tokenize("What did his sister tell her about them, and when?") == ["sister", "tell"]


def test_single_characters_are_not_terms_but_numbers_are() -> None:
    assert tokens.tokenize("James's room 7 at 10 s") == ["jame", "room", "10"]


def test_word_forms_meet_in_one_stem_and_names_keep_theirs() -> None:
    stems = {word: tokens.tokenize(word)[0] for word in ("making", "made", "makes", "tried", "trying", "tries")}
    assert stems["making"] == stems["made"] == stems["makes"] == "make"
    assert stems["tried"] == stems["trying"] == stems["tries"]
    assert tokens.tokenize("recommendations") == tokens.tokenize("recommend")
    assert tokens.tokenize("James") != tokens.tokenize("jam")


# Porter2's outputs for an ending of each step (as the Snowball reference stems them), the step's
# endings met too short for its region, and words the prefixes and exceptions decide.
PORTER2 = {
    "reconditional": "recondit", "valenci": "valenc", "hesitanci": "hesit", "digitizer": "digit",
    "conformabli": "conform", "radicalli": "radic", "differentli": "differ", "vileli": "vile",
    "analogousli": "analog", "vietnamization": "vietnam", "predication": "predic", "operator": "oper",
    "feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope", "callousness": "callous",
    "formaliti": "formal", "sensitiviti": "sensit", "sensibiliti": "sensibl", "triplicate": "triplic",
    "formative": "format", "formalize": "formal", "electriciti": "electr", "electrical": "electr",
    "hopeful": "hope", "goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",
    "airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
    "irritant": "irrit", "replacement": "replac", "adjustment": "adjust", "dependent": "depend",
    "adoption": "adopt", "homologou": "homologou", "communism": "communism", "activate": "activ",
    "angulariti": "angular", "effective": "effect", "bowdlerize": "bowdler", "geologist": "geolog",
    "archaeologi": "archaeolog", "fulli": "fulli", "lessli": "lessli", "gently": "gentl", "tional": "tional",
    "ational": "ation", "nation": "nation", "ion": "ion", "ogi": "ogi", "li": "li", "ative": "ativ",
    "runs": "run", "running": "run", "generously": "generous", "interestingly": "interest",
    "pastures": "pastur", "universal": "universal", "communication": "communic", "organizations": "organiz",
    "news": "news", "skies": "sky", "dying": "die", "yearly": "year", "ayes": "aye", "agreed": "agre",
    "feed": "feed", "proceeding": "proceed", "exceedingly": "exceed", "hopping": "hop", "hoped": "hope",
    "luxuriated": "luxuri", "added": "add", "emerging": "emerg", "arsenal": "arsenal", "latered": "latere",
}  # fmt: skip


def test_each_step_of_the_stemmer_takes_its_endings_where_its_region_allows() -> None:
    assert {word: stem(word) for word in PORTER2} == PORTER2


def test_dates_are_found_by_the_words_people_ask_with() -> None:
    dated = set(tokens.tokenize("# Session 2026-11-07 10:00"))
    assert {"november", "november-7", "2026-11", "saturday", "2026"} <= dated
    for asked in ("November 7", "7 November", "Nov 7th", "the 7th of November"):
        assert "november-7" in tokens.tokenize(asked), asked
    assert "2026-11-07" in tokens.tokenize("on November 7, 2026")
    assert "may" not in tokens.tokenize("we may ship it") and "2026-05" in tokens.tokenize("in May 2026")


CHATS = {
    "sessions/2026-11-07_1800.md": "# Session 2026-11-07 18:00 · chat\n\n## Conversation\n\n- Ann: My sister recommended a novel.\n",
    "sessions/2026-11-17_1800.md": "# Session 2026-11-17 18:00 · chat\n\n## Conversation\n\n- Ann: Her brother tried making bread.\n",
    "sessions/2026-10-07_1800.md": "# Session 2026-10-07 18:00 · chat\n\n## Conversation\n\n- Ann: Room 7 was cold; his reward came late.\n",
}


def test_a_day_asked_for_finds_the_session_of_that_date(tmp_path: Path) -> None:
    project = make_project(tmp_path, CHATS)
    for question in ("what did we talk about on November 7", "Nov 7th", "on 7 November 2026"):
        top = search.search(project, question, today=date(2026, 11, 20))[0]
        assert top.chunk.path.endswith("2026-11-07_1800.md"), question
    months = {r.chunk.path[-18:] for r in search.search(project, "in November", today=date(2026, 11, 20))}
    assert months == {"2026-11-07_1800.md", "2026-11-17_1800.md"}


def test_other_word_forms_and_pronouns_rank_the_right_session(tmp_path: Path) -> None:
    project = make_project(tmp_path, CHATS)
    top = search.search(project, "who made bread", today=date(2026, 11, 20))[0]
    assert top.chunk.path.endswith("2026-11-17_1800.md")
    top = search.search(project, "his recommendations", today=date(2026, 11, 20))[0]
    assert top.chunk.path.endswith("2026-11-07_1800.md")  # "his" alone must not carry the October chat


def test_a_real_word_missing_from_the_memory_is_not_corrected_into_another(tmp_path: Path) -> None:
    project = make_project(tmp_path, CHATS)
    assert search.search(project, "regards") == []  # "reward" is there, and close, but "regards" is English
    assert search.search(project, "rewrad")[0].chunk.path.endswith("2026-10-07_1800.md")  # a typo still is


def _counted(text: str, day: str | None) -> tuple[dict[str, int], dict[str, str], int]:
    """What a fresh ``tokens.Counting`` (the index's build) finds in ``text``: terms counted, the
    surface words it met, and their number."""
    counting = tokens.Counting()
    counts, length = counting.count(text, day)
    return counts, counting.surface, length


def test_the_index_counts_the_same_terms_the_tokenizer_finds() -> None:
    """``Counting`` (the index's build) counts in C what ``words`` lists word by word: the same
    terms, counts and surface words, spoken and relative dates included, whether a run is met for
    the first time or again."""
    from collections import Counter

    texts = [
        FILES["sessions/2026-03-01_1000.md"],
        "Met Jon on Nov 7th, 2026 and again yesterday; 19.01.2024 (the 14th of February) two weeks ago",
        "--flag getUserByID getUserByID HTTPServer src/api/cache.py. Café café ÉTÉ İstanbul — made making",
        "jan. Jan 3 may May 5th last Friday today the the the order_service order-service order.service",
    ]
    for text in texts:
        for day in (None, "2026-11-07"):
            listed = tokens.words(text, day)
            assert _counted(text, day) == (Counter(t for _, t in listed), dict(listed), len(listed))
            counting = tokens.Counting()
            counting.count(text + "\n" + text)  # every run met before
            assert counting.count(text, day) == (Counter(t for _, t in listed), len(listed))


PIECES = (  # noqa: SIM905 - a word list reads best as text
    "Nov 7th 2026 jan. May 5 the 14th of February yesterday two weeks ago last Friday , getUserByID "
    "src/api/cache.py. --flag order_service café İstanbul made making 19.01.2024 1/2 \n"
).split(" ")


@given(st.lists(st.sampled_from(PIECES), max_size=30), st.sampled_from([None, "2026-11-07"]))
def test_counted_words_agrees_with_words_on_any_mix(pieces: list[str], day: str | None) -> None:
    from collections import Counter

    text = " ".join(pieces)
    listed = tokens.words(text, day)
    assert _counted(text, day) == (Counter(t for _, t in listed), dict(listed), len(listed))


_WORDS = ("flaky", "checkout", "test", "clock", "freeze", "retry", "budget", "invoice", "exporter", "cache", "deploy")


@given(
    st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12), min_size=1, max_size=5),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12),
    st.lists(st.sampled_from(_WORDS), min_size=2, max_size=6),
    st.sampled_from(["", "again", "first"]),  # "first": a question spanning sessions
)
@settings(max_examples=40, deadline=None)
def test_files_left_out_before_reading_leave_the_other_results_as_they_were(
    sessions: list[list[str]], memory: list[str], prompt: list[str], extra: str
) -> None:
    """Automatic recall drops memory.md's sections (given at start) before their text is read: the
    others come back exactly as when they are dropped afterwards."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        files = {"memory.md": "# Memory\n\n## Decisions\n\n- " + " ".join(memory) + "\n"}
        for n, words in enumerate(sessions):
            half = len(words) // 2
            files[f"sessions/2026-11-{n + 10}_1000.md"] = (
                f"# Session 2026-11-{n + 10} 10:00\n\n## Saves\n\n### 10:30 save\n\n{' '.join(words[:half])}\n\n"
                f"### 11:30 save\n\n{' '.join(words[half:])}\n"
            )
        project = make_project(Path(folder), files)
        query = " ".join([*prompt, extra])

        def memory_file(path: str) -> bool:
            return path.endswith("memory.md")

        def found(**kw: object) -> list[tuple[str, float, str]]:
            results = search.search(project, query, limit=12, thorough=False, correct=False, min_terms=2, **kw)
            return [(r.id, r.score, r.snippet) for r in results if not memory_file(r.chunk.path)]

        assert found(leave_out=memory_file) == found()


_FORMS = (*_WORDS, "tests", "testing", "clocks", "froze", "freezing", "the", "is", "of", "again", "went", "go", "x1")


def _lift_word_by_word(asked: search._Lift, text: str) -> float:
    """The lift as it was made before each distinct word was read once: every word in turn."""
    found = tokens.plain_words(text)
    starts, written = asked.matcher.starts, asked._written
    spots = [i for i, w in enumerate(found) if w in written or w[:3] in starts or w[:2] in starts or w in IRREGULAR]
    for at in spots:
        found[at] = asked.matcher.term(found[at]) or found[at]
    held = set(spots)
    side_by_side = {(found[i], found[i + 1]) for i in spots if i + 1 in held}
    factor = 1 + (search.PHRASE_BOOST - 1) * len(asked.pairs & side_by_side) / len(asked.pairs) if asked.pairs else 1.0
    if asked.near:
        spotted = [(i, found[i]) for i in spots if found[i] in asked.matcher.terms]
        close = asked.near & search._close_pairs(spotted)
        factor *= 1 + (search.PROXIMITY_BOOST - 1) * len(close) / len(asked.near)
    return factor


@given(
    st.lists(st.sampled_from(_FORMS), max_size=8),
    st.lists(st.lists(st.sampled_from(_FORMS), max_size=60), min_size=1, max_size=3),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_the_lift_reads_each_distinct_word_once_and_lifts_as_word_by_word(
    query: list[str], texts: list[list[str]], typo: bool
) -> None:
    terms = [t for _, t in tokens.words(" ".join(query))]
    stand_ins = {t: [(t, 1.0)] for t in terms}
    if typo and terms:  # a typo's stand-in: the query's first term read as another word
        stand_ins[terms[0]] = [("clock", 0.9)]
    asked = search._Lift(" ".join(query), stand_ins)
    for words in texts:  # one _Lift for several texts, as best() lifts the leading results
        text = " ".join(words)
        assert asked.lift(text) == _lift_word_by_word(asked, text)


@given(
    st.lists(st.lists(st.sampled_from((*_FORMS, "order_service", "cache.py")), max_size=8), max_size=12),
    st.sets(st.sampled_from(("test", "clock", "freez", "order_service", "cache.py", "go")), max_size=3),
)
@settings(max_examples=200, deadline=None)
def test_a_snippet_reads_lines_until_it_has_enough_and_shows_what_reading_them_all_did(
    lines: list[list[str]], matched: set[str]
) -> None:
    text = "\n".join(" ".join(line) for line in lines)
    chunk = search.Chunk("s.md", "h", 1, text, None, {}, 0)
    every = [ln.strip() for ln in text.splitlines() if ln.strip()]
    matcher = search._Matcher(matched)
    compound = [t for t in matched if not t.isalnum()]
    hits = [ln for ln in every if matched & set(matcher.sequence(ln)) or any(t in tokens.fold(ln) for t in compound)]
    assert search._snippet(chunk, matched) == "\n".join((hits or every)[: search.SNIPPET_LINES])


def test_a_section_that_repeats_the_querys_words_is_recalled_by_a_prompt_without_hanging(project_dir: Path) -> None:
    """A session file that arrived (by sync, import or by hand) with a pasted log: one section of
    300,000 words, every one a term of the prompt. Telling which terms stand close together took a
    copy of the rest of the section for each word: the prompt's hook ran for many minutes, past
    Claude Code's 10 s, at every prompt that matched it. Run as Claude Code runs the hook."""
    import json
    import os
    import subprocess
    import sys

    from keeper.cli import main
    from keeper.store import identity

    assert main(["save", "--decision", "Orders go through parse_order", "--summary", "parser"]) == 0
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    pasted = Path(project.sessions) / "2026-01-03_0900.md"
    pasted.write_text(
        "# Session 2026-01-03 09:00\n\n## Summary\n\n" + "parse order " * 150_000 + "\n", encoding="utf-8"
    )
    payload = {"session_id": "s1", "cwd": str(project_dir), "prompt": "how does parse_order work"}
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "hook", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        env=dict(os.environ),
        capture_output=True,
        timeout=120,  # a hang's guard, not a measure: the hook answers in about a second
    )
    assert done.returncode == 0
    assert "2026-01-03" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_prompt_with_a_long_paste_is_answered_without_hanging(project_dir: Path) -> None:
    """A prompt holding a pasted log of 20,000 distinct words the memory also holds: automatic recall
    weighed every two of its terms, and the prompt's hook ran for minutes (10,000 words: past a minute) (Claude Code kills it at
    10 s). It searches with the prompt's beginning and end (where a question stands) and answers."""
    import json
    import os
    import random
    import subprocess
    import sys

    from keeper.cli import main
    from keeper.store import identity

    assert main(["save", "--decision", "Refunds are batched nightly by refund_batcher", "--summary", "refunds"]) == 0
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    words = [f"w{i:05d}x" for i in range(20_000)]
    (Path(project.sessions) / "2026-01-03_0900.md").write_text(
        "# Session 2026-01-03 09:00\n\n## Summary\n\n" + " ".join(words) + "\n", encoding="utf-8"
    )
    assert main(["recall", "refund_batcher"]) == 0  # the index is built
    pasted = " ".join(random.Random(7).sample(words, len(words)))  # every pair weighed: minutes on any machine
    prompt = f"{pasted}\n\nWhy does the nightly refund_batcher skip refunds over the limit?"
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "hook", "user-prompt-submit"],
        input=json.dumps({"session_id": "s1", "cwd": str(project_dir), "prompt": prompt}).encode(),
        env=dict(os.environ),
        capture_output=True,
        timeout=60,  # a hang's guard, not a measure: the hook answers in about a second
    )
    assert done.returncode == 0
    assert "2026-01-03" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def _sections_by_document(path: str, text: str, title: str | None = None) -> list[tuple[str, int, str]]:
    """``chunks.sections_of`` as it read files through ``markdown.Document`` (the reference)."""
    import os

    from keeper.markdown import Document
    from keeper.store.sessions import BOOKKEEPING

    doc = Document.parse(text, split_level=3)
    title = title or next((s.title for s in doc.sections if s.level == 1), os.path.basename(path))
    out: list[tuple[str, int, str]] = []
    line = 1
    for section in doc.sections:
        start = line
        line += len(section.lines) + (1 if section.heading is not None else 0)
        kept = [ln for ln in section.lines if ln[:2] != "- " or ln.split(":", 1)[0] not in BOOKKEEPING]
        body = "".join(kept).strip()
        if not body and section.level != 1:
            continue
        out.append((title if section.level <= 1 else f"{title} > {section.title}", start, body or section.title))
    return out


_MARKDOWN_LINES = (
    "# Session 2026-11-07 14:30 · shop",
    "## Saves",
    "### 11:00 save",
    "#### deeper",
    "   ## indented",
    "    # code, not a heading",
    "#hashtag",
    "#",
    "## closed ##",
    "```",
    "```python",
    "~~~",
    "  ```",
    "- Session id: s1",
    "- Tool uses: 3",
    "- Tool uses",
    "- Last reply: kept",
    "- Prompts (1):",
    "  1. look at the cache",
    "text with words",
    "\ufeff# bom",
    "",
    " ",
    "\x0c",
    "\r",
)


@settings(max_examples=400)
@given(
    st.lists(st.sampled_from(_MARKDOWN_LINES), max_size=14),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, "Auto memory: x.md"]),
)
@example(["## Saves", "- Tool uses", "- Tool uses: 3"], "\n", False, False, None)  # only the last line has no ending
@example(["text with words", "- Tool uses"], "\r\n", False, False, None)
def test_sections_are_read_as_the_markdown_document_reads_them(
    lines: list[str], newline: str, final: bool, bom: bool, title: str | None
) -> None:
    """The index's sections (read from the text's lines directly, for speed) are the ones
    ``markdown.Document`` gives: headings, first lines, bodies without bookkeeping, titles."""
    from keeper.recall.chunks import sections_of

    text = ("\ufeff" if bom else "") + newline.join(lines) + (newline if final else "")
    assert sections_of("sessions/2026-11-07_1430.md", text, title) == _sections_by_document(
        "sessions/2026-11-07_1430.md", text, title
    )
