"""Keeper's save format: every value comes back exactly as written, and nothing is ever lost."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from keeper.capture.saveformat import ParsedSave, parse, rules, template
from keeper.memory.savekeys import KNOWN_KEYS, LIST_KEYS, TEXT_KEYS

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Values YAML would type, trim, split or reject; each must come back byte for byte.
HOSTILE = [
    "PR #42 open, waiting on review",
    "# a value that looks like a comment",
    "a: b # c",
    "Use Redis SCAN, not KEYS: KEYS blocks the server",
    "key: value",
    "summary: a key lookalike",
    "'single quoted'",
    '"double quoted"',
    "it's \"mixed\" 'quotes'",
    "'unclosed",
    "yes",
    "no",
    "null",
    "~",
    "true",
    "False",
    "1.10",
    "0x1F",
    "1e3",
    "010",
    "{braces}",
    "{a: 1, b: [2]}",
    "[brackets]",
    "[unclosed",
    "{unclosed",
    "}",
    "C:\\Users\\ana\\x",
    "\\n is not a newline, \\t not a tab",
    "- leading dash",
    "-5 degrees",
    "--flag",
    "* star",
    "*alias",
    "> quote",
    "| pipes",
    "|",
    ">",
    ">-",
    "!tag",
    "&anchor",
    "@decorator",
    "`code` in backticks",
    "%YAML 1.2",
    "---",
    "...",
    "?",
    "= sign",
    "def f(x): return {'a': [1, 2]}  # code",
    "SELECT * FROM t WHERE a = 'x';",
    "中文，日本語のテキストと한국어",
    "emoji 🎉 and 👩‍💻 joined",
    "trailing spaces   ",
    "  leading spaces",
    "tab\there",
    "\x0bvertical tab and \x0c form feed",
    "next line\x85and\u2028line and\u2029paragraph separators",
    "\x1c\x1d\x1e information separators",
    "carriage\rreturn inside",
]


def ids(values: list[str]) -> list[str]:
    return [ascii(v)[1:-1][:30] for v in values]


# --- every character family, in every place a value can be written ----------------------------


@pytest.mark.parametrize("value", HOSTILE, ids=ids(HOSTILE))
def test_summary_value_is_kept_exactly(value: str) -> None:
    parsed = parse(f"summary: {value}\nstate:\n  - next\n")
    assert parsed.values == {"summary": value, "state": ["next"]}
    assert parsed.problems == []


@pytest.mark.parametrize("value", HOSTILE, ids=ids(HOSTILE))
def test_list_item_is_kept_exactly(value: str) -> None:
    parsed = parse(f"summary: s\ndecisions:\n  - first\n  - {value}\n  - last\n")
    assert parsed.values == {"summary": "s", "decisions": ["first", value, "last"]}
    assert parsed.problems == []


@pytest.mark.parametrize("value", HOSTILE, ids=ids(HOSTILE))
def test_value_on_a_list_key_line_is_one_item(value: str) -> None:
    parsed = parse(f"issues: {value}\nsummary: s\n")
    assert parsed.values == {"issues": [value], "summary": "s"}
    assert parsed.problems == []


@pytest.mark.parametrize("value", HOSTILE, ids=ids(HOSTILE))
def test_unknown_key_keeps_its_value_exactly(value: str) -> None:
    parsed = parse(f"summary: s\nnotes: {value}\n")
    assert parsed.unknown == {"notes": value}


# A continuation line's own indentation is layout, and under a list key `- ` starts an item.
CONTINUABLE = [v for v in HOSTILE if not v.startswith(("- ", "* ", " ", "\t"))]


@pytest.mark.parametrize("value", CONTINUABLE, ids=ids(CONTINUABLE))
def test_value_survives_as_a_continuation_line(value: str) -> None:
    parsed = parse(f"summary: first\n    {value}\ndecisions:\n  - item\n    {value}\n")
    assert parsed.values == {"summary": f"first\n{value}", "decisions": [f"item\n{value}"]}


def test_the_issue_examples_are_stored_as_written() -> None:
    parsed = parse(
        "summary: Moved the queue to Redis: it was polling\n"
        "decisions:\n"
        "  - Use Redis SCAN, not KEYS: KEYS blocks the server\n"
        "state:\n"
        "  - PR #42 open, waiting on review\n"
        "  - yes\n"
        "  - 1.10\n"
        "issues: [unclosed\n"
    )
    assert parsed.values == {
        "summary": "Moved the queue to Redis: it was polling",
        "decisions": ["Use Redis SCAN, not KEYS: KEYS blocks the server"],
        "state": ["PR #42 open, waiting on review", "yes", "1.10"],
        "issues": ["[unclosed"],
    }
    assert parsed.problems == []


# --- key lines and list items ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Summary: x\nDECISIONS:\n  - y\n", {"summary": "x", "decisions": ["y"]}),
        ("summary:value\nstate:- not an item\n", {"summary": "value", "state": ["- not an item"]}),
        ("summary:  two spaces\n", {"summary": " two spaces"}),
        ("summary: \n", {"summary": ""}),
        ("summary:\n", {"summary": ""}),
        ("decisions:\nstate:\n  - x\n", {"decisions": [], "state": ["x"]}),
        ("decisions:   \n", {"decisions": []}),
        ("decisions: Use X\n  - Use Y\n", {"decisions": ["Use X", "Use Y"]}),
        ("decisions:\n- no indent\n- second\n", {"decisions": ["no indent", "second"]}),
        ("decisions:\n      - deep\n  - shallow\n", {"decisions": ["deep", "shallow"]}),
        ("decisions:\n  * star bullet\n  * another\n", {"decisions": ["star bullet", "another"]}),
        ("decisions:\n  - - leading dash\n", {"decisions": ["- leading dash"]}),
        ("decisions:\n  - -5 degrees\n", {"decisions": ["-5 degrees"]}),
        ("decisions:\n  - a - b - c\n", {"decisions": ["a - b - c"]}),
        ("decisions:\n  -  two spaces\n", {"decisions": [" two spaces"]}),
        ("decisions:\n  -\n  - \n  - x\n", {"decisions": ["x"]}),
        ("decisions:\n  -\n    written below\n", {"decisions": ["written below"]}),
        ("decisions:\n\n  - a\n\n  - b\n\n", {"decisions": ["a", "b"]}),
        ("decisions:\n  - a\n    - nested bullet\n", {"decisions": ["a", "nested bullet"]}),
        ("decisions:\n\t- tab indented\n", {"decisions": ["tab indented"]}),
        ("summary: s\nscope: global\n", {"summary": "s", "scope": "global"}),
        ("summary: x\n  - a dash line is text here\n", {"summary": "x\n- a dash line is text here"}),
    ],
)
def test_key_lines_and_items(text: str, values: dict[str, object]) -> None:
    parsed = parse(text)
    assert parsed.values == values
    assert parsed.problems == []


@pytest.mark.parametrize("line", ["C:\\Users\\ana", "http://example.com", "note:x", "2024-01-01: shipped", "_x: y"])
def test_column_zero_lookalikes_are_not_keys(line: str) -> None:
    parsed = parse(f"{line}\nsummary: s\n")
    assert parsed.stray == [line]
    assert parsed.values == {"summary": "s"}
    assert parsed.unknown == {}


def test_all_known_keys_are_read() -> None:
    text = "".join(f"{key}: v {key}\n" for key in KNOWN_KEYS)
    parsed = parse(text)
    assert parsed.values == {
        **{key: f"v {key}" for key in TEXT_KEYS},
        **{key: [f"v {key}"] for key in LIST_KEYS},
    }
    assert list(parsed.values) == list(KNOWN_KEYS)


# --- continuation lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("summary: one\n    two\n    three\n", {"summary": "one\ntwo\nthree"}),
        ("summary:\n  one\n  two\n", {"summary": "one\ntwo"}),
        ("summary: one\n    two\n      indented more\n", {"summary": "one\ntwo\n  indented more"}),
        ("summary: one\n\n    two\n\n\n", {"summary": "one\n\ntwo"}),
        ("summary: one\n    note: x\n", {"summary": "one\nnote: x"}),
        ("summary: one\n    decisions: not a key\n", {"summary": "one\ndecisions: not a key"}),
        ("summary: one\n    trailing   \n", {"summary": "one\ntrailing   "}),
        ("decisions:\n  - one\n    two\n  - three\n", {"decisions": ["one\ntwo", "three"]}),
        ("decisions:\n  - one\n    note: x\n", {"decisions": ["one\nnote: x"]}),
        ("decisions:\n  - one\n\n    two\n\n  - three\n", {"decisions": ["one\n\ntwo", "three"]}),
        ("decisions: one\n    two\n", {"decisions": ["one\ntwo"]}),
        ("decisions:\n- one\n  two\n", {"decisions": ["one\ntwo"]}),
    ],
)
def test_continuation_lines(text: str, values: dict[str, object]) -> None:
    parsed = parse(text)
    assert parsed.values == values
    assert parsed.problems == []


def test_unindented_text_under_a_text_key_joins_it_with_a_problem() -> None:
    parsed = parse("summary: one\ntwo\n- three\ndecisions:\n  - d\n")
    assert parsed.values == {"summary": "one\ntwo\n- three", "decisions": ["d"]}
    assert parsed.problems == ["lines 2 and 3 under 'summary' were not indented; kept as part of its text"]


def test_a_line_without_a_marker_under_a_list_key_becomes_an_item_with_a_problem() -> None:
    parsed = parse("decisions:\n  Use X\n  - Use Y\n  because Z\nplain\n")
    assert parsed.values == {"decisions": ["Use X", "Use Y", "because Z", "plain"]}
    assert parsed.problems == ["lines 2, 4 and 5 under 'decisions' had no '- ' in front; kept as separate items"]


# --- the old YAML shapes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        (
            "summary: |\n  line one\n  line two\ndecisions:\n  - a\n",
            {"summary": "line one\nline two", "decisions": ["a"]},
        ),
        ("summary: |-\n  one\n\n  two\n\n", {"summary": "one\n\ntwo"}),
        ("summary: |+\n  one\n", {"summary": "one"}),
        ("summary: >\n  folded one\n  folded two\n\n  paragraph\n", {"summary": "folded one folded two\nparagraph"}),
        ("summary: >-\n  a\n  b\n", {"summary": "a b"}),
        ("summary: | \n  marker with a trailing space\n", {"summary": "marker with a trailing space"}),
        ("summary: |\n\n  blank line first\n", {"summary": "blank line first"}),
        ("decisions: |\n  one\n  two\n", {"decisions": ["one", "two"]}),
        ("decisions: |\n  - one\n  - two\n", {"decisions": ["one", "two"]}),
        ("notes: |\n  - one\n", {}),
        ('summary: "quoted"\n', {"summary": '"quoted"'}),
        ("summary: 'quoted'\n", {"summary": "'quoted'"}),
        ('decisions:\n  - "quoted item"\n', {"decisions": ['"quoted item"']}),
        ("summary: | pipes\n  more\n", {"summary": "| pipes\nmore"}),
        ("summary: |\ndecisions:\n  - a\n", {"summary": "|", "decisions": ["a"]}),
        ("summary: |", {"summary": "|"}),
        ("summary: >\n", {"summary": ">"}),
        ("decisions: |\nstate: >\n", {"decisions": ["|"], "state": [">"]}),
    ],
)
def test_old_yaml_shapes(text: str, values: dict[str, object]) -> None:
    parsed = parse(text)
    assert parsed.values == values
    if not values:
        assert parsed.unknown == {"notes": ["one"]}


def test_a_marker_before_an_unindented_line_is_text() -> None:
    parsed = parse("summary: |\nnot indented\n")
    assert parsed.values == {"summary": "|\nnot indented"}
    assert len(parsed.problems) == 1


# --- JSON --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ('{"summary": "x: y # z", "decisions": ["a", "b"]}', {"summary": "x: y # z", "decisions": ["a", "b"]}),
        ('  \n {"Summary": "s", "STATE": "one"}', {"summary": "s", "state": ["one"]}),
        (
            '{"summary": 1.10, "state": [true, false, 3, 1e3, null, "x", NaN]}',
            {"summary": "1.10", "state": ["true", "false", "3", "1e3", "x", "NaN"]},
        ),
        ('{"summary": ["line one", "line two"]}', {"summary": "line one\nline two"}),
        ('{"summary": null, "issues": null}', {"summary": "", "issues": []}),
        ('{"decisions": ["a"], "decisions": ["b"]}', {"decisions": ["a", "b"]}),
        ('{"decisions": ["", "  ", "kept"]}', {"decisions": ["kept"]}),
        ('{"summary": "\\u00e9 caf\\u00e9 \\ud83c\\udf89"}', {"summary": "é café 🎉"}),
        ("{}", {}),
    ],
)
def test_json_objects(text: str, values: dict[str, object]) -> None:
    parsed = parse(text)
    assert parsed.values == values
    assert parsed.problems == []
    assert parsed.stray == []


def test_json_big_numbers_keep_every_digit() -> None:
    digits = "1" + "0" * 5000
    assert parse('{"summary": ' + digits + "}").values == {"summary": digits}


def test_json_nested_values_keep_their_json_text_with_a_problem() -> None:
    parsed = parse('{"decisions": [{"a": [1, 2.50, null]}], "summary": {"k": "v"}}')
    assert parsed.values == {"decisions": ['{"a": [1, 2.50, null]}'], "summary": '{"k": "v"}'}
    assert parsed.problems == [
        "'decisions' held a nested JSON object or list; kept as its JSON text",
        "'summary' held a nested JSON object or list; kept as its JSON text",
    ]


def test_json_unknown_keys_are_kept_and_reported() -> None:
    parsed = parse('{"summry": "did x", "links": ["a", 2], "n": 5}')
    assert parsed.values == {}
    assert parsed.unknown == {"summry": "did x", "links": ["a", "2"], "n": "5"}
    assert len(parsed.problems) == 3
    assert "did you mean 'summary'?" in parsed.problems[0]


def test_json_text_key_given_twice_is_joined_with_a_problem() -> None:
    parsed = parse('{"summary": "a", "summary": "b"}')
    assert parsed.values == {"summary": "a\nb"}
    assert parsed.problems == ["'summary' was given 2 times; every value was kept, one after another"]


@pytest.mark.parametrize(
    "text",
    ["{a", '{"summary": "x"} trailing', "{unclosed: summary", "{" * 100_000, '{"a": ' + "[" * 100_000],
    ids=["bare", "trailing", "yaml-ish", "deep-braces", "deep-lists"],
)
def test_text_starting_with_a_brace_that_is_not_json_is_read_as_text(text: str) -> None:
    parsed = parse(text)
    assert parsed.stray == [text]
    assert parsed.problems[0].startswith("the input starts with '{' but is not a JSON object")


def test_a_brace_summary_is_read_as_save_format() -> None:
    parsed = parse("{a\nsummary: {braces} are fine\n")
    assert parsed.values == {"summary": "{braces} are fine"}
    assert parsed.stray == ["{a"]
    assert len(parsed.problems) == 2


# --- unknown keys, stray text, and the shape of the input --------------------------------------


def test_unknown_keys_are_kept_as_written_and_reported() -> None:
    parsed = parse("summry: did x\ncolour:\nSummary: real\nLinks:\n  - a\n  - b\nsummry: again\n")
    assert parsed.values == {"summary": "real"}
    assert parsed.unknown == {"summry": "did x\nagain", "colour": "", "Links": ["a", "b"]}
    assert parsed.problems == [
        "unknown key 'summry' (did you mean 'summary'? known: summary, scope, decisions, state, issues, "
        "resolved, retired, feedback, user, tool, reference); its text is kept in the session file",
        "unknown key 'colour' (known: summary, scope, decisions, state, issues, resolved, retired, feedback, "
        "user, tool, reference); its text is kept in the session file",
        "unknown key 'Links' (known: summary, scope, decisions, state, issues, resolved, retired, feedback, "
        "user, tool, reference); its text is kept in the session file",
    ]


def test_unknown_key_text_becomes_the_first_item_when_items_follow() -> None:
    assert parse("notes: intro\n  more\n  - a\n").unknown == {"notes": ["intro\nmore", "a"]}


def test_text_without_keys_is_stray() -> None:
    parsed = parse("\n\nJust some notes: on what I did.\n\n  - and a bullet\n\n")
    assert parsed.values == {}
    assert parsed.stray == ["Just some notes: on what I did.", "", "  - and a bullet"]
    assert parsed.problems == [
        "no key found (known: summary, scope, decisions, state, issues, resolved, retired, feedback, user, "
        "tool, reference); the text is kept as written"
    ]


def test_text_before_the_first_key_is_stray() -> None:
    parsed = parse("Here is my save:\nsummary: s\n")
    assert parsed.stray == ["Here is my save:"]
    assert parsed.values == {"summary": "s"}
    assert parsed.problems == ["line 1 was before the first key, under no key; kept as written"]


def test_text_key_given_twice_keeps_both() -> None:
    parsed = parse("summary: one\ndecisions:\n  - a\nsummary: two\ndecisions:\n  - b\n")
    assert parsed.values == {"summary": "one\ntwo", "decisions": ["a", "b"]}
    assert parsed.problems == ["'summary' was given 2 times (lines 1 and 4); every value was kept, one after another"]


@pytest.mark.parametrize(
    "text",
    [
        "summary: a\r\ndecisions:\r\n  - b \r\n  - c\r\n",
        "\ufeffsummary: a\ndecisions:\n  - b \n  - c",
        "\ufeffsummary: a\r\ndecisions:\r\n  - b \r\n  - c\r\n",
        "  summary: a\n  decisions:\n    - b \n    - c\n",
        "\n\n\tsummary: a\n\tdecisions:\n\t  - b \n\t  - c\n\n",
    ],
    ids=["crlf", "bom", "bom-crlf", "indented-body", "tab-indented-body"],
)
def test_line_ends_bom_and_an_indented_body(text: str) -> None:
    parsed = parse(text)
    assert parsed.values == {"summary": "a", "decisions": ["b ", "c"]}
    assert parsed.problems == []


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "\ufeff", "\r\n\r\n"])
def test_empty_input(text: str) -> None:
    parsed = parse(text)
    assert (parsed.values, parsed.unknown, parsed.problems, parsed.stray) == ({}, {}, [], [])


def test_many_problem_lines_are_summarised() -> None:
    parsed = parse("decisions:\n" + "plain\n" * 8)
    assert parsed.values == {"decisions": ["plain"] * 8}
    assert parsed.problems == [
        "lines 2, 3, 4, 5, 6 and 3 more under 'decisions' had no '- ' in front; kept as separate items"
    ]


def test_parsed_save_shows_its_fields() -> None:
    assert (
        repr(ParsedSave(values={"summary": "s"}))
        == "ParsedSave(values={'summary': 's'}, unknown={}, problems=[], stray=[])"
    )


# --- the request's own text --------------------------------------------------------------------


def test_the_template_parses_as_the_example_says() -> None:
    parsed = parse(template())
    assert parsed.values == {
        "summary": "What this session did and why, in one or two sentences; a long value\n"
        "continues on the next line, indented by four spaces.",
        "decisions": ["A durable choice and its reason"],
        "state": ["Where the work stands now and what comes next"],
        "issues": ["An open problem worth remembering"],
        "resolved": ["A known issue that is now fixed"],
        "retired": ["A decision that no longer holds"],
    }
    assert (parsed.unknown, parsed.problems, parsed.stray) == ({}, [], [])


def test_the_template_is_heredoc_ready() -> None:
    body = template()
    assert body.endswith("\n")
    assert not body.startswith("\n")
    assert "KEEPER" not in body
    assert "    continues" in body


def test_the_rules_name_the_item_marker_and_the_continuation_indent() -> None:
    text = rules()
    assert "`  - `" in text
    assert "four spaces" in text
    assert "\n" not in text


# --- properties --------------------------------------------------------------------------------

# Any character but "\n" and "\r" (the line ends) and surrogates (not UTF-8), rich in what YAML would misread.
SYMBOLS = "#:'\"-*>|!&@`{}[]\\%~?=,. \t"
SEPARATORS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
rich_char = st.one_of(
    st.sampled_from(list(SYMBOLS + SEPARATORS)),
    st.sampled_from(list("aZ09yesnotrue")),
    st.sampled_from(list("中文日本語한국어🎉👩‍💻é")),
    st.characters(codec="utf-8", exclude_characters="\n\r"),
)
raw_value = st.text(rich_char, min_size=1, max_size=30)
value = raw_value.filter(lambda v: v.strip() != "")
# A list key's own line may not hold just a block marker: `decisions: |` before `  - item` is YAML's block.
key_line_value = value.filter(lambda v: v.rstrip(" \t") not in {"|", "|-", "|+", ">", ">-", ">+"})


@st.composite
def saves(draw: st.DrawFn) -> tuple[str, dict[str, str | list[str]]]:
    """A save written exactly as the template shows it, and the values it holds."""
    expected: dict[str, str | list[str]] = {}
    lines: list[str] = []
    if draw(st.booleans()):
        summary = draw(value)
        lines.append(f"summary: {summary}")
        expected["summary"] = summary
    for key in draw(st.lists(st.sampled_from(LIST_KEYS), unique=True, max_size=5)):
        items = draw(st.lists(value, max_size=4))
        on_key_line = draw(st.one_of(st.none(), key_line_value))
        lines.append(f"{key}: {on_key_line}" if on_key_line is not None else f"{key}:")
        lines += [f"  - {item}" for item in items]
        expected[key] = ([on_key_line] if on_key_line is not None else []) + items
    if draw(st.booleans()):
        expected["scope"] = draw(st.sampled_from(["project", "global"]))
        lines.append(f"scope: {expected['scope']}")
    return "\n".join(lines) + "\n", expected


@SETTINGS
@given(saves())
@example(("summary: a: b # c\nstate:\n  - - x\n  - yes\n", {"summary": "a: b # c", "state": ["- x", "yes"]}))
def test_every_value_comes_back_byte_for_byte(save: tuple[str, dict[str, str | list[str]]]) -> None:
    text, expected = save
    parsed = parse(text)
    assert parsed.values == expected
    assert (parsed.unknown, parsed.problems, parsed.stray) == ({}, [], [])
    crlf = parse(text.replace("\n", "\r\n"))
    assert crlf.values == expected


continuation = value.filter(lambda v: not v.startswith((" ", "\t")))
item_continuation = continuation.filter(lambda v: v[:2] not in ("- ", "* ") and v not in ("-", "*"))


@st.composite
def multi_line(draw: st.DrawFn, line: st.SearchStrategy[str]) -> list[str]:
    """Lines of one value: non-blank first and last, blank lines ("") allowed between."""
    lines = draw(st.lists(st.one_of(line, line, st.just("")), min_size=1, max_size=6))
    first = draw(line)
    last = draw(line)
    return [first, *lines, last] if len(lines) > 1 else [first, last]


@SETTINGS
@given(st.one_of(st.just(""), key_line_value), multi_line(continuation), st.sampled_from(["    ", "  ", "\t"]))
def test_multi_line_summaries_come_back_exactly(first: str, rest: list[str], indent: str) -> None:
    text = f"summary: {first}\n" + "".join(f"{indent}{line}\n" if line else "\n" for line in rest) + "state:\n  - s\n"
    parsed = parse(text)
    assert parsed.values == {"summary": "\n".join([first, *rest] if first else rest), "state": ["s"]}
    assert parsed.problems == []


@SETTINGS
@given(st.lists(st.tuples(value, st.lists(item_continuation, max_size=3)), min_size=1, max_size=4))
def test_multi_line_items_come_back_exactly(items: list[tuple[str, list[str]]]) -> None:
    lines = ["decisions:"]
    for head, rest in items:
        lines.append(f"  - {head}")
        lines += [f"    {line}" for line in rest]
    parsed = parse("\n".join(lines) + "\n")
    assert parsed.values == {"decisions": ["\n".join([head, *rest]) for head, rest in items]}
    assert parsed.problems == []


# --- fuzz: any text at all ---------------------------------------------------------------------

MARKERS = {"-", "*", "|", "|-", "|+", ">", ">-", ">+"}


def is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text.lstrip("\ufeff")), dict)
    except (ValueError, RecursionError):
        return False


def stored(parsed: ParsedSave) -> str:
    pieces: list[str] = [*parsed.stray]
    for found in (parsed.values, parsed.unknown):
        for key, kept in found.items():
            pieces.append(key)
            pieces += kept if isinstance(kept, list) else [kept]
    return "\n".join(pieces)


def assert_nothing_lost(text: str, parsed: ParsedSave) -> None:
    """Every non-blank line's text, less its key or item marker, is somewhere in what was kept."""
    everything = stored(parsed)
    for raw in text.removeprefix("\ufeff").split("\n"):
        line = raw.removesuffix("\r").strip()
        if not line:
            continue
        candidates = [line]
        if line[:2] in ("- ", "* "):
            candidates.append(line[2:])
        if ":" in line:
            candidates.append(line.split(":", 1)[1].removeprefix(" "))
        assert any(not c.strip() or c.strip() in MARKERS or c.strip() in everything for c in candidates), line


save_like_line = st.tuples(
    st.sampled_from(
        ["", " ", "  ", "    ", "\t", "summary:", "decisions:", "Summary: ", "notes: ", "- ", "* ", "  - "]
    ),
    st.sampled_from(["", "|", ">", "- ", "note: ", "{", "x"]),
    st.text(rich_char, max_size=12),
).map("".join)
save_like_text = st.lists(save_like_line, max_size=12).map("\n".join)


@SETTINGS
@given(st.one_of(st.text(), save_like_text, st.text(rich_char)))
@example("summary: |\n  a\n\n  b\n\n")
@example("decisions: |\n  - a\nnotes: >\n  x")
def test_any_text_is_read_without_error_or_loss(text: str) -> None:
    parsed = parse(text)
    assert isinstance(parsed, ParsedSave)
    if not is_json_object(text):
        assert_nothing_lost(text, parsed)
    for found in (parsed.values, parsed.unknown):
        for kept in found.values():
            assert isinstance(kept, (str, list))
    for key in TEXT_KEYS:
        assert isinstance(parsed.values.get(key, ""), str)
    for key in LIST_KEYS:
        assert isinstance(parsed.values.get(key, []), list)


@SETTINGS
@given(
    st.dictionaries(
        st.text(max_size=10),
        st.recursive(st.none() | st.booleans() | st.integers() | st.text(), st.lists, max_leaves=5),
        max_size=5,
    )
)
def test_any_json_object_is_read_without_error(data: dict[str, object]) -> None:
    parsed = parse(json.dumps(data))
    for key, kept in data.items():
        if isinstance(kept, str) and kept.strip() and key.lower() in KNOWN_KEYS:
            assert kept in stored(parsed)
