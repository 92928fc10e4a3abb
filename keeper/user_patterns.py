"""Users' own ``redact_patterns``: refused when they could backtrack without bound, and run on a time budget.

A repository's ``redact_patterns`` run on every text Keeper writes, and ``re`` backtracks: a
pattern like ``(\\w+\\s?)+!`` takes exponential time on an ordinary line of prose. Two defences:

1. ``unsafe`` reads the pattern's parse tree and refuses, before it ever runs, the shapes that
   backtrack without bound: a backreference, a repetition inside a lookaround, a variable
   repetition inside another repetition (``(a+)+``, ``(.*a){12}``), an alternation inside a
   repetition whose branches can start with the same character or match nothing (``(a|aa)+``),
   and two long repetitions over shared characters with nothing between that tells them apart
   (``\\s*\\s*``, ``.*x.*``). What is left costs at most about a piece's length per starting place.
2. What passes runs on pieces of at most EXTRA_PIECE characters cut at line ends and, where the
   platform has an interval timer and Keeper runs in the main thread (Linux, macOS), within an
   allowance: EXTRA_PER_CHAR seconds per character and pattern (ample for a linear scan), plus
   what is left of the process's EXTRA_BUDGET (``RESERVE``), from which time beyond the size
   allowance is taken; ``re`` checks for signals while it matches, so the timer stops even a
   pattern the check let through. A piece left unread is redacted whole, and once a call runs
   out the process has no reserve left beyond the size allowance.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable
    from typing import Any

EXTRA_PIECE = 4096  # user patterns run on pieces of at most this many characters (see spans)
EXTRA_BUDGET = 1.0  # seconds one process may spend in user patterns beyond what its texts' sizes earn
EXTRA_PER_CHAR = 2e-6  # seconds a character earns for each pattern: 2 s a MB, ten times a linear scan's need
_LONG = 16  # a repetition that may take more than this many more turns than its least is "long"
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


class Allowance:
    """Seconds left to spend in user patterns: the process's reserve, or what one call may take."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


RESERVE = Allowance(EXTRA_BUDGET)  # what this process has left beyond what its texts' sizes earn
_COMPILED: dict[tuple[str, ...], list[re.Pattern[str]]] = {}


def compiled(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """User patterns from config ``redact_patterns``, compiled once; config.py warned about bad ones,
    and one that does not compile or could backtrack without bound (``unsafe``) is skipped here too."""
    key = tuple(patterns)
    if key not in _COMPILED:
        import re

        compiled = []
        for pattern in key:
            try:
                if unsafe(pattern) is None:
                    compiled.append(re.compile(pattern))
            except (re.error, RecursionError, OverflowError):
                continue
        _COMPILED[key] = compiled
    return _COMPILED[key]


def spans(text: str, patterns: list[re.Pattern[str]]) -> list[tuple[int, int]]:
    """Matches of user patterns, each run on pieces of at most EXTRA_PIECE characters, cut at line ends,
    within this call's time allowance (see the module's docstring).

    On short pieces a pattern that is quadratic in its input costs at most EXTRA_PIECE steps a
    character. A match cannot cross a piece boundary (a line end where there is one). A piece the
    allowance leaves unread is one span: redacted whole rather than written unread.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    earned = len(text) * len(patterns) * EXTRA_PER_CHAR  # what any pattern that scans in linear time needs
    allowance = Allowance(RESERVE.seconds + earned)
    while start < len(text):
        end = min(start + EXTRA_PIECE, len(text))
        if end < len(text):
            cut = text.rfind("\n", start, end)
            end = cut + 1 if cut > start else end
        found = _matches(patterns, text[start:end], allowance)
        if found is None:
            spans.append((start, end))
        else:
            spans += [(start + a, start + b) for a, b in found if b > a]
        start = end
    if allowance.seconds <= 0:  # ran out: from now on a call gets only what its size earns
        RESERVE.seconds = 0.0
    else:  # keep what this call did not spend beyond its earned share
        RESERVE.seconds = min(RESERVE.seconds, allowance.seconds)
    return spans


class _OutOfTime(Exception):
    """Raised by the interval timer's signal inside ``re``'s matching loop."""


def _out_of_time(signum: int, frame: object) -> None:
    raise _OutOfTime


def _matches(patterns: list[re.Pattern[str]], piece: str, allowance: Allowance) -> list[tuple[int, int]] | None:
    """The spans the patterns match in ``piece``, or None once the allowance is spent (or runs out
    while they match); the time taken is taken off the allowance."""
    if allowance.seconds <= 0:
        return None

    def work() -> list[tuple[int, int]]:
        return [m.span() for pattern in patterns for m in pattern.finditer(piece)]

    import signal
    import time

    if not hasattr(signal, "setitimer"):  # Windows: the parse-tree check alone bounds the work
        return work()
    try:
        previous = signal.signal(signal.SIGALRM, _out_of_time)
    except ValueError:  # not the main thread: no timer there
        return work()
    began = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, allowance.seconds)
        return work()
    except _OutOfTime:
        allowance.seconds = 0.0
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if allowance.seconds > 0:
            allowance.seconds -= time.monotonic() - began


def _parse(pattern: str) -> Any:
    try:
        from re import _parser as parser  # type: ignore[attr-defined,unused-ignore]  # Python 3.11+
    except ImportError:  # Python 3.9 and 3.10
        import sre_parse as parser  # type: ignore[no-redef,unused-ignore]
    return parser.parse(pattern)


_CATEGORIES = {
    "CATEGORY_DIGIT": frozenset("0123456789"),
    "CATEGORY_SPACE": frozenset(" \t\n\r\f\v"),
    "CATEGORY_WORD": frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
}


def _chars(name: str, av: Any) -> frozenset[str] | None:
    """The characters one single-character item can match (None: any, or too many to list)."""
    if name == "LITERAL":
        return frozenset(chr(av))
    if name != "IN":
        return None
    found: set[str] = set()
    for sub, arg in av:
        kind = sub.name
        if kind == "LITERAL":
            found.add(chr(arg))
        elif kind == "RANGE" and arg[1] - arg[0] <= 512:
            found.update(chr(c) for c in range(arg[0], arg[1] + 1))
        elif kind == "CATEGORY" and arg.name in _CATEGORIES:
            found |= _CATEGORIES[arg.name]
        else:  # NEGATE, a wide range, a negated category
            return None
    return frozenset(found)


def _overlap(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    return a is None or b is None or bool(a & b)


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


def _body(name: str, av: Any) -> Any:
    """The sub-sequence of a group-like item, or None."""
    if name in _REPEATS:
        return av[2]
    if name == "SUBPATTERN":
        return av[-1]
    if name == "ATOMIC_GROUP":
        return av
    return None


def _nullable(seq: Any) -> bool:
    """Whether a sequence can match the empty string."""
    for op, av in seq:
        name = op.name
        if name in _ZERO_WIDTH or (name in _REPEATS and av[0] == 0):
            continue
        body = _body(name, av)
        if body is not None and _nullable(body):
            continue
        if name == "BRANCH" and any(_nullable(b) for b in av[1]):
            continue
        return False
    return True


def _first(seq: Any) -> frozenset[str] | None:
    """The characters a sequence can start with."""
    found: frozenset[str] | None = frozenset()
    for op, av in seq:
        name = op.name
        if name in _ZERO_WIDTH:
            continue
        body = _body(name, av)
        if body is not None:
            here = _first(body)
        elif name == "BRANCH":
            here = frozenset()
            for branch in av[1]:
                here = _union(here, _first(branch))
        else:
            here = _chars(name, av)
        found = _union(found, here)
        if not _nullable([(op, av)]):
            break
    return found


def _alphabet(seq: Any) -> frozenset[str] | None:
    """Every character a sequence can match anywhere."""
    found: frozenset[str] | None = frozenset()
    for op, av in seq:
        name = op.name
        body = _body(name, av)
        if body is not None:
            found = _union(found, _alphabet(body))
        elif name == "BRANCH":
            for branch in av[1]:
                found = _union(found, _alphabet(branch))
        elif name not in _ZERO_WIDTH:
            found = _union(found, _chars(name, av))
    return found


def _varies(seq: Any) -> bool:
    """Whether a sequence holds a repetition of variable count, at any depth."""
    for op, av in seq:
        name = op.name
        if name in _REPEATS and av[0] != av[1]:
            return True
        body = _body(name, av) if name not in ("ASSERT", "ASSERT_NOT") else av[1]
        if body is not None and _varies(body):
            return True
        if name == "BRANCH" and any(_varies(b) for b in av[1]):
            return True
    return False


def _flat(seq: Any) -> list[tuple[Any, Any]]:
    """A sequence with its groups opened, so ``(\\w+)\\w+`` reads as two repetitions in a row."""
    items: list[tuple[Any, Any]] = []
    for op, av in seq:
        items += _flat(av[-1]) if op.name == "SUBPATTERN" else [(op, av)]
    return items


def _check(seq: Any, repeated: bool) -> None:
    """Raise ValueError naming a shape of ``seq`` that can backtrack without bound.

    ``repeated``: ``seq`` is inside a repetition that may run more than once.
    """
    is_open = False  # a long repetition came before, and nothing since that it cannot take
    taking: frozenset[str] | None = frozenset()  # what that repetition can take
    for op, av in _flat(seq):
        name = op.name
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise ValueError("it uses a backreference")
        if name in ("ASSERT", "ASSERT_NOT"):
            if _varies(av[1]):
                raise ValueError("it repeats inside a lookaround")
            _check(av[1], repeated)
            continue
        if name == "AT":
            continue
        if name == "ATOMIC_GROUP":
            _check(av, repeated)
            here = _first(av)
        elif name == "BRANCH":
            branches = av[1]
            starts = [_first(b) for b in branches]
            if repeated and (
                any(_nullable(b) for b in branches)
                or any(_overlap(x, y) for i, x in enumerate(starts) for y in starts[i + 1 :])
            ):
                raise ValueError("it repeats an alternation whose branches can match the same text")
            for branch in branches:
                _check(branch, repeated)
            here = _first([(op, av)])
        elif name in _REPEATS:
            low, high, body = av
            if repeated and low != high:
                raise ValueError("it nests a repetition inside a repetition")
            _check(body, repeated or high > 1)
            if high - low > _LONG and name != "POSSESSIVE_REPEAT":
                letters = _alphabet(body)
                if is_open and _overlap(taking, letters):
                    raise ValueError("it has two long repetitions in a row that can match the same text")
                is_open, taking = True, letters
                continue
            here = _first(body)
        else:
            here = _chars(name, av)
        if is_open and not _nullable([(op, av)]) and not _overlap(taking, here):
            is_open = False  # a character the repetition cannot take: the two cannot share text


def unsafe(pattern: str) -> str | None:
    """Why a user pattern could backtrack without bound, in words for a message; None when it cannot.

    The pattern must compile (``re.error`` otherwise). The module's docstring lists the shapes.
    """
    try:
        _check(_parse(pattern), repeated=False)
    except ValueError as exc:
        return str(exc)
    return None
