"""The save keys, in one table: the save format's parser, ``keeper save``'s flags and memory.md's
sections all read it, so a new key is one row here (and, when it needs one, its merge rule in
``keeper.memory.document``).

Imports nothing. The save format reads it only when a save is read: the hook that asks for a save
writes the format's template alone, and imports no more for it.
"""

from __future__ import annotations


class SaveKey:
    """One key of a save: its name in the save format, and how ``keeper save`` and memory.md take it.
    (A plain class: ``typing`` is too slow to import on the hook path.)"""

    __slots__ = ("flag", "headings", "help", "kind", "merge", "name", "title")

    def __init__(
        self, name: str, kind: str, merge: str, flag: str, help: str, title: str = "", headings: tuple[str, ...] = ()
    ) -> None:
        self.name, self.kind, self.flag, self.help = name, kind, flag, help
        # the merge rule (``keeper.memory.document.merge``): "recent", "add", "replace", "resolve",
        # "retire", "typed" (merged like Core Decisions, in its own section) or "scope" (where typed lists go)
        self.merge = merge
        # a typed key's memory.md section, and the headings read as it (folded as ``Section.key`` folds
        # them: lower case letters and digits, single spaces)
        self.title, self.headings = title, headings


KEYS = (
    SaveKey("summary", "text", "recent", "--summary", "what this session did (text)"),
    SaveKey("decisions", "list", "add", "--decision", "a durable decision (repeatable)"),
    SaveKey("state", "list", "replace", "--state", "a current-state line (repeatable)"),
    SaveKey("issues", "list", "add", "--issue", "an open issue (repeatable)"),
    SaveKey("resolved", "list", "resolve", "--resolved", "a fixed issue to remove (repeatable)"),
    SaveKey("retired", "list", "retire", "--retired", "a decision that no longer holds (repeatable)"),
    SaveKey(
        "feedback", "list", "typed", "--feedback", "a correction not to repeat (repeatable)", "Feedback", ("feedback",)
    ),
    SaveKey("user", "list", "typed", "--user", "who the user is, a preference (repeatable)", "User", ("user",)),
    SaveKey(
        "tool",
        "list",
        "typed",
        "--tool",
        "a binary or service: install, config, gotchas (repeatable)",
        "Tools",
        ("tools", "tool"),
    ),
    SaveKey(
        "reference",
        "list",
        "typed",
        "--reference",
        "stable technical knowledge (repeatable)",
        "Reference",
        ("reference", "references"),
    ),
    SaveKey("scope", "text", "scope", "", ""),
)
TYPED = tuple(key.name for key in KEYS if key.merge == "typed")
TEXT_KEYS = tuple(key.name for key in KEYS if key.kind == "text")
LIST_KEYS = tuple(key.name for key in KEYS if key.kind == "list")
KNOWN_KEYS = TEXT_KEYS + LIST_KEYS  # in this order in the parser's messages
