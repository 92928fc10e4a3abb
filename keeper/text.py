"""Words for people: a count with its noun in the right number ("1 decision", "2 decisions")."""

from __future__ import annotations


def count(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun``, made plural (``noun + "s"``, or ``plural``) unless ``n`` is exactly 1."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
