"""What "the same item" means: one key for saves, retirements, resolutions, import and every merge.

Two lines are the same memory item when their ``key`` is equal. The key folds only what cannot
change a line's meaning: Unicode compatibility forms (NFKC: fullwidth letters, ligatures), invisible
format characters (Unicode category Cf: zero-width space and joiner, BOM, direction marks), case
(``casefold``), runs of whitespace, sentence punctuation (``.,;:!?…。、``) that ends a word or
stands alone, outside code in backticks (so "Use Redis, for the job queue!" is "Use Redis for the
job queue."; inside a word it stays: ``1.10``, ``1,000``, ``v2.3``, ``cache.py``, ``a:b``), and
the `` (YYYY-MM-DD)`` date Keeper puts after an item. Nothing more: word order, numbers,
negations, quotes and every other character stay, so "Store sessions in Redis, not Postgres" and
"Store sessions in Postgres, not Redis" are two items, and "Cache TTL is 30 seconds" is not "… 60 …".

A *near* match exists only for naming an item to retire or resolve, and for pointing out in a
save's reply that a new item resembles a known one (it is still added). ``find`` returns the one
item a name points at: the same item, or a single near match clearly above every other (see
``NEAR``, ``MARGIN``); anything else is ambiguous or missing and removes nothing.

Imports here are lazy (unicodedata, re, rapidfuzz): hooks import this package on their fast path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

NEAR = 90.0  # rapidfuzz ``fuzz.ratio`` (order-sensitive, 0-100) a near match must reach
MARGIN = 5.0  # ... and by how much it must lead the second-best candidate
SIMILAR = 85.0  # a new item this close to a known one is pointed out in the save's reply
CANDIDATES = 3  # how many candidates an ambiguous or missing name lists
_TRAILING = ".,;:!?…。、 "
_SENTENCE = _TRAILING.strip()
_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nor", "neither", "nothing", "without", "avoid", "cannot", "dont", "stop"}
)


def strip_date(text: str) -> str:
    """``text`` without the `` (YYYY-MM-DD)`` Keeper puts after an item (and trailing spaces)."""
    text = text.rstrip()
    day = text[-11:-1]
    if (
        text[-13:-11] == " ("
        and text[-1:] == ")"
        and len(day) == 10
        and day[4] == day[7] == "-"
        and (day[:4] + day[5:7] + day[8:]).isdigit()
    ):
        return text[:-13].rstrip()
    return text


def key(text: str) -> str:
    """The identity of an item: equal keys mean the same item. Never empty for non-blank text."""
    if not text.isascii():  # ASCII has no compatibility forms and no format characters
        import unicodedata

        text = unicodedata.normalize("NFKC", text)
        visible = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
        text = visible if visible.strip() else text  # an item of invisible characters alone is itself
    folded = " ".join(text.casefold().split())
    folded = strip_date(folded)
    stripped = _unpunctuated(folded).rstrip(_TRAILING)
    return stripped or folded  # "~" or "..." alone is an item too: its key is itself


def _unpunctuated(text: str) -> str:
    """``text`` (words single-spaced) without the sentence punctuation that ends a word or stands
    alone, outside backtick code spans; a word of dots alone (``..``) stays but at the very end."""
    parts = text.split("`")
    for at in range(0, len(parts), 2):  # outside backticks; an unclosed one makes the rest code
        words = []
        for word in parts[at].split(" "):
            bare = word.rstrip(_SENTENCE)
            words.append(bare or (word if word and not word.strip(".") else ""))
        joined = " ".join(words)  # a word dropped leaves a double space; beside a code span, one
        lead = " " if joined[:1] == " " else ""
        trail = " " if joined[-1:] == " " and joined.strip() else ""
        parts[at] = lead + " ".join(joined.split()) + trail
    return "`".join(parts)


def _words(item_key: str) -> list[str]:
    import re

    return re.findall(r"\w+(?:['\u2019]\w+)*", item_key)


def numbers(item_key: str) -> list[str]:
    """The numbers a key holds, in order (``30``, ``1.10``, ``v2``'s ``2``)."""
    import re

    return re.findall(r"\d+(?:[.,]\d+)*", item_key)


def negations(item_key: str) -> list[str]:
    """The negating words a key holds, sorted (``not``, ``never``, ``don't`` …)."""
    found = []
    for word in _words(item_key):
        plain = word.replace("\u2019", "'")
        if plain in _NEGATIONS or plain.endswith("n't") or plain.replace("'", "") in _NEGATIONS:
            found.append(plain.replace("'", ""))
    return sorted(found)


def compatible(a: str, b: str) -> bool:
    """Whether two keys may be a near match: the same numbers in order, the same negations."""
    return numbers(a) == numbers(b) and negations(a) == negations(b)


def similarity(a: str, b: str) -> float:
    """How alike two keys are, 0-100, order-sensitive (word order counts)."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(a, b))


class Match:
    """What a name (a retirement, a resolution) points at among candidate items.

    ``found`` holds the indexes to remove: every copy of the same item, or the one clear near match;
    empty when the name is ambiguous or matches nothing, and then ``candidates`` holds the closest
    items' texts for the reply.
    """

    __slots__ = ("candidates", "exact", "found")

    def __init__(self, found: list[int], exact: bool, candidates: list[str]) -> None:
        self.found, self.exact, self.candidates = found, exact, candidates


def find(name: str, texts: Sequence[str], keys: Sequence[str] | None = None) -> Match:
    """The item ``name`` points at among ``texts`` (their ``key``s may be given, computed once).

    The same item wins outright. Otherwise one near match is taken only when it reaches ``NEAR``,
    leads every other candidate by ``MARGIN`` and has the same numbers and negations.
    """
    keys = list(keys) if keys is not None else [key(text) for text in texts]
    wanted = key(name)
    same = [index for index, other in enumerate(keys) if other == wanted]
    if same:
        return Match(same, True, [])
    if not keys or not wanted.strip():
        return Match([], False, [])
    from rapidfuzz import fuzz, process

    scored = sorted(
        ((score, index) for _, score, index in process.extract(wanted, keys, scorer=fuzz.ratio, limit=None)),
        key=lambda pair: (-pair[0], pair[1]),
    )
    best_score, best = scored[0]
    second = scored[1][0] if len(scored) > 1 else 0.0
    if best_score >= NEAR and best_score - second >= MARGIN and compatible(wanted, keys[best]):
        return Match([best], False, [])
    holding = _holding_every_word(wanted, keys)
    if holding:
        return Match(holding, False, [])
    shown = [texts[index] for score, index in scored[:CANDIDATES] if score >= 50.0]
    return Match([], False, shown)


def _holding_every_word(wanted: str, keys: Sequence[str]) -> list[int]:
    """The copies of the one item that holds every word of a name of two words or more, in its order
    and with the same negations (``Flaky login`` names ``Flaky login test on CI``); none when no item
    or several do."""
    words = _words(wanted)
    if len(words) < 2:
        return []

    def holds(other: str) -> bool:
        rest = iter(_words(other))
        return all(word in rest for word in words) and negations(other) == negations(wanted)

    found = {other for other in keys if holds(other)}
    if len(found) != 1:
        return []
    (only,) = found
    return [index for index, other in enumerate(keys) if other == only]


def similar(new: str, keys: Sequence[str], texts: Sequence[str]) -> str | None:
    """A known item that resembles ``new`` (to point out, never to drop), or None."""
    if not keys:
        return None
    from rapidfuzz import fuzz, process

    found = process.extractOne(key(new), keys, scorer=fuzz.ratio, score_cutoff=SIMILAR)
    return texts[found[2]] if found else None
