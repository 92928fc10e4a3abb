"""Dates as people write them: numeric forms read as calendar days, relative ones resolved.

Numeric forms: ``19.01.2024``, ``19/01/2024``, ``01/19/2024``, ``2024/01/19``, ``19-01-2024``,
``19/01/24``, and without a year ``19/1``, ``1/19``, ``19.01``. A part above 12 tells day-first
from month-first; otherwise (``01/02/2024``) both readings come back, and the caller weighs each
less. Dots are read day-first only, and without a year only as two two-digit parts (``19.01``;
``3.11`` is a version). Relative forms ("yesterday", "3 days ago", "two weeks ago", "last
Friday", "last weekend", "last week", "last month", "last year", "on the 19th") are resolved
against a reference day: today for a question, the session's own date for its text.

This is recall's one calendar: days are counted from 1970-01-01 (``days_from_civil``,
``civil_from_days``, ``day_number`` of a ``YYYY-MM-DD``), and the month and weekday names live
here. The calendar terms recall indexes are made from these days by ``keeper.recall.tokens``.
Plain string operations, no ``re`` and no ``datetime``: recall runs in hooks.
"""

from __future__ import annotations

TEXT_WEIGHT = 0.8  # relative dates in a session's text count only when resolved this surely
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3, "several": 3,
}  # fmt: skip
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
EPOCH_WEEKDAY = 3  # 1970-01-01, day 0, was a Thursday
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_WEEKDAY_OF = {**{d: i for i, d in enumerate(WEEKDAYS)}, **{d + "s": i for i, d in enumerate(WEEKDAYS)}}
_MONTH_WORDS = frozenset(w for m in MONTHS for w in (m, m[:3]))
_LEADS = frozenset(("on", "by", "until", "till", "since", "from", "before", "after", "for"))
_SUFFIXES = ("st", "nd", "rd", "th")
_ORDINALS = frozenset(
    f"{day}{_SUFFIXES[day % 10 - 1] if day % 10 in (1, 2, 3) and day not in (11, 12, 13) else 'th'}"
    for day in range(1, 32)
)
TRIGGERS = frozenset(
    spelling for word in ("yesterday", "ago", "last", *_ORDINALS) for spelling in (word, word.title(), word.upper())
)  # any of these among a text's words: look for relative dates


SPELLED = tuple((word, frozenset(word)) for word in (*MONTHS, *WEEKDAYS, "yesterday", "weekend"))


def _distance(a: str, b: str, bound: int) -> int:
    """Edits (a letter deleted, added, changed, or two swapped) from ``a`` to ``b``; ``bound + 1`` beyond ``bound``."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > bound:
            return bound + 1
        before, row = row, current
    return row[-1]


def respelled(word: str) -> str | None:
    """The month, weekday or relative word a mistyped word stands for ("Janury", "yesterdy"), if any.

    One slip in a word of five or six letters, two in a longer one, the first or second letter
    kept; the word itself when it is one.
    """
    lower = word.lower()
    if len(lower) < 5 or not lower.isalpha():
        return None
    bound = 1 if len(lower) <= 6 else 2
    letters = frozenset(lower)
    for spelled, needed in SPELLED:
        if lower[0] != spelled[0] and lower[1] != spelled[1]:  # as typo correction: a slip spares one of the two
            continue
        if abs(len(lower) - len(spelled)) > bound or len(needed - letters) > bound:  # each slip brings one letter
            continue
        if _distance(lower, spelled, bound) <= bound:
            return spelled
    return None


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a date (proleptic Gregorian)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """``(year, month, day)`` of a day counted from 1970-01-01."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _valid(year: int, month: int, day: int) -> bool:
    """Whether the day exists (year 0, not written, counts as a leap year: 29/2 may be meant)."""
    if not (1 <= month <= 12 and day >= 1):
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _DAYS_IN_MONTH[month - 1] + (month == 2 and leap)


def day_number(iso: object) -> int | None:
    """The day of a ``YYYY-MM-DD`` (what follows the first ten characters is ignored) counted
    from 1970-01-01; None for anything that is not a calendar day."""
    if not isinstance(iso, str) or len(iso) < 10 or iso[4] != "-" or iso[7] != "-":
        return None
    year, month, day = iso[:4], iso[5:7], iso[8:10]
    if not all(part.isascii() and part.isdigit() for part in (year, month, day)):
        return None
    if not _valid(int(year), int(month), int(day)):
        return None
    return days_from_civil(int(year), int(month), int(day))


def weekday(days: int) -> str:
    """The weekday's name of a day counted from 1970-01-01."""
    return WEEKDAYS[(days + EPOCH_WEEKDAY) % 7]


def numeric(ident: str) -> list[tuple[int, int, int]]:
    """The days a numeric date may mean, as ``(year, month, day)``; year 0 when it is not written.

    Two readings for an ambiguous one (``01/02/2024``), day-first first; none for anything that
    is not a date.
    """
    sep = "/" if "/" in ident else "." if "." in ident else "-" if "-" in ident else ""
    if not sep:
        return []
    parts = ident.split(sep)
    if not all(p.isdigit() and p.isascii() for p in parts) or len(parts) not in (2, 3):
        return []
    sizes = [len(p) for p in parts]
    if len(parts) == 3 and sizes[0] == 4 and sizes[1] <= 2 and sizes[2] <= 2:  # 2024/01/19
        year, month, day = int(parts[0]), int(parts[1]), int(parts[2])
        return [(year, month, day)] if 1900 <= year <= 2199 and _valid(year, month, day) else []
    if len(parts) == 3:
        if sizes[2] == 4:
            year = int(parts[2])
        elif sizes[2] == 2 and sep != "-" and (sep == "/" or sizes[:2] == [2, 2]):
            year = 2000 + int(parts[2])
        else:
            return []
        if sizes[0] > 2 or sizes[1] > 2 or not 1900 <= year <= 2199:
            return []
    elif (sep == "/" and sizes[0] <= 2 and sizes[1] <= 2) or (sep == "." and sizes == [2, 2]):  # 19/1, 19.01
        year = 0
    else:
        return []
    first, second = int(parts[0]), int(parts[1])
    readings = [(year, second, first)]  # day-first
    if sep != "." and first != second:
        readings.append((year, first, second))  # month-first
    return [r for r in readings if _valid(*r)]


def _count(word: str) -> int | None:
    if word.isdecimal() and len(word) <= 3:  # not "²", a digit int() refuses
        return int(word)
    return _NUMBERS.get(word)


def _ordinal_day(word: str) -> int | None:
    if word in _ORDINALS:
        return int(word[:-2])
    return None


def _month_shift(days: int, months: int) -> int:
    """The first day of the month ``months`` before the month of ``days``."""
    year, month, _ = civil_from_days(days)
    index = year * 12 + month - 1 - months
    return days_from_civil(index // 12, index % 12 + 1, 1)


def _nearest_day_of_month(ref: int, day: int, past_only: bool) -> list[tuple[int, float]]:
    """The days numbered ``day`` in the months around ``ref``: the likeliest first, at full weight."""
    year, month, _ = civil_from_days(ref)
    found = []
    for back in (-1, 0, 1, 2):
        index = year * 12 + month - 1 - back
        y, m = index // 12, index % 12 + 1
        if _valid(y, m, day):
            found.append(days_from_civil(y, m, day))
    if past_only:
        found = [d for d in found if d <= ref]
    found.sort(key=lambda d: abs(ref - d))
    return [(d, 1.0 if i == 0 else 0.4) for i, d in enumerate(found[:2])]


def relative(idents: list[str], ref: int, asked: bool = False) -> list[tuple[str, list[tuple[int, float]]]]:
    """Relative dates among ``idents`` (a text's words as written), resolved against day ``ref``.

    Each is ``(granularity, [(day, weight), ...])``: granularity ``day`` (the days it may mean,
    the likeliest at weight 1), ``month`` (any day of the month meant) or ``year``. ``asked``: the
    words are a question's, so a bare "the 19th" is the latest one, not the nearest.
    """
    out: list[tuple[str, list[tuple[int, float]]]] = []
    lower = [w.lower() for w in idents]
    for at, word in enumerate(lower):
        if word not in TRIGGERS:
            continue
        before = lower[at - 1] if at else ""
        after = lower[at + 1] if at + 1 < len(lower) else ""
        if word == "yesterday":
            found: tuple[str, list[tuple[int, float]]] | None = ("day", [(ref - (2 if before == "before" else 1), 1.0)])
        elif word == "ago":
            found = _ago(lower, at, ref) if before in _UNITS else None
        elif word == "last":
            found = _last(after, ref)
        else:
            found = _the_nth(lower, at, ref, asked)
        if found is not None:
            out.append(found)
    return out


def _ago(lower: list[str], at: int, ref: int) -> tuple[str, list[tuple[int, float]]] | None:
    """ "3 days ago", "a couple of weeks ago", "a few months ago", "a year ago": ``lower[at]`` is "ago"."""
    before = lower[at - 1]
    count = _count(lower[at - 2]) if at > 1 else None
    if count is None and at > 2 and lower[at - 2] == "of":
        count = _count(lower[at - 3])
    if count is None and before in ("day", "week", "month", "year"):
        count = 1
    if count is None or count > 400:
        return None
    unit = _UNITS[before]
    vague = not set(lower[max(at - 3, 0) : at - 1]).isdisjoint(("few", "several"))
    if unit == 1:
        centre = ref - count
        spread = 2 if vague else 1 if count >= 2 else 0
        return "day", [(centre + d, 1.0 if d == 0 else 0.5) for d in range(-spread, spread + 1)]
    if unit == 7:
        centre = ref - 7 * count
        return "day", [(centre + d, 1.0 - 0.15 * abs(d)) for d in range(-3, 4)]
    if unit == 30:
        return "month", [(_month_shift(ref, count), 1.0)]
    return "year", [(days_from_civil(civil_from_days(ref)[0] - count, 1, 1), 1.0)]


def _last(after: str, ref: int) -> tuple[str, list[tuple[int, float]]] | None:
    """ "last Friday", "last night", "last weekend", "last week", "last month", "last year"."""
    day_of_week = _WEEKDAY_OF.get(after)
    if day_of_week is not None:
        back = (ref + EPOCH_WEEKDAY - day_of_week) % 7 or 7
        return "day", [(ref - back, 1.0), (ref - back - 7, 0.5)]
    if after == "night":
        return "day", [(ref - 1, 0.9)]
    if after == "weekend":
        sunday = ref - ((ref + EPOCH_WEEKDAY - 6) % 7 or 7)
        return "day", [(sunday - 1, 0.8), (sunday, 0.8)]
    if after == "week":
        monday = ref - (ref + EPOCH_WEEKDAY) % 7 - 7
        return "day", [(monday + d, 0.6) for d in range(7)]
    if after == "month":
        return "month", [(_month_shift(ref, 1), 1.0)]
    if after == "year":
        return "year", [(days_from_civil(civil_from_days(ref)[0] - 1, 1, 1), 1.0)]
    return None


def _the_nth(lower: list[str], at: int, ref: int, asked: bool) -> tuple[str, list[tuple[int, float]]] | None:
    """ "on the 19th": a day of a month near ``ref``; "the 19th of May" is a written date (``keeper.recall.tokens``)."""
    day = _ordinal_day(lower[at])
    if day is None or at < 2 or lower[at - 1] != "the" or lower[at - 2] not in _LEADS:
        return None
    after = lower[at + 1] if at + 1 < len(lower) else ""
    if after in _MONTH_WORDS or after == "of":
        return None
    return "day", _nearest_day_of_month(ref, day, past_only=asked)
