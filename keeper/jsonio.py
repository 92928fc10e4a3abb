"""Hook JSON without the ``json`` package, whose import pulls in ``re`` and ``enum`` (~5 ms a call).

CPython's C accelerator ``_json`` (always built; Keeper supports CPython only) holds the real
scanner and encoder; this wraps them with the standard defaults, so ``loads`` and ``dumps`` give
what ``json.loads`` and ``json.dumps`` give (same separators, ASCII output).
"""

from __future__ import annotations

from _json import encode_basestring_ascii as _quote
from _json import make_encoder, make_scanner

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """The attributes the C scanner reads from a decoder: json's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = make_scanner(_Context())  # type: ignore[arg-type]  # duck-typed, as json.JSONDecoder is


def loads(text: str) -> Any:
    """Parse one JSON document; raise ValueError (or RecursionError when nested too deep) if invalid."""
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"Expecting value: char {exc.value}") from None
    except SystemError:
        # The C scanner reports most syntax errors with json.decoder's JSONDecodeError, which it
        # can only build once that module is loaded: before, it fails with a SystemError. Only
        # invalid input gets here, so let the json package (loaded now) say what is wrong.
        import json

        return json.loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps' own C encoder with its defaults (no circular check: a cycle raises RecursionError)
_encode = make_encoder(None, _refuse, _quote, None, ": ", ", ", False, False, True)


def dumps(value: object) -> str:
    """Serialise ``value`` exactly as ``json.dumps`` does, with the encoder it uses."""
    return "".join(_encode(value, 0))
