"""OpenCode sessions: what an OpenCode session did, folded into the same digest as Claude Code's.

OpenCode keeps sessions in SQLite; Keeper's plugin (``opencode/keeper.js``) writes a session's
messages, as ``client.session.messages()`` gives them, one JSON line each: ``{"info", "parts"}``.
``info.role`` is ``user`` or ``assistant``; a user's ``text`` parts are the prompt (``synthetic``
ones are contexts a plugin added: Keeper's recall among them); an assistant's ``tool`` parts hold
the tool, its input and its state (``completed`` or ``error``). Anything else, or of another shape,
is passed over: the format is OpenCode's own and changes between versions.
"""

from __future__ import annotations

from keeper.text import name_from

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from keeper.capture.transcript import Activity

_FILES = {"write": "written", "edit": "edited", "patch": "edited"}


def is_record(entry: dict[str, Any]) -> bool:
    return isinstance(entry.get("info"), dict) and isinstance(entry.get("parts"), list)


def stamp(entry: dict[str, Any]) -> str:
    """When the message was created, as the ISO time the other formats carry ("" when unknown)."""
    import datetime

    time = entry["info"].get("time")
    created = time.get("created") if isinstance(time, dict) else None
    if not isinstance(created, (int, float)) or isinstance(created, bool):
        return ""
    try:
        moment = datetime.datetime.fromtimestamp(created / 1000, tz=datetime.timezone.utc)
    except (ValueError, OverflowError, OSError):  # NaN, infinite, or past the years a date holds
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(created) % 1000:03d}Z"


def _parts(entry: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in entry["parts"] if isinstance(p, dict) and p.get("type") == kind]


def prompt_of(entry: dict[str, Any]) -> str:
    """A user message's own words: its text parts that no plugin added."""
    if entry["info"].get("role") != "user":
        return ""
    texts = [p["text"] for p in _parts(entry, "text") if isinstance(p.get("text"), str) and not p.get("synthetic")]
    return "\n".join(t.strip() for t in texts if t.strip())


def _tool(part: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    state = part.get("state")
    state = state if isinstance(state, dict) else {}
    given = state.get("input")
    return name_from(part.get("tool"), "tool"), given if isinstance(given, dict) else {}, state


def fold(activity: Activity, entry: dict[str, Any]) -> None:
    """Fold one message into ``activity``."""
    text = prompt_of(entry)
    if text:
        activity.note_prompt(text)
    elif entry["info"].get("role") == "assistant":
        texts = [p["text"] for p in _parts(entry, "text") if isinstance(p.get("text"), str)]
        activity.note_said("text", "\n".join(texts))
    for part in _parts(entry, "tool"):
        name, given, state = _tool(part)
        activity.tools[name] = activity.tools.get(name, 0) + 1
        activity.note_input(name, given)
        if name == "bash" and isinstance(given.get("command"), str):
            activity.note_command(given["command"])
        path = given.get("filePath")
        if name in _FILES and isinstance(path, str):
            activity.note_file(path, _FILES[name])
        if state.get("status") == "error":
            said = state.get("error")
            activity.note_error(name, said if isinstance(said, str) else "error")
    if _parts(entry, "compaction"):
        activity.compactions += 1


def turn_lines(entry: dict[str, Any], short: Callable[[str, int], str]) -> tuple[tuple[str, str] | None, list[str]]:
    """For ``keeper transcript``: ``((message id, prompt), [])`` when this message starts a turn, else the
    lines it adds to the current one (``short`` cuts a text to a length)."""
    text = prompt_of(entry)
    if text:
        return (str(entry["info"].get("id", "")), text), []
    lines = []
    for part in entry["parts"] if entry["info"].get("role") == "assistant" else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            lines.append(f"OpenCode: {short(part['text'].strip(), 600)}")
        elif part.get("type") == "tool":
            name, given, state = _tool(part)
            lines.append(f"  -> {name}: {short(str(given.get('command') or given.get('filePath') or ''), 200)}")
            if state.get("status") == "error":
                lines.append(f"  !! {name} failed: {short(str(state.get('error') or ''), 200)}")
    return None, lines
