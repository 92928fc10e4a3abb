"""``keeper hook EVENT``: Claude Code's hook JSON in, exactly one JSON object out, exit 0 always.

Data walks one way: the raw payload becomes an ``Event`` once, at the boundary; ``resolve``
finds its project; a handler maps the event onto plain functions (``counters``, ``record``,
``context``, ``prompts``) and returns the reply. This is the hot path (PostToolUse runs on every
tool call), so at module level it imports the standard library and Keeper's stdlib-only modules;
yaml, filelock and rapidfuzz load only on a branch that needs them. Every input is answered: bad
stdin is logged and treated as empty, and any error is logged in one line while the hook still
prints ``{}`` and exits 0.
"""

from __future__ import annotations

import os
import sys
import time

from keeper import jsonio
from keeper.errors import KeeperError
from keeper.store import counters, fsutil, paths
from keeper.store.resolve import Resolved, resolve, start_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from keeper.hooks import idle

    Reply = dict[str, Any]  # one JSON object

MAX_STDIN = 32 << 20
STARTED = time.time()  # before any setting is read: the launchers' allowance is dated from it


def _log(event: str, level: str, message: str) -> None:
    from keeper.store import log  # only when there is something to say

    log.write(event, level, message)


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


class Event:
    """One hook call's payload, read once: every field Keeper uses, of the type it expects.

    A field that is missing or of another type reads as empty, so no handler meets a surprise.
    """

    __slots__ = (
        "agent_id",
        "cwd",
        "hook_name",
        "is_save",
        "last_reply",
        "name",
        "prompt",
        "reason",
        "session_id",
        "source",
        "stop_hook_active",
        "tool_use_id",
        "transcript_path",
        "trigger",
    )

    def __init__(self, name: str, payload: dict[str, Any]) -> None:
        def text(key: str) -> str:
            value = payload.get(key)
            return value if isinstance(value, str) else ""

        self.name = name
        self.session_id = text("session_id") or os.environ.get("CLAUDE_CODE_SESSION_ID", "")
        self.cwd = text("cwd")
        self.transcript_path = text("transcript_path")
        self.tool_use_id = text("tool_use_id")
        self.source = text("source") or "startup"
        self.hook_name = text("hook_event_name")
        self.prompt = text("prompt")
        if self.prompt.startswith("<hook_context>"):  # Gemini's -p mode puts SessionStart's context in front
            from keeper.capture.chats import without_hook_context

            self.prompt = without_hook_context(self.prompt)
        self.last_reply = text("last_assistant_message") or text("prompt_response")  # Gemini: prompt_response
        self.trigger = text("trigger")
        self.reason = text("reason")
        self.agent_id = bool(payload.get("agent_id"))
        self.stop_hook_active = payload.get("stop_hook_active") is True
        tool_input = payload.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        self.is_save = False
        if text("tool_name") in ("Bash", "run_shell_command") and isinstance(command, str):
            from keeper.capture.shell import is_save_command  # only a Bash tool use can be a save

            self.is_save = is_save_command(command)


def _specific(event_name: str, text: str) -> Reply:
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def _noticed(at: Resolved, reply: Reply, notice: str) -> Reply:
    """``reply`` with one line for the user (systemMessage), unless notices are turned off."""
    if notice and at.cfg.notices:
        reply["systemMessage"] = notice
    return reply


_EVENT_NAMES = {"post-tool-use": "PostToolUse", "post-tool-use-failure": "PostToolUseFailure"}


def _tally(at: Resolved) -> str:
    return counters.tally_path(at.project, at.session)


def _adopt(event: Event, at: Resolved) -> None:
    """A session whose start Keeper missed, while it set itself up, is taken in by its first tool use
    after (``record.adopt``); a session whose start was seen costs one stat. (A Stop before it reads
    the transcript into the session file anyway, and keeps where it is.)"""
    if not event.transcript_path or os.path.exists(at.project.session_file(at.session, "start")):
        return
    from keeper.capture import record

    with counters.Locked(_tally(at)) as tally:
        record.adopt(at.project, at.session, event.transcript_path, tally, event.tool_use_id)


def session_start(event: Event, at: Resolved) -> Reply:
    from keeper.hooks import startcache
    from keeper.store import markers

    if not os.path.exists(at.project.memory) and (
        os.path.exists(paths.sync_file()) or os.path.exists(paths.waiting_file())
    ):
        from keeper.sync import mirror

        mirror.adopt(at.project)  # a clone's first session here: the memory a sync or an import already brought
    markers.mark_start(at.project, at.session, event.transcript_path)
    gone = markers.gone(at.project, at.session)  # one small listing
    if gone:
        from keeper.capture import record

        record.complete_missed_endings(event.name, at.project, at.cfg, gone)
    cfg = at.cfg
    text, status = startcache.answer(
        at.project, cfg.context_chars, event.source, at.session, cfg.team, cfg.redact_patterns
    )
    _sync_in_background(at)
    if at.warnings:
        status += f" · config problem: {at.warnings[0]}"
    return {"systemMessage": status, **_specific("SessionStart", text)}


def post_tool_use(event: Event, at: Resolved) -> Reply:
    """Count the tool use (a failed one too); every ``save_every`` unsaved uses, ask for a save.

    The launchers count most uses themselves and come here when their allowance runs out, having
    counted this one already (``keeper.hooks.allowance``); this answers and writes the next one.
    """
    from keeper.hooks.allowance import Handoff

    path = _tally(at)
    handoff = Handoff.take()
    if handoff.counted != path:  # else the launcher counted it: its allowance says the session is known
        _adopt(event, at)
    reply: Reply = {}
    with counters.Locked(path) as tally:
        if handoff.counted == path:
            seen = tally.read()
        else:
            seen = tally.append(counters.SAVE_USE if event.is_save else counters.USE)
        # A subagent's work counts, but the request goes to the main agent.
        if not (event.is_save or event.agent_id) and counters.reminder_due(seen, at.cfg.save_every):
            from keeper.hooks import context
            from keeper.plugin import agents

            unsaved = counters.unsaved(seen)
            seen = tally.append(counters.REMIND)
            notice = f"Keeper: asked {agents.model()} to save ({unsaved} tool uses since the last save)"
            request = context.save_request(unsaved, at.session)
            reply = _noticed(at, _specific(event.hook_name or _EVENT_NAMES[event.name], request), notice)
        handoff.grant(seen, at, path, STARTED, event.cwd)
    return reply


def stop(event: Event, at: Resolved) -> Reply:
    from keeper.hooks import idle

    launcher = idle.Launcher.take()
    seen = counters.read(_tally(at))
    # A continuation's reply ("Saved.") answers our own request: the real last reply stays.
    last_reply = "" if event.stop_hook_active else event.last_reply
    key = idle.stop_key(at.project, at.session, seen, last_reply, event.transcript_path)
    quiet = key is not None and idle.unchanged(at.project, at.session, key)  # the record holds all of it
    if not quiet:
        quiet = _record_stop(event, at, seen, last_reply, key)
    from keeper.plugin import agents

    asks = agents.can_hold_stop() and counters.final_ask_due(seen, at.cfg.final_save_min, at.cfg.save_every)
    # The same Stop again needs no Python, a continuation's too: its record holds the reply it read ("")
    if quiet and key is not None and not asks and not at.cfg.debug:
        launcher.vouch(at, key, seen, last_reply, event, STARTED)
    else:
        launcher.withdraw()
    if event.stop_hook_active or not asks:
        return {}  # a continuation follows our own request (or another hook's): never loop
    from keeper.hooks import context

    counters.append(_tally(at), counters.FINAL_ASK)
    unsaved = counters.unsaved(seen)
    request = context.final_save_request(unsaved, at.session)
    asked = _final_ask(request)
    notice = f"Keeper: asked {agents.model()} to save before it finishes ({unsaved} unsaved tool uses)"
    return _noticed(at, asked, notice)


def _record_stop(event: Event, at: Resolved, seen: bytes, last_reply: str, key: idle.Key | None) -> bool:
    """The session file brought up to date; ``key`` kept when that found nothing to write (then True)."""
    from keeper.capture import record
    from keeper.hooks import idle
    from keeper.store import markers, sessions

    markers.mark_ended(at.project, at.session, ended=False)  # alive after all, if it was thought gone
    state = sessions.read_state(at.project, at.session)
    found = record.facts(seen, last_reply, at.cfg.redact_patterns, state)
    settled = record.update_from_hook(event.name, at, {**found, "Ended": None}, event.transcript_path, last_reply)
    if not settled:
        _take_in(at)
    if settled and key is not None:
        idle.remember(at.project, at.session, key)
        return True
    return False


def _take_in(at: Resolved) -> None:
    """After a hook rewrote its session's file (every Stop does): the file taken into the project's
    search index, so that the next prompt's automatic recall finds nothing to index."""
    if not at.cfg.auto_recall:
        return
    from keeper.recall import index
    from keeper.store import sessions

    own = sessions.existing_file(at.project, at.session)
    index.after_write(at.project, at.cfg.team, (at.session, os.path.basename(own) if own else ""))


def _final_ask(request: str) -> Reply:
    """How each agent takes Stop's request so the model acts on it. Codex takes no additionalContext
    from Stop (the hook "fails"): a block with a reason continues the turn. Gemini's AfterAgent sends
    a deny's reason as a new user message, while its system prompt tells the model to treat any
    ``<hook_context>`` as data, not instructions; its ``stop_hook_active`` is unreliable, so the
    tally's final-ask mark is what keeps this to once (``counters.final_ask_due``)."""
    from keeper.plugin import agents

    if agents.under_codex():
        return {"decision": "block", "reason": request}
    if agents.under_gemini():
        return {"decision": "deny", "reason": request}
    return _specific("Stop", request)


def pre_compact(event: Event, at: Resolved) -> Reply:
    """Before compaction drops context, the record takes in everything the transcript shows so far."""
    from keeper.capture import record

    if record.stamp(event.name, at, "Compacted", event.trigger, event.last_reply, event.transcript_path):
        _take_in(at)
    return {}


def session_end(event: Event, at: Resolved) -> Reply:
    from keeper.capture import record
    from keeper.store import markers

    # the file is left for the next search to index: SessionEnd has two seconds (hooks/hooks.json), and
    # the index may be another process's to write for longer
    record.stamp(event.name, at, "Ended", event.reason, event.last_reply, event.transcript_path)
    markers.mark_ended(at.project, at.session)
    _sync_in_background(at)
    from keeper.plugin import agents

    if agents.under_gemini():  # the first session after an install or update completes the extension's hooks
        from keeper.plugin import gemini

        gemini.complete_hooks(os.environ.get("CLAUDE_PLUGIN_ROOT", ""))
    return {}


def _sync_in_background(at: Resolved) -> None:
    """Start a detached sync when a remote is recorded (one stat, before importing anything) and
    ``sync`` is on; never wait for it."""
    if not at.cfg.sync or not os.path.exists(paths.sync_file()):
        return
    from keeper.sync import background

    background.start()


def user_prompt_submit(event: Event, at: Resolved) -> Reply:
    from keeper.hooks import prompts

    if event.prompt.startswith(OWN_REQUEST):  # Gemini sends Stop's request back as a prompt: not the user's
        return {}

    if at.has_session:
        counters.append(_tally(at), counters.TURN)  # a turn starts: Stop never asks in a turn that saved
    found = prompts.answer(at.project, at.cfg, event.prompt, at.session)
    if "KEEPER_LAUNCHER_PROMPT" in os.environ:  # the launcher passed it on: its record, as the memory is now
        from keeper.hooks import quietprompt

        quietprompt.Launcher.take().vouch(at, event.cwd, STARTED, OWN_REQUEST)
    return _noticed(at, _specific("UserPromptSubmit", found.context), found.notice) if found.context else {}


OWN_REQUEST = "Keeper memory: "  # how Keeper's save requests begin (keeper.hooks.context)
HANDLERS: dict[str, Callable[[Event, Resolved], Reply]] = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "post-tool-use": post_tool_use,
    "post-tool-use-failure": post_tool_use,  # a failed tool use is work too
    "stop": stop,
    "pre-compact": pre_compact,
    "session-end": session_end,
}
NEEDS_NO_SESSION = frozenset({"user-prompt-submit"})  # answers a prompt; records nothing
# Codex runs a hook's command in a shell and drops its ``args``, so ``keeper hook`` may come with no
# event: the payload's ``hook_event_name`` (``SessionStart``) names it instead.
BY_PAYLOAD_NAME = {"".join(part.capitalize() for part in name.split("-")): name for name in HANDLERS}


def handle(name: str, raw: bytes, project_dir: str = "") -> Reply:
    """The reply for one hook call; raises only on bugs (``run`` logs those and fails open).

    ``project_dir`` (``keeper hook --project-dir``) wins over ``$CLAUDE_PROJECT_DIR`` and the
    payload's ``cwd``. An empty ``name`` (Codex's shell-form hooks) is taken from the payload.
    """
    started = time.perf_counter()
    payload, problem = parse_payload(raw)
    if not name:
        named = payload.get("hook_event_name")
        name = BY_PAYLOAD_NAME.get(named, "") if isinstance(named, str) else ""
        if not name:
            _log("-", "WARN", f"no hook event given and the payload names none Keeper answers ({named!r})")
            return {}
    handler = HANDLERS.get(name)
    if handler is None:
        _log(name, "WARN", f"unknown hook event {name!r}; known: {', '.join(HANDLERS)}")
        return {}
    unusable = fsutil.store_problem()
    if unusable:  # nothing can be recorded, and the log cannot be written either: tell the user at start
        return {"systemMessage": unusable} if name == "session-start" else {}
    new_store = False
    # once per session: a store an earlier release wrote is brought up to date
    if name == "session-start" and not fsutil.store_is_current():
        from keeper.store import migrate

        new_store = migrate.upgrade_quietly()
    if problem:
        _log(name, "WARN", problem)
    event = Event(name, payload)
    start = start_folder([project_dir, os.environ.get("CLAUDE_PROJECT_DIR", ""), event.cwd], strict=False)
    at = resolve(start, event.session_id, strict=False)
    if not at.cfg.enabled:
        return {}
    if not at.has_session and name not in NEEDS_NO_SESSION:
        if not problem:  # one log line per bad input: an unreadable payload was logged already
            _log(name, "WARN", "no session_id in the payload or CLAUDE_CODE_SESSION_ID; nothing recorded")
        return {}
    if name != "session-start" and os.path.exists(os.path.join(at.project.state, f"{at.session}.start")):
        # a session live across the upgrade, its files still where the earlier release kept them (one stat):
        # moved first, or it would start its count and its session file afresh beside them
        from keeper.store import migrate

        migrate.upgrade_quietly()
    reply = handler(event, at)
    if new_store:
        migrate.stamp()  # the store this session start made is in this code's format
    specific = reply.get("hookSpecificOutput")
    injected = len(specific.get("additionalContext", "")) if isinstance(specific, dict) else 0
    took_ms = (time.perf_counter() - started) * 1000
    counters.record_hook(at.project.state, name, injected, took_ms)
    if at.cfg.debug:
        _log(name, "INFO", f"debug: {took_ms:.1f} ms in Keeper, {injected} characters into context")
    return reply


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    return bytes(stream.read(MAX_STDIN + 1))


def _args(argv: list[str]) -> tuple[str, str]:
    """``EVENT [--project-dir DIR]`` without argparse (it costs the hot path ~3 ms)."""
    rest = list(argv)
    project_dir = ""
    if "--project-dir" in rest:
        at = rest.index("--project-dir")
        project_dir = rest[at + 1] if at + 1 < len(rest) else ""
        del rest[at : at + 2]
    return (rest[0] if rest else ""), project_dir


def run(argv: list[str]) -> int:
    """Entry point of ``keeper hook EVENT``. Prints one JSON object; returns 0 whatever happens."""
    name, project_dir = _args(argv)
    reply: Reply = {}
    # a hook answers in time rather than wait out a reader, its error line included
    with fsutil.sharing_wait(fsutil.HOOK_SHARING_WAIT):
        try:
            reply = handle(name, _read_stdin(), project_dir)
        except KeeperError as exc:  # a refusal the user can fix (a link out of the store): not a bug
            _log(name or "-", "WARN", f"refused: {exc}")
        except BaseException as exc:  # fail open: a hook must never break Claude Code
            where = ""
            tb = exc.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            if tb is not None:
                where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
            _log(name or "-", "ERROR", f"{type(exc).__name__}: {exc}{where}")
            reply = {}
    try:
        sys.stdout.write(jsonio.dumps(reply))
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    return 0


def main(argv: list[str]) -> NoReturn:
    """A hook as its own process (the launchers', the console script's): ``run``, then the process ends
    at once (``console.end``: the interpreter's teardown would walk every object the imports made)."""
    code = run(argv)
    from keeper import console

    console.end(code)
