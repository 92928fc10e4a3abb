"""Reading the shell commands Claude runs: which of them are Keeper's own saves.

The counter resets on a save and the session record lists saves apart from other commands, so
both the PostToolUse hook and the transcript digest ask this one question the same way. Plain
string work, not a regex: importing ``re`` costs more than the whole PostToolUse hook.
"""

from __future__ import annotations

_SEPARATORS = ";&|()`<>"


def is_save_command(command: str) -> bool:
    """Whether a shell command runs ``keeper save`` (also ``python -m keeper save``, ``keeper.exe save``)."""
    for mark in _SEPARATORS:
        command = command.replace(mark, f" {mark} ")  # a separator stays a word of its own
    words = command.split()
    for word, following in zip(words, words[1:]):
        name = word.strip("'\"").replace("\\", "/").rsplit("/", 1)[-1]  # also a quoted path (Codex's requests)
        if name in ("keeper", "keeper.exe") and following == "save":
            return True
    return False
