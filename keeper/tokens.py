"""The tokenizer recall and its index share: text to search terms.

Tokens split code identifiers (``order_service``, ``getUserById``, ``src/api/cache.py``) and
fold case and accents; a light stemmer joins plurals and verb forms; stop words are left out.
Each term keeps the word as written beside it, because typos are closest before stemming.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+|_", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IDENT = re.compile(r"[A-Za-z0-9_./\\-]*[A-Za-z0-9]")
_STOP = frozenset(
    (  # noqa: SIM905 - a word list reads best as text
        "a an and are as at be but by for from has have how i if in into is it its of on or our so that the "
        "their then there these this to was we were what when where which who why will with you your did do does"
    ).split()
)


def fold(text: str) -> str:
    """Lower case without accents, so ``Café`` and ``cafe`` match."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def stem(word: str) -> str:
    """A deliberately light English stemmer: enough to join 'caches'/'caching'/'cached'."""
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


_WORD_CACHE: dict[str, tuple[tuple[str, str], ...]] = {}


def _plain(ident: str) -> bool:
    """A word with nothing to split (``cache``, ``Cache``, ``HTTP``, ``v2``): the common case."""
    return ident.isalnum() and (ident.islower() or ident.isupper() or ident[1:].islower())


def _ident_words(ident: str) -> tuple[tuple[str, str], ...]:
    found = _WORD_CACHE.get(ident)
    if found is not None:
        return found
    parts = [ident] if _plain(ident) else [p for p in re.split(r"[_./\\-]+", ident) for p in _CAMEL.split(p) if p]
    out: list[tuple[str, str]] = []
    if len(parts) > 1:
        whole = fold(ident)
        out.append((whole, whole))
    out.extend((p, stem(p)) for p in (fold(p) for p in parts) if p not in _STOP)
    if len(_WORD_CACHE) < 200_000:
        _WORD_CACHE[ident] = tuple(out)
    return tuple(out)


def words(text: str) -> list[tuple[str, str]]:
    """``(surface, term)`` pairs: the folded word as written and its search term (stemmed).

    Whole identifiers count as well as their parts; stop words are left out.
    """
    found: list[tuple[str, str]] = []
    for ident in _IDENT.findall(text):
        found.extend(_ident_words(ident))
    if not text.isascii():  # non-ASCII words, which the identifier pattern does not cover
        found.extend((fold(w), stem(fold(w))) for w in _WORD.findall(text) if not w.isascii())
    return [(raw, term) for raw, term in found if term and term != "_"]


def tokenize(text: str) -> list[str]:
    """Search terms: whole identifiers plus their parts, folded and stemmed, stop words out."""
    return [term for _, term in words(text)]
