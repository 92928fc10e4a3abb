"""Codex CLI rollouts (``rollout-*.jsonl``): what a Codex session did, folded into the same digest as Claude Code's.

A rollout line is ``{"timestamp", "type", "payload"}``. The model's conversation is in
``response_item`` lines, but what happened is told once and whole by ``event_msg`` lines of type
``item_completed``: a ``UserMessage`` (the prompt as typed; hook contexts, a Stop hook's
``HookPrompt`` and Codex's environment messages are other items), a ``CommandExecution`` (the
command, its exit code and output) or a ``FileChange`` (``apply_patch``'s files by absolute path,
added, updated, moved or deleted). A ``compacted`` line marks a compaction. Anything else, or of
another shape, is passed over: the format is Codex's own and changes between versions.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from keeper.capture.transcript import Activity

KINDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_CHANGES = {"add": "written", "update": "edited", "delete": "deleted"}


def _command(value: object) -> str:
    """The command line the model asked for: ``bash -lc CMD`` is reported as the argument list."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ""
    if len(value) == 3 and value[1] in ("-lc", "-c"):
        return str(value[2])
    return " ".join(value)


def _text(content: object) -> str:
    blocks = content if isinstance(content, list) else []
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def fold(activity: Activity, entry: dict[str, Any]) -> None:
    """Fold one rollout line into ``activity`` (its timestamp is taken by the caller)."""
    if entry.get("type") == "compacted":
        activity.compactions += 1
        return
    payload = entry.get("payload")
    if entry.get("type") != "event_msg" or not isinstance(payload, dict) or payload.get("type") != "item_completed":
        return
    item = payload.get("item")
    if not isinstance(item, dict):
        return
    kind = item.get("type")
    if kind == "UserMessage":
        text = _text(item.get("content")).strip()
        if text:
            activity.note_prompt(text)
    elif kind == "AgentMessage":
        activity.note_said("text", _text(item.get("content")))
    elif kind == "CommandExecution":
        activity.tools["Bash"] = activity.tools.get("Bash", 0) + 1  # the name Codex's hooks give its shell tool
        command = _command(item.get("command"))
        activity.note_command(command)
        activity.note_input("Bash", {"command": command})
        code = item.get("exit_code")
        if item.get("status") == "failed" or (isinstance(code, int) and code != 0):
            output = item.get("aggregated_output")
            activity.note_error("Bash", f"exit {code}: {output if isinstance(output, str) else ''}")
    elif kind == "FileChange":
        activity.tools["apply_patch"] = activity.tools.get("apply_patch", 0) + 1
        _file_change(activity, item)
        activity.note_said("tool:apply_patch", _patched(item.get("changes")))


def _patched(changes: object) -> str:
    """A patch as text: the files it names and the texts it gives them."""
    found: list[str] = []
    for path, change in (changes if isinstance(changes, dict) else {}).items():
        found.append(str(path))
        found += [v for v in (change.values() if isinstance(change, dict) else ()) if isinstance(v, str)]
    return "\n".join(found)


def _file_change(activity: Activity, item: dict[str, Any]) -> None:
    changes = item.get("changes")
    for path, change in (changes if isinstance(changes, dict) else {}).items():
        how = _CHANGES.get(str(change.get("type"))) if isinstance(change, dict) else None
        if not isinstance(path, str) or how is None:
            continue
        moved = change.get("move_path")
        if isinstance(moved, str) and moved:
            activity.note_file(path, "deleted")
            activity.note_file(moved, "written")
        else:
            activity.note_file(path, how)
    if item.get("status") == "failed":
        said = [item.get(k) for k in ("stderr", "stdout")]
        activity.note_error("apply_patch", next((s for s in said if isinstance(s, str) and s.strip()), "failed"))


def turn_lines(entry: dict[str, Any], short: Callable[[str, int], str]) -> tuple[tuple[str, str] | None, list[str]]:
    """For ``keeper transcript``: ``((item id, prompt), [])`` when this line starts a turn, else the
    lines it adds to the current one (``short`` cuts a text to a length)."""
    if entry.get("type") == "compacted":
        return None, ["(the conversation was compacted here)"]
    payload = entry.get("payload")
    item = payload.get("item") if isinstance(payload, dict) and payload.get("type") == "item_completed" else None
    if entry.get("type") != "event_msg" or not isinstance(item, dict):
        return None, []
    kind = item.get("type")
    if kind == "UserMessage":
        text = _text(item.get("content")).strip()
        return ((str(item.get("id", "")), text) if text else None), []
    if kind == "AgentMessage":
        text = _text(item.get("content")).strip()
        return None, [f"Codex: {short(text, 600)}"] if text else []
    if kind == "CommandExecution":
        lines = [f"  -> Bash: {short(_command(item.get('command')), 200)}"]
        code, output = item.get("exit_code"), item.get("aggregated_output")
        if item.get("status") == "failed" or (isinstance(code, int) and code != 0):
            first = (output if isinstance(output, str) else "").strip().splitlines()
            lines.append(f"  !! Bash failed: exit {code}: {short(first[0] if first else '', 200)}")
        return None, lines
    if kind == "FileChange":
        changes = item.get("changes")
        paths = [p for p in (changes if isinstance(changes, dict) else {}) if isinstance(p, str)]
        return None, [f"  -> apply_patch: {short(', '.join(paths), 200)}"]
    return None, []
