"""The tokenizer recall and its index share: text to search terms.

Tokens split code identifiers (``order_service``, ``getUserById``, ``src/api/cache.py``) and
fold case and accents; English words are stemmed (``keeper.recall.stemmer``), so "making" finds
"made"; function words and pronouns are left out, and so are one-character tokens, which
would otherwise weigh as rare terms. Dates become the words people ask with: ``2026-11-07``
also reads as "november", "november-7", "2026-11" and "saturday", and "Nov 7th, 2026" in a
question as the same, and so do numeric dates in any common order (``19.01.2024``,
``01/19/2024``, ``19/1``; ``keeper.recall.dates``) and, given the day a text was written, relative ones
("yesterday", "two weeks ago"). Each term keeps the word as written beside it, because typos are closest
before stemming. Plain string operations, no ``re``: recall runs inside hooks, where importing
``re`` would cost more than the search.
"""

from __future__ import annotations

from keeper.recall import dates
from keeper.recall.dates import MONTHS, WEEKDAYS
from keeper.recall.stemmer import stem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./\\-")
_TO_SPACE_BYTES = bytes(i if i > 127 or chr(i) in _IDENT_CHARS else 32 for i in range(256))  # as UTF-8
_ASCII_BYTES = bytes(range(128))
_SEPARATORS = "_./\\-"
_SEPARATOR_TO_SPACE = str.maketrans(dict.fromkeys(_SEPARATORS, " "))
STOP = frozenset(  # function words: pronouns, determiners, auxiliaries, prepositions, conjunctions
    (  # noqa: SIM905 - a word list reads best as text
        "a about above after against all am among an and any anybody anyone anything are aren around as at be "
        "because been before being below between both but by can cannot could couldn did didn do does doesn doing "
        "don done down during each either every everybody everyone everything for from had hadn has hasn have "
        "haven having he her here hers herself him himself his how i if in into is isn it its itself just let ll "
        "may me might mine must mustn my myself neither no nobody none nor not nothing of off on onto or our ours "
        "ourselves out over re shall she should shouldn since so some somebody someone something such than that "
        "the their theirs them themselves then there these they this those though through thus to toward under "
        "unless until up upon us ve was wasn we were weren what whatever when whenever where wherever whether "
        "which while who whoever whom whose why will with within without won would wouldn you your yours yourself "
        "yourselves"
    ).split()
)
# Month names always read as months; abbreviations (and "may") only next to a day or a year.
_MONTH_NAMES = {name: i for i, name in enumerate(MONTHS, 1) if name != "may"}
_MONTH_NEAR_NUMBER = {
    **{name[:3]: i for i, name in enumerate(MONTHS, 1)},
    "may": 5,
    "sept": 9,
    **{f"{name[:3]}.": i for i, name in enumerate(MONTHS, 1)},
}
_MONTH_SPELLINGS = frozenset(
    spelling for word in (*_MONTH_NAMES, *_MONTH_NEAR_NUMBER) for spelling in (word, word.title(), word.upper())
)
_CANONICAL = {**{name: name for name in (*MONTHS, *WEEKDAYS)}, **{day + "s": day for day in WEEKDAYS}}


def fold(text: str) -> str:
    """Lower case without accents, so ``Café`` and ``cafe`` match."""
    if text.isascii():
        return text.lower()
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def date_terms(iso: str) -> list[str]:
    """The words a ``YYYY-MM-DD`` date is asked by: month, month-day, year-month, weekday, year."""
    if not (len(iso) == 10 and iso[4] == iso[7] == "-" and iso[:4].isdecimal() and iso[5:7].isdecimal()):
        return []
    if not iso[8:].isdecimal():
        return []
    year, month, day = int(iso[:4]), int(iso[5:7]), int(iso[8:])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return []
    name = MONTHS[month - 1]
    return [iso, iso[:4], name, f"{name}-{day}", iso[:7], dates.weekday(dates.days_from_civil(year, month, day))]


def day_terms(year: int, month: int, day: int) -> list[str]:
    """The terms of a day; ``year`` 0 (not written): its month-day term alone."""
    if year:
        return date_terms(f"{year:04d}-{month:02d}-{day:02d}")
    return [f"{MONTHS[month - 1]}-{day}"]


def _numeric_dates(ident: str) -> list[str]:
    """The terms of every reading of a numeric date (``19.01.2024``, ``01/02``), else nothing."""
    if not ident[:1].isdigit() or ident.isdigit():
        return []
    return list(dict.fromkeys(t for reading in dates.numeric(ident) for t in day_terms(*reading)))


def _camel_parts(part: str) -> list[str]:
    """``getUserByID`` → ``get``, ``User``, ``By``, ``ID``; ``HTTPServer`` → ``HTTP``, ``Server``."""
    out: list[str] = []
    start = 0
    for i in range(1, len(part)):
        before, here = part[i - 1], part[i]
        if (here.isupper() and (before.islower() or before.isdigit())) or (
            before.isupper() and here.isupper() and i + 1 < len(part) and part[i + 1].islower()
        ):
            out.append(part[start:i])
            start = i
    out.append(part[start:])
    return out


def term_of(word: str) -> str | None:
    """The search term of one folded word, or None for a stop word or a single character."""
    if word in STOP or (len(word) < 2 and word.isascii()):
        return None
    return _CANONICAL.get(word) or stem(word)


_WORD_CACHE: dict[str, tuple[tuple[str, str], ...]] = {"": ()}


def _ident_words(ident: str) -> tuple[tuple[str, str], ...]:
    """``(surface, term)`` pairs of one identifier: the whole (when compound) and its parts."""
    found = _WORD_CACHE.get(ident)
    if found is not None:
        return found
    out: list[tuple[str, str]] = []
    dated = date_terms(ident)
    if dated:
        out = [(t, t) for t in dated]
    elif ident.isalnum() and (ident.islower() or ident.isupper() or ident[1:].islower()):
        word = fold(ident)
        term = term_of(word)
        if term:
            out.append((word, term))
    else:
        out = [(t, t) for t in _numeric_dates(ident)]
        parts = [p for piece in ident.translate(_SEPARATOR_TO_SPACE).split() for p in _camel_parts(piece)]
        if len(parts) > 1:
            whole = fold(ident)
            out.append((whole, whole))
        for part in parts:
            word = fold(part)
            term = term_of(word)
            if term:
                out.append((word, term))
    result = tuple(out)
    if len(_WORD_CACHE) < 200_000:
        _WORD_CACHE[ident] = result
    return result


def _spaced(text: str) -> bytes:
    """``text`` as UTF-8 with a space for every character that is neither an identifier's (letters,
    digits, ``_./\\-``) nor another letter or digit: its runs are what ``.split()`` gives.

    A table lookup per byte in C (``bytes.translate``, ``_TO_SPACE_BYTES``: every byte from 128 up
    kept): ``str.translate`` cost the index's first build 0.7 s per 10,000 session files, this 0.4 s.
    A multi-byte character is kept whole, and by then only letters and digits are left of them (any
    other's bytes became a space first).
    """
    data = text.encode("utf-8", "surrogatepass")
    if not text.isascii():  # UTF-8 is self-synchronising: a character's bytes match only where it stands
        for char in set(data.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")):
            if not char.isalnum():
                data = data.replace(char.encode("utf-8", "surrogatepass"), b" ")
    return data.translate(_TO_SPACE_BYTES)


def _runs(text: str) -> list[str]:
    """Runs of identifier characters (letters, digits, ``_./\\-``) and of other letters, untrimmed."""
    return _spaced(text).decode("utf-8", "surrogatepass").split()


def _idents(text: str) -> list[str]:
    """Runs of identifier characters (letters, digits, ``_./\\-``) and of other letters, trimmed."""
    return [raw.strip(_SEPARATORS) for raw in _runs(text)]


def _ascii_digits(text: str) -> bool:
    """Digits a year is compared and read by: ASCII (``20²4`` is ``isdigit``, and ``int`` refuses it)."""
    return text.isascii() and text.isdigit()


def _day(token: str) -> int | None:
    """A day of the month as people write it: ``7``, ``07``, ``7th``, ``21st``."""
    digits = token[:-2] if token[-2:].lower() in ("st", "nd", "rd", "th") else token
    if digits.isdecimal() and len(digits) <= 2 and 1 <= int(digits) <= 31:  # not "²": int() refuses it
        return int(digits)
    return None


def _spoken_parts(idents: list[str], at: int) -> tuple[int, int | None, str | None, list[int]] | None:
    """Month, day, year and the positions of the words they came from, for a month word at ``idents[at]``."""
    word = idents[at].lower()
    month = _MONTH_NAMES.get(word) or _MONTH_NEAR_NUMBER.get(word)
    if month is None:
        return None
    before = idents[at - 1] if at > 0 else ""
    after = idents[at + 1] if at + 1 < len(idents) else ""
    day = _day(after) if after else None
    used = [at, at + 1] if day is not None else [at]
    year_at = at + 2 if day is not None else at + 1
    if day is None and before:
        day_at = at - 1 if before.lower() != "of" else at - 2
        day = _day(idents[day_at]) if day_at >= 0 else None
        used += [day_at] if day is not None else []
    year_spot = next(
        (i for i in (year_at, at - 1) if 0 <= i < len(idents) and len(idents[i]) == 4 and _ascii_digits(idents[i])),
        None,
    )  # not "20²4": int() refuses a superscript
    year = idents[year_spot] if year_spot is not None and "1900" <= idents[year_spot] <= "2199" else None
    used += [year_spot] if year is not None and year_spot is not None else []
    if word not in _MONTH_NAMES and day is None and year is None:
        return None  # "may", "mar", "oct" alone are not months
    return month, day, year, used


def _spoken_dates(idents: list[str], at: int) -> list[tuple[str, str]]:
    """Date terms for a month word at ``idents[at]`` with a day and a year beside it, if any."""
    parts = _spoken_parts(idents, at)
    if parts is None:
        return []
    month, day, year, _ = parts
    name = MONTHS[month - 1]
    terms = [] if idents[at].lower() in _MONTH_NAMES else [name]  # a month's full name is a term already
    if day is not None:
        terms.append(f"{name}-{day}")
    if year is not None:
        terms.append(f"{year}-{month:02d}")
        if day is not None:
            terms.append(f"{year}-{month:02d}-{day:02d}")
    return [(t, t) for t in terms]


def words(text: str, day: str | None = None) -> list[tuple[str, str]]:
    """``(surface, term)`` pairs: the folded word as written and its search term.

    Whole identifiers count as well as their parts; stop words and single characters are left
    out; dates add the words they are asked by. ``day``: the ``YYYY-MM-DD`` the text was written,
    against which its relative dates ("yesterday", "last Friday") are read.
    """
    idents = _idents(text)
    found: list[tuple[str, str]] = []
    known = _WORD_CACHE.get
    for ident in idents:
        pairs = known(ident)
        found += _ident_words(ident) if pairs is None else pairs
    return found + _dated_pairs(idents, day)


def _dated_pairs(idents: list[str], day: str | None) -> list[tuple[str, str]]:
    """The pairs of a text's spoken dates (``Nov 7th``) and, written on ``day``, its relative ones."""
    found: list[tuple[str, str]] = []
    if not _MONTH_SPELLINGS.isdisjoint(idents):
        for at, ident in enumerate(idents):
            if ident in _MONTH_SPELLINGS:
                found += _spoken_dates(idents, at)
    if day is not None and not dates.TRIGGERS.isdisjoint(idents):
        found += _relative_in_text(idents, day)
    return found


class Counting(dict[bytes, str]):
    """Counts sections' terms for the index's build, each distinct run of text resolved once.

    A run (``_runs``, kept as UTF-8: bytes split faster than text) maps to its one term, to "" when
    it has none (a stop word), or, when it has several terms or may start a date, to a key of its
    own that ``count`` expands. So a section's terms are counted by the C loops of ``map`` and
    ``Counter`` alone (Python runs only for a run not met before): a first build meets ~2.8 million
    runs in 10,000 session files, ~20,000 of them distinct. ``surface`` gathers the ``(surface
    word, term)`` pairs met, for the index's table of words as written (``new_surface``).
    """

    def __init__(self) -> None:
        try:  # Counter's own C loop, without the Python Counter wraps it in
            from _collections import _count_elements  # type: ignore[import-not-found]
        except ImportError:  # pragma: no cover - another Python: Counter's loop as collections has it
            from collections import _count_elements  # type: ignore[attr-defined]

        super().__init__()
        self._tally: Callable[[dict[str, int], Iterable[str]], None] = _count_elements
        self.surface: dict[str, str] = {}
        self._several: dict[str, list[str]] = {}  # "\0" + trimmed run -> its terms
        self._dated: set[str] = set()  # the keys of runs that may start a date
        self._given = 0  # how many of ``surface`` new_surface gave: a word's place in it never changes

    def __missing__(self, run: bytes) -> str:
        ident = run.decode("utf-8", "surrogatepass").strip(_SEPARATORS)
        pairs = _ident_words(ident)
        self.surface.update(pairs)
        dated = ident in _MONTH_SPELLINGS or ident in dates.TRIGGERS
        if len(pairs) == 1 and not dated:
            key = pairs[0][1]
        elif not pairs and not dated:
            key = ""
        else:  # "\0" stands in no term: _spaced turns it into a space
            key = "\0" + ident
            self._several[key] = [term for _, term in pairs]
            if dated:
                self._dated.add(key)
        self[run] = key
        return key

    def count(self, text: str, day: str | None = None) -> tuple[dict[str, int], int]:
        """What ``words`` finds in ``text``, counted: ``({term: occurrences}, number of pairs)``.

        ``day``: as for ``words``. The pairs of spoken and relative dates join ``surface`` too.
        """
        counts: dict[str, int] = {}
        self._tally(counts, map(self.__getitem__, _spaced(text).split()))
        counts.pop("", None)
        several = self._several.keys() & counts.keys()
        if several:
            for key in sorted(several):  # a set's order changes with the hash seed: the terms' must not
                self._tally(counts, self._several[key] * counts.pop(key))
            if not self._dated.isdisjoint(several):
                pairs = _dated_pairs(_idents(text), day)
                self.surface.update(pairs)
                self._tally(counts, [term for _, term in pairs])
        return counts, sum(counts.values())

    def new_surface(self) -> list[tuple[str, str]]:
        """The ``(surface word, term)`` pairs met since the last call: each word is given once."""
        from itertools import islice

        new = list(islice(self.surface.items(), self._given, None))
        self._given = len(self.surface)
        return new


_SHARED: list[Counting] = []


def shared_counting() -> Counting:
    """The process's ``Counting`` for texts counted outside a build (files searched without an
    index), renewed once it knows 200,000 runs."""
    if not _SHARED or len(_SHARED[0]) > 200_000:
        _SHARED[:] = [Counting()]
    return _SHARED[0]


def _resolved_terms(granularity: str, day: int) -> list[str]:
    year, month, number = dates.civil_from_days(day)
    if granularity == "day":
        return day_terms(year, month, number)
    if granularity == "month":
        return [MONTHS[month - 1], f"{year:04d}-{month:02d}"]
    return [str(year)]


def _relative_in_text(idents: list[str], day: str) -> list[tuple[str, str]]:
    """The terms of the relative dates a text written on ``day`` holds, where they are clear: the
    day's date and month-day, a month's year-month, a year. The coarser terms are the session's
    own (its header date) or near them, and each term more makes the section longer for BM25."""
    ref = dates.day_number(day)
    if ref is None:
        return []
    found: list[tuple[str, str]] = []
    for granularity, options in dates.relative(idents, ref):
        for when, weight in options:
            if weight >= dates.TEXT_WEIGHT:
                terms = _resolved_terms(granularity, when)
                found += [(t, t) for t in ((terms[0], terms[3]) if granularity == "day" else terms[-1:])]
    return found


AMBIGUOUS_WEIGHT = 0.6  # each reading of a date that may be day-first or month-first (01/02)
# How much a section holding the day asked for in a coarser form counts: the same day without its
# year (a date written "14/02"), the month of that year, the month of any year.
_DAY_OPTIONS = ((0, 1.0), (3, 0.9), (4, 0.4), (2, 0.3))  # positions in date_terms, weights
_NO_YEAR_OPTIONS = ((0, 0.9),)  # a day asked without its year: its month-day term


def _day_options(readings: list[tuple[int, int, int, float]]) -> list[tuple[str, float]]:
    """The options of one day asked for (each reading ``(year, month, day, weight)``)."""
    best: dict[str, float] = {}
    for year, month, day, weight in readings:
        terms = day_terms(year, month, day)
        for position, share in _DAY_OPTIONS if year else _NO_YEAR_OPTIONS:
            best[terms[position]] = max(best.get(terms[position], 0.0), weight * share)
    return list(best.items())


_KNOWN_DATE_WORDS = frozenset(w.lower() for w in (*_MONTH_SPELLINGS, *dates.TRIGGERS, *WEEKDAYS))


def _respelled(ident: str) -> str:
    """A question's word, or the date word it misspells ("Janury" for "january")."""
    if len(ident) < 5 or ident.lower() in _KNOWN_DATE_WORDS or ident.lower() in STOP or not ident.isalpha():
        return ident
    return dates.respelled(ident) or ident


def date_slots(text: str, today: int) -> tuple[list[tuple[str, list[tuple[str, float]]]], set[str]]:
    """A question's days, each one slot of alternative terms: ``([(slot, [(term, weight)])], terms)``.

    A day asked for is one thing the question says, however many terms a written date makes: the
    section holding that very date scores it fully, the same day without a year or the month a
    little, and the best option counts, so the forms of a date never add up against the rest of
    the question. Numeric and spoken days (``19.01.2024``, ``01/02``, ``Jan 19th``), relative ones
    resolved against ``today`` (days since 1970-01-01); ``terms`` are the plain terms the written
    dates made (``words``), which the slots replace.
    """
    written = _idents(text)
    idents = [_respelled(ident) for ident in written]
    slots: list[tuple[str, list[tuple[str, float]]]] = []
    consumed: set[str] = set()
    for at, ident in enumerate(idents):
        if ident[:1].isdigit() and not ident.isdigit():
            readings = dates.numeric(ident)
            if readings:
                # both readings less; with dashes (19-01-2024: Europe, India) month-first a little less still
                weights = [1.0] if len(readings) == 1 else [AMBIGUOUS_WEIGHT, AMBIGUOUS_WEIGHT - 0.1 * ("-" in ident)]
                slots.append((f"~{at}", _day_options([(*r, w) for r, w in zip(readings, weights)])))
                consumed.update(t for _, t in _ident_words(ident))
        elif ident in _MONTH_SPELLINGS:
            parts = _spoken_parts(idents, at)
            if parts is None or parts[1] is None:
                continue
            month, day, year, used = parts[0], parts[1], parts[2], parts[3]
            slots.append((f"~{at}", _day_options([(int(year or 0), month, day, 1.0)])))
            consumed.update(t for i in used for _, t in _ident_words(written[i]))
            consumed.update(t for _, t in _spoken_dates(idents, at))
    if not dates.TRIGGERS.isdisjoint(idents):
        for number, (granularity, days) in enumerate(dates.relative(idents, today, asked=True)):
            if granularity == "day":
                options = _day_options([(*dates.civil_from_days(when), weight) for when, weight in days])
            else:
                options = [(t, w) for when, w in days for t in _resolved_terms(granularity, when)]
            slots.append((f"~r{number}", options))
    return slots, consumed


_NON_ALNUM = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def plain_words(text: str) -> list[str]:
    """The words of ``text`` as written, folded, split at anything but letters and digits."""
    return fold(text).translate(_NON_ALNUM).split()


def tokenize(text: str) -> list[str]:
    """Search terms: whole identifiers plus their parts, folded and stemmed, stop words out."""
    return [term for _, term in words(text)]
