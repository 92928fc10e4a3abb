"""Reading the shell commands Claude runs: which of them are Keeper's own saves (and look-ups).

The counter resets on a save and the session record lists saves apart from other commands, so
both the PostToolUse hook and the transcript digest ask this one question the same way. Plain
string work, not a regex: importing ``re`` costs more than the whole PostToolUse hook.
"""

from __future__ import annotations

_SEPARATORS = ";&|()`<>"


def is_save_command(command: str) -> bool:
    """Whether a shell command runs ``keeper save`` (also ``python -m keeper save``, ``keeper.exe save``)."""
    return runs_keeper(command, _SAVE)


def runs_keeper(command: str, verbs: frozenset[str]) -> bool:
    """Whether a shell command runs ``keeper VERB`` for one of ``verbs`` (``python -m keeper``,
    ``keeper.exe`` or a quoted path to it too)."""
    for mark in _SEPARATORS:
        command = command.replace(mark, f" {mark} ")  # a separator stays a word of its own
    words = command.split()
    for word, following in zip(words, words[1:]):
        name = word.strip("'\"").replace("\\", "/").rsplit("/", 1)[-1]  # also a quoted path (Codex's requests)
        if name in ("keeper", "keeper.exe") and following in verbs:
            return True
    return False


_SAVE = frozenset({"save"})
# Keeper's own commands that look memory up or save it: what a session gives them is no use of an item.
MEMORY_COMMANDS = frozenset({"save", "recall", "why", "expand", "status", "transcript", "projects", "hub", "restore"})
