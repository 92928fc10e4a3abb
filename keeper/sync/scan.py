"""What leaves the machine is scanned for secrets, in file names as well as contents: a push that
would carry one is refused with the file (its name redacted) and the line."""

from __future__ import annotations

import re

from keeper import redact
from keeper.errors import KeeperError
from keeper.store import paths

_USUAL_NAME = re.compile(r"\d{4}-\d\d-\d\d_\d{4}(-\d+)?(@[0-9a-f]+)?(-[0-9a-f]+)*\.md")


def _secret_line(data: bytes, patterns: list[str]) -> int | None:
    text = data.decode("utf-8", "replace")
    if redact.redact(text, patterns) == text:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if redact.redact(line, patterns) != line:
            return number
    return 1


def check(outgoing: dict[str, bytes], patterns: dict[str, list[str]]) -> None:
    """Refuse to push a file that still holds a secret, in its text or in its name: the message
    names the file (its name redacted) and the line."""
    for path in sorted(outgoing):
        prefix = "/".join(path.split("/")[:2]) if path.startswith(paths.PROJECTS_DIR + "/") else "global"
        rules = patterns.get(prefix, [])
        shown = secret_name(path, rules)
        if shown is not None:
            raise KeeperError(
                f"not pushing: the file name {shown} looks like it holds a secret (a token, key or password); "
                "your local files are unchanged. Rename or remove that file, then run keeper sync again."
            )
        line = _secret_line(outgoing[path], rules)
        if line is not None:
            raise KeeperError(
                f"not pushing: {path} line {line} looks like a secret (a token, key or password); "
                "your local file is unchanged. Remove that line from the memory file, then run keeper sync again."
            )


def shown_name(path: str) -> str:
    """``path`` (a file name, or a path with ``/``) as Keeper may print it: a secret in its file
    name redacted."""
    found = secret_name(path if "/" in path else f"./{path}", [])
    if found is None:
        return path
    return found if "/" in path else found[2:]


def secret_name(path: str, rules: list[str]) -> str | None:
    """``path`` with the secret in its file name redacted, or None when it holds none. Names Keeper
    gives (``2026-11-24_0930@a1b2c3.md``) cost nothing; any other is read from each word's start,
    since a token glued to a word (``notes_ghp_…``) is not one the text scan sees."""
    folder, _, name = path.rpartition("/")
    if _USUAL_NAME.fullmatch(name) or name in (paths.MEMORY_FILE, paths.REMOVALS, paths.SYNC_MARKER):
        return None
    for at in [0, *(i + 1 for i, c in enumerate(name) if c in "_-@. ")]:
        rest = name[at:]
        hidden = redact.redact(rest, rules)
        if hidden != rest:
            return f"{folder}/{name[:at]}{hidden}"
    return None
