"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.jsonl``): what a Gemini session did, folded
into the same digest as Claude Code's and Codex's.

Line 1 holds the session (``sessionId``, ``projectHash``, ``kind``); ``{"$set": ...}`` lines update
it. Every other line is a message record ``{"id", "timestamp", "type", "content", ...}``: a ``user``
record is a prompt (``content`` text parts; hook contexts ride along as ``<hook_context>`` text) or a
tool result (``functionResponse`` parts); a ``gemini`` record is the model's turn, written twice
with the same ``id`` (without, then with its ``toolCalls``), so records are taken once by id and
tool calls once by theirs. Anything else, or of another shape, is passed over: the format is
Gemini's own and changes between versions.
"""

from __future__ import annotations

from keeper.text import name_from

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from keeper.capture.transcript import Activity

KINDS = frozenset({"user", "gemini"})
SHELL = "run_shell_command"
_FILES = {"write_file": "written", "replace": "edited"}
HOOK_CONTEXT = "<hook_context>"
OWN_REQUEST = "Keeper memory: "  # AfterAgent's save request comes back as a user record: not a prompt


def is_record(entry: dict[str, Any]) -> bool:
    """Whether a JSONL line is a Gemini chat record (Claude Code's ``user`` lines carry a ``message``)."""
    return entry.get("type") in KINDS and "message" not in entry and "content" in entry


def without_hook_context(text: str) -> str:
    """A prompt as the user typed it: Gemini puts a SessionStart context in front of it in ``-p`` mode."""
    while text.startswith(HOOK_CONTEXT):
        end = text.find("</hook_context>")
        if end < 0:
            return ""
        text = text[end + len("</hook_context>") :].lstrip()
    return text


def prompt_of(content: object) -> str:
    """The user's own words in a ``user`` record: its text parts, hook contexts left out."""
    if isinstance(content, str):
        return without_hook_context(content).strip()
    parts = content if isinstance(content, list) else []
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    said = [without_hook_context(t).strip() for t in texts if not t.startswith("<session_context>")]
    return "\n".join(t for t in said if t and not t.startswith(OWN_REQUEST))


def _calls(entry: dict[str, Any], seen: set[str]) -> list[dict[str, Any]]:
    """The record's tool calls not folded before (the second copy of a record repeats the first's)."""
    found = []
    calls = entry.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        key = f"gemini:{call.get('id')}"
        if key in seen:
            continue
        seen.add(key)
        found.append(call)
    return found


def _output(call: dict[str, Any]) -> str:
    shown = call.get("resultDisplay")
    return shown if isinstance(shown, str) else ""


def fold(activity: Activity, entry: dict[str, Any], seen: set[str]) -> None:
    """Fold one chat record into ``activity``; ``seen`` holds the record and call ids folded already."""
    if entry.get("type") == "user":
        key = f"gemini-user:{entry.get('id')}"
        if key in seen:
            return
        seen.add(key)
        text = prompt_of(entry.get("content"))
        if text:
            activity.note_prompt(text)
        return
    said = entry.get("content")
    activity.note_said("text", said if isinstance(said, str) else prompt_of(said))
    for call in _calls(entry, seen):
        name = name_from(call.get("name"), "tool")
        activity.tools[name] = activity.tools.get(name, 0) + 1
        raw = call.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        activity.note_input(name, args)
        if name == SHELL and isinstance(args.get("command"), str):
            activity.note_command(args["command"])
        path = args.get("file_path")
        if name in _FILES and isinstance(path, str):
            activity.note_file(path, _FILES[name])
        if call.get("status") == "error":
            activity.note_error(name, _output(call) or "error")


def turn_lines(
    entry: dict[str, Any], seen: set[str], short: Callable[[str, int], str]
) -> tuple[tuple[str, str] | None, list[str]]:
    """For ``keeper transcript``: ``((record id, prompt), [])`` when this record starts a turn, else the
    lines it adds to the current one (``short`` cuts a text to a length)."""
    if entry.get("type") == "user":
        key = f"gemini-user:{entry.get('id')}"
        text = "" if key in seen else prompt_of(entry.get("content"))
        seen.add(key)
        return ((str(entry.get("id", "")), text) if text else None), []
    lines = []
    said = entry.get("content")
    key = f"gemini-said:{entry.get('id')}"
    if isinstance(said, str) and said.strip() and key not in seen:
        seen.add(key)
        lines.append(f"Gemini: {short(said.strip(), 600)}")
    for call in _calls(entry, seen):
        args = call.get("args")
        shown = args.get("command") or args.get("file_path") if isinstance(args, dict) else ""
        lines.append(f"  -> {call.get('name')}: {short(str(shown or ''), 200)}")
        if call.get("status") == "error":
            lines.append(f"  !! {call.get('name')} failed: {short(_output(call), 200)}")
    return None, lines
