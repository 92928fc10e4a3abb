"""keeper.jsonio gives exactly what the json package gives, without importing it."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keeper import jsonio
from keeper.store import identity

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_dumps_matches_json_and_loads_reads_it_back(value: object) -> None:
    assert jsonio.dumps(value) == json.dumps(value)
    assert jsonio.loads(json.dumps(value)) == json.loads(json.dumps(value))
    assert jsonio.loads(json.dumps(value, indent=2, ensure_ascii=False)) == value


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} x', "nul", '{"a": "\x01"}', "\ufeff{}", "[1,]"])
def test_invalid_documents_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        jsonio.loads(text)


def test_special_floats_round_trip_like_json() -> None:
    assert jsonio.dumps([float("inf"), float("-inf")]) == json.dumps([float("inf"), float("-inf")])
    assert math.isnan(jsonio.loads("NaN"))  # type: ignore[arg-type]


def _reference_slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")[:40].strip("-._")
    return slug or "project"


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_slugs_match_the_documented_rule(name: str) -> None:
    assert identity.slugify(name) == _reference_slug(name)
    assert identity.safe_session_id(name) == (re.sub(r"[^A-Za-z0-9_-]", "", name)[:64] or "unknown")


@pytest.mark.parametrize("key", [True, 1, 1.5, None])
def test_scalar_keys_are_written_as_json_writes_them(key: object) -> None:
    assert jsonio.dumps({key: 1}) == json.dumps({key: 1})


@pytest.mark.parametrize("value", [{("a",): 1}, {"a": object()}, [b"bytes"]])
def test_what_json_cannot_write_is_refused_as_json_refuses_it(value: object) -> None:
    with pytest.raises(TypeError):
        json.dumps(value)
    with pytest.raises(TypeError):
        jsonio.dumps(value)


BROKEN = ["{{{", '"abc', '{"a": "x', '{"a":1,}', "[1,", "nul", '{"a": "\\x"}']


def test_invalid_documents_raise_value_error_in_a_fresh_process_too() -> None:
    """Hooks run in a new process where the json package was never loaded: the C scanner's error
    path then differs (it raised SystemError, and a bad transcript line lost a session's record)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom keeper import jsonio\nfor text in sys.argv[1:]:\n"
        "    try:\n        jsonio.loads(text)\n    except ValueError:\n        print('ValueError')\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *BROKEN], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ValueError"] * len(BROKEN)
