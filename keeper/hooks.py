"""``keeper hook EVENT``: Claude Code's hook JSON in, exactly one JSON object out, exit 0 always.

This is the hot path (PostToolUse runs on every tool call), so at module level it imports the
standard library and Keeper's stdlib-only modules; yaml, filelock and rapidfuzz load only on a
branch that needs them. Every input is answered: bad stdin is logged and treated as empty, and
any error is logged in one line while the hook still prints ``{}`` and exits 0.
"""

from __future__ import annotations

import os
import sys

from keeper import config, jsonio, log, paths, stats, tally
from keeper.errors import KeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Reply = dict[str, Any]  # one JSON object

MAX_STDIN = 32 << 20
_SEPARATORS = ";&|()`<>"
_SLASH_COMMANDS = ("keeper:recall", "recall", "keeper:clear")


class Call:
    """One hook invocation: the payload and the project, config and session it resolves to."""

    def __init__(self, event: str, payload: dict[str, Any]) -> None:
        self.event = event
        self.payload = payload
        raw_session = self.text("session_id") or os.environ.get("CLAUDE_CODE_SESSION_ID", "")
        self.session = paths.safe_session_id(raw_session)
        self.has_session = self.session != "unknown"
        root = paths.find_project_root(self._start_dir())
        self.cfg = config.load(root)
        pinned = self.cfg.get("project")
        try:
            pinned = paths.check_pinned_name(pinned, os.path.join(root, paths.PROJECT_CONFIG)) if pinned else None
        except KeeperError as exc:
            self.cfg.warnings.append(f"{exc} Using the folder's own id until it is fixed.")
            pinned = None
        self.project = paths.make_project(root, pinned)

    def text(self, key: str) -> str:
        value = self.payload.get(key)
        return value if isinstance(value, str) else ""

    def _start_dir(self) -> str:
        for candidate in (os.environ.get("CLAUDE_PROJECT_DIR", ""), self.text("cwd")):
            if candidate and "\x00" not in candidate and os.path.isdir(candidate):
                return candidate
        return os.getcwd()

    @property
    def tally_path(self) -> str:
        return tally.path_for(self.project.state, self.session)


def is_save_command(command: str) -> bool:
    """Whether a shell command runs ``keeper save`` (also ``python -m keeper save``, ``keeper.exe save``).

    Plain string work, not a regex: importing ``re`` costs more than this whole hook.
    """
    for mark in _SEPARATORS:
        command = command.replace(mark, f" {mark} ")  # a separator stays a word of its own
    words = command.split()
    for word, following in zip(words, words[1:]):
        name = word.replace("\\", "/").rsplit("/", 1)[-1]
        if name in ("keeper", "keeper.exe") and following == "save":
            return True
    return False


def slash_command(prompt: str) -> tuple[str, str] | None:
    """``("keeper:recall", "the query")`` for a prompt that invokes one of Keeper's commands."""
    parts = prompt.strip().split(None, 1)
    if not parts or not parts[0].startswith("/") or parts[0][1:] not in _SLASH_COMMANDS:
        return None
    return parts[0][1:], parts[1].strip() if len(parts) > 1 else ""


def parse_payload(raw: bytes) -> tuple[dict[str, Any], str | None]:
    """The hook JSON as a dict, or ``{}`` and the reason it could not be read."""
    if len(raw) > MAX_STDIN:
        return {}, f"stdin is {len(raw)} bytes, over the {MAX_STDIN}-byte limit"
    text = raw.decode("utf-8", errors="replace")
    problem = "stdin is not valid UTF-8 (decoded with replacements)" if "\ufffd" in text else None
    if not text.strip():
        return {}, "stdin is empty"
    try:
        data = jsonio.loads(text)
    except (ValueError, RecursionError) as exc:
        return {}, f"stdin is not JSON ({type(exc).__name__}: {str(exc)[:120]})"
    if not isinstance(data, dict):
        return {}, f"stdin is JSON {type(data).__name__}, not an object"
    return data, problem


def _specific(event_name: str, text: str) -> Reply:
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


IDLE_BEFORE_RECOVERY = 600  # seconds without transcript activity before a session counts as gone


def session_start(call: Call) -> Reply:
    from keeper import context, sessions

    sessions.mark_start(call.project, call.session, call.text("transcript_path"))
    _complete_missed_endings(call)
    source = call.text("source") or "startup"
    text, status = context.session_start(call.project, int(call.cfg["context_chars"]), source, call.session)
    if call.cfg.warnings:
        status += f" · config problem: {call.cfg.warnings[0]}"
    return {"systemMessage": status, **_specific("SessionStart", text)}


def _complete_missed_endings(call: Call, limit: int = 5) -> None:
    """Finish the records of earlier sessions that were killed before SessionEnd ran.

    A session counts as gone once its transcript has been idle for ten minutes; should it come
    back after all, its next Stop removes the end stamp again.
    """
    import time

    from keeper import sessions

    for session in [s for s in sessions.unended(call.project) if s != call.session][:limit]:
        state = sessions.read_state(call.project, session)
        transcript = str(state.get("transcript") or "") or sessions.start_marker(call.project, session)[1]
        marker = os.path.join(call.project.state, session + ".start")
        try:
            last = os.path.getmtime(transcript) if transcript else os.path.getmtime(marker)
        except (OSError, ValueError):
            last = os.path.getmtime(marker) if os.path.exists(marker) else 0.0
        if time.time() - last < IDLE_BEFORE_RECOVERY:
            continue
        from keeper import store

        ended = time.strftime("%Y-%m-%d %H:%M", time.localtime(last))
        facts: dict[str, str | None] = {"Ended": f"{ended} (last activity; the session ended without SessionEnd)"}
        try:
            store.update_record(call.project, call.cfg, session, facts, transcript)
        except KeeperError as exc:
            log.write(call.event, "WARN", f"could not complete session {session}: {exc}")
            continue
        sessions.mark_ended(call.project, session)
        log.write(call.event, "INFO", f"completed session {session} from its transcript (its end never ran)")


def post_tool_use(call: Call) -> Reply:
    tool_input = call.payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    is_save = call.text("tool_name") == "Bash" and isinstance(command, str) and is_save_command(command)
    seen = tally.append(call.tally_path, tally.USE + tally.SAVE if is_save else tally.USE)
    if is_save or call.payload.get("agent_id"):
        return {}  # a subagent's work counts, but the request goes to the main agent
    if tally.uses_since(seen, tally.SAVE, tally.REMIND) < int(call.cfg["save_every"]):
        return {}
    from keeper import context

    tally.append(call.tally_path, tally.REMIND)
    return _specific("PostToolUse", context.save_request(tally.uses_since(seen, tally.SAVE)))


def _facts(call: Call, log_bytes: bytes) -> dict[str, str | None]:
    from keeper import memory, redact

    facts: dict[str, str | None] = {"Tool uses": f"{tally.total_uses(log_bytes)} ({tally.saves(log_bytes)} saves)"}
    reply = call.text("last_assistant_message")
    if reply.strip():
        facts["Last reply"] = memory.one_line(redact.redact(reply, call.cfg["redact_patterns"]), 300)
    return facts


def _record(call: Call, facts: dict[str, str | None]) -> None:
    from keeper import store

    try:
        store.update_record(call.project, call.cfg, call.session, facts, call.text("transcript_path"))
    except KeeperError as exc:  # the lock is busy: the next Stop catches up
        log.write(call.event, "WARN", f"session file not updated: {exc}")


def stop(call: Call) -> Reply:
    from keeper import sessions

    seen = tally.read(call.tally_path)
    sessions.mark_ended(call.project, call.session, ended=False)  # alive after all, if it was thought gone
    _record(call, {**_facts(call, seen), "Ended": None})
    if call.payload.get("stop_hook_active") is True:
        return {}  # this Stop follows our own request (or another hook's): never loop
    minimum = int(call.cfg["final_save_min"])
    if minimum <= 0 or tally.uses_since(seen, tally.SAVE, tally.FINAL_ASK) < minimum:
        return {}
    from keeper import context

    tally.append(call.tally_path, tally.FINAL_ASK)
    return _specific("Stop", context.final_save_request(tally.uses_since(seen, tally.SAVE)))


def _stamped(call: Call, label: str, detail: str) -> Reply:
    import time

    facts = _facts(call, tally.read(call.tally_path))
    facts[label] = time.strftime("%Y-%m-%d %H:%M") + (f" ({detail})" if detail else "")
    _record(call, facts)
    return {}


def pre_compact(call: Call) -> Reply:
    """Before compaction drops context, the record takes in everything the transcript shows so far."""
    return _stamped(call, "Compacted", call.text("trigger"))


def session_end(call: Call) -> Reply:
    from keeper import sessions

    reply = _stamped(call, "Ended", call.text("reason"))
    sessions.mark_ended(call.project, call.session)
    return reply


AUTO_RECALL_MIN_WORDS = 4


def user_prompt_submit(call: Call) -> Reply:
    prompt = call.text("prompt")
    found = slash_command(prompt)
    if found is None:
        return _auto_recall(call, prompt)
    command, args = found
    from keeper import slash

    if command.endswith("recall"):
        return _specific("UserPromptSubmit", slash.recall_for_prompt(call.project, call.cfg, args))
    return _specific("UserPromptSubmit", slash.clear_for_prompt(call.project, call.cfg, args))


def _auto_recall(call: Call, prompt: str) -> Reply:
    """Relevant past sessions, pushed with the prompt: memory Claude must decide to look up goes unused."""
    if not call.cfg["auto_recall"] or prompt.lstrip().startswith("/") or len(prompt.split()) < AUTO_RECALL_MIN_WORDS:
        return {}
    if not os.path.isdir(call.project.sessions):
        return {}  # nothing beyond memory.md, which SessionStart already gave
    from keeper import slash

    text = slash.auto_recall(call.project, prompt, call.session)
    return _specific("UserPromptSubmit", text) if text else {}


HANDLERS: dict[str, Callable[[Call], Reply]] = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "post-tool-use": post_tool_use,
    "stop": stop,
    "pre-compact": pre_compact,
    "session-end": session_end,
}


def handle(event: str, raw: bytes) -> Reply:
    """The reply for one hook call; raises only on bugs (``run`` logs those and fails open)."""
    handler = HANDLERS.get(event)
    if handler is None:
        log.write(event or "-", "WARN", f"unknown hook event {event!r}; known: {', '.join(HANDLERS)}")
        return {}
    payload, problem = parse_payload(raw)
    if problem:
        log.write(event, "WARN", problem)
    call = Call(event, payload)
    if not call.cfg["enabled"]:
        return {}
    if not call.has_session and handler is not user_prompt_submit:
        if not problem:  # one log line per bad input: an unreadable payload was logged already
            log.write(event, "WARN", "no session_id in the payload or CLAUDE_CODE_SESSION_ID; nothing recorded")
        return {}
    reply = handler(call)
    specific = reply.get("hookSpecificOutput")
    injected = len(specific.get("additionalContext", "")) if isinstance(specific, dict) else 0
    stats.record(call.project.state, event, injected)
    return reply


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    return bytes(stream.read(MAX_STDIN + 1))


def run(argv: list[str]) -> int:
    """Entry point of ``keeper hook EVENT``. Prints one JSON object; returns 0 whatever happens."""
    event = argv[0] if argv else ""
    reply: Reply = {}
    try:
        reply = handle(event, _read_stdin())
    except BaseException as exc:  # fail open: a hook must never break Claude Code
        where = ""
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None:
            where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        log.write(event or "-", "ERROR", f"{type(exc).__name__}: {exc}{where}")
        reply = {}
    try:
        sys.stdout.write(jsonio.dumps(reply))
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    return 0
