"""Words for people: a count with its noun in the right number ("1 decision", "2 decisions")."""

from __future__ import annotations


def count(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun``, made plural (``noun + "s"``, or ``plural``) unless ``n`` is exactly 1."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def inline(text: str) -> str:
    """``text`` fit to stand inside a line of Keeper's own: a line break, a control or an invisible
    separator character (which a folder name can hold) becomes U+FFFD."""
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in text)


def shown(text: object, limit: int = 200) -> str:
    """Text from a record (another machine's, an archive's: a machine, branch or file name) fit for
    a terminal or Claude's context: one line, with every control character, escape sequence start
    and invisible separator as U+FFFD (``inline``), and at most ``limit`` characters."""
    flat = inline(str(text)[: limit + 1])
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def name_from(value: object, fallback: str, limit: int = 64) -> str:
    """A name a record gives (a tool's, in a transcript), fit to count and list on a line: text of at
    most ``limit`` printable characters, else ``fallback`` (a number, a line break that would start a
    line of its own, an object nested 900 deep written out as 9 KB of braces)."""
    return value if isinstance(value, str) and 0 < len(value) <= limit and value.isprintable() else fallback
