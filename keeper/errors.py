"""The one error type a user can meet; anything else is a bug and stays loud."""

from __future__ import annotations


class KeeperError(Exception):
    """A problem the user can fix. The message says what happened and what to do next."""
