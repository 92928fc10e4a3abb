"""Claude Code transcripts, Codex rollouts and Gemini CLI chats (JSONL): what a session did, read without a
model, in bounded memory.

The format is internal to Claude Code and changes between versions, so the reader is defensive:
unknown record types are skipped, malformed or truncated lines are counted and skipped, and a
line longer than ``MAX_LINE`` (a pasted image, a huge tool result) is passed over without being
held in memory. Reading resumes from a byte offset, so each Stop reads only what is new, and a
very long unread transcript is read from its end (plus its first prompt) rather than whole.

``Activity`` is the deterministic digest a session record shows: the user's real prompts (turn
boundaries; tool results, meta and compaction-summary messages are not prompts), files written
and edited, commands run (Keeper's own saves counted apart), tool counts, errors met, branch,
compactions and time span. A Codex rollout's lines are folded by ``rollout``, a Gemini chat's by
``chats``, an OpenCode session's messages by ``messages``, into the same digest.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.capture import chats, messages, rollout
from keeper.capture.shell import MEMORY_COMMANDS, is_save_command, runs_keeper
from keeper.text import name_from

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime
    from typing import Any

MAX_LINE = 1 << 20  # a longer line is skipped, never held whole
CHUNK = 1 << 16  # how much of an over-long line is read at a time
TAIL_BUDGET = 8 << 20  # unread bytes beyond this: read the head's first prompt and the last 8 MiB
KEEP_PROMPTS, KEEP_COMMANDS, KEEP_FILES, KEEP_ERRORS = 40, 30, 60, 10
KEEP_WROTE, KEEP_LINES = 40, 24  # files whose written lines are fingerprinted, and lines a file
_WRITE_TOOLS = {"Write": "written", "Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited"}


def readable(path: object) -> bool:
    """Only regular ``.jsonl`` files are read: a hostile path such as /dev/zero must not hang a hook."""
    import stat

    if not isinstance(path, str) or not path.endswith(".jsonl") or "\x00" in path:
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def local_time(stamp: str) -> datetime | None:
    """A transcript timestamp (UTC, ``…Z``) as naive local time; None when it is not one."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().replace(tzinfo=None)
    except (ValueError, OverflowError):  # OverflowError: year 9999 or 1 moved by its offset past the range
        return None


def read_lines(path: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[bytes | None, int]]:
    """Complete lines from byte ``start`` as ``(line, offset after it)``; ``None`` for an over-long line.

    An over-long line is read past in chunks, never held whole. A last line without a newline is
    not yielded: Claude Code may still be writing it.
    """
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        while stop is None or offset < stop:
            line = fh.readline(MAX_LINE + 1)
            if not line.endswith(b"\n"):
                if len(line) <= MAX_LINE:
                    return
                skipped = len(line)
                while True:
                    if stop is not None and offset + skipped >= stop:
                        return  # an over-long line runs past the part asked for: never read on
                    more = fh.readline(CHUNK)
                    if not more:
                        return
                    skipped += len(more)
                    if more.endswith(b"\n"):
                        break
                offset += skipped
                yield None, offset
                continue
            offset += len(line)
            yield line, offset


def first_prompt_offset(path: str, limit: int = 2 << 20) -> int:
    """Byte offset just past the first real prompt (within the first ``limit`` bytes), else 0."""
    probe = Activity()
    for line, end in read_lines(path, 0, limit):
        if line is not None:
            probe.add_line(line)
            if probe.prompt_count:
                return end
    return 0


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _slash_prompt(text: str) -> str:
    """``/keeper:recall redis`` from Claude Code's ``<command-name>…<command-args>…`` markup."""

    def tag(name: str) -> str:
        start = text.find(f"<{name}>")
        end = text.find(f"</{name}>")
        return text[start + len(name) + 2 : end].strip() if 0 <= start < end else ""

    name = tag("command-name")
    return f"{name} {tag('command-args')}".strip() if name else text


def prompt_text(entry: dict[str, Any], content: Any) -> str | None:
    """The user's words if this entry is a real prompt (a turn boundary), else None.

    Tool results, harness-injected meta messages, compaction summaries, sidechain (subagent)
    prompts and local command output are not prompts.
    """
    flags = ("isMeta", "isCompactSummary", "isSidechain", "isVisibleInTranscriptOnly")
    if entry.get("type") != "user" or any(entry.get(flag) for flag in flags):
        return None
    text = _text_of(content).strip()
    if not text or text.startswith(("<local-command", "<command-stdout", "<bash-")):
        return None
    return _slash_prompt(text)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _texts(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class Activity:
    """What a transcript shows a session did; persisted between hooks as plain JSON."""

    def __init__(
        self,
        data: dict[str, Any] | None = None,
        clean: Callable[[str], str] = str,
        said: Callable[[str, str], None] | None = None,
    ) -> None:
        """``clean`` is applied to every text kept (Keeper passes its redactor), so no secret is stored;
        ``said`` hears what was said as it is read (``where``: ``prompt``, ``text`` or ``tool:NAME``),
        unkept (use receipts, ``receipts``).

        ``data`` is the saved digest; a damaged one (wrong types, negative counts) reads as empty
        field by field, so the next Stop rebuilds what it can instead of failing.
        """
        data = data if isinstance(data, dict) else {}
        self._clean = clean
        self._said = said
        self.first_ts: str = _text(data.get("first_ts"))
        self.last_ts: str = _text(data.get("last_ts"))
        self.branch: str = _text(data.get("branch"))
        self.prompts: list[str] = _texts(data.get("prompts"))[:KEEP_PROMPTS]
        self.prompt_count: int = max(_count(data.get("prompt_count")), len(self.prompts))
        files = data.get("files")
        self.files: dict[str, str] = (
            {k: v for k, v in files.items() if isinstance(k, str) and v in ("written", "edited", "deleted")}
            if isinstance(files, dict)
            else {}
        )
        wrote = data.get("wrote")
        self.wrote: dict[str, list[str]] = (
            {k: _texts(v)[:KEEP_LINES] for k, v in list(wrote.items())[:KEEP_WROTE] if isinstance(k, str)}
            if isinstance(wrote, dict)
            else {}
        )
        self.commands: list[str] = _texts(data.get("commands"))[-KEEP_COMMANDS:]
        tools = data.get("tools")
        self.tools: dict[str, int] = (
            {k: _count(v) for k, v in tools.items() if isinstance(k, str)} if isinstance(tools, dict) else {}
        )
        self.errors: list[str] = _texts(data.get("errors"))[-KEEP_ERRORS:]
        self.error_count: int = _count(data.get("error_count"))
        self.compactions: int = _count(data.get("compactions"))
        self.saves: int = _count(data.get("saves"))
        self.skipped: int = _count(data.get("skipped"))
        self.gap: bool = data.get("gap") is True
        self._tool_names: dict[str, str] = {}
        self._seen_tool_ids: set[str] = set()
        self._save_ids: set[str] = set()  # the tool uses that ran Keeper's save, read since this digest was made

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @property
    def tool_uses(self) -> int:
        """Every tool use the transcript shows: the sum of the record's ``Tools`` line."""
        return sum(self.tools.values())

    def add_line(self, line: bytes | None) -> None:
        """Fold one JSONL line into the digest; anything unreadable is counted and skipped."""
        if line is None:
            self.skipped += 1
            return
        try:
            entry = jsonio.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            self.skipped += 1
            return
        if isinstance(entry, dict):
            self.add(entry)
        elif line.strip():
            self.skipped += 1

    def add(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        stamp = messages.stamp(entry) if messages.is_record(entry) else entry.get("timestamp")
        if isinstance(stamp, str) and stamp:
            self.first_ts = self.first_ts or stamp
            self.last_ts = max(self.last_ts, stamp)
        if kind in rollout.KINDS:  # a Codex rollout
            rollout.fold(self, entry)
            return
        if chats.is_record(entry):  # a Gemini CLI chat
            chats.fold(self, entry, self._seen_tool_ids)
            return
        if messages.is_record(entry):  # an OpenCode session
            messages.fold(self, entry)
            return
        branch = entry.get("gitBranch")
        if isinstance(branch, str) and branch and branch != "HEAD":
            self.branch = branch
        raw_message = entry.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        if kind == "user":
            self._user(entry, message.get("content"))
        elif kind == "assistant":
            self._assistant(message.get("content"))
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            self.compactions += 1

    def _user(self, entry: dict[str, Any], content: Any) -> None:
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                    name = self._tool_names.get(str(block.get("tool_use_id")), "tool")
                    self.note_error(name, _text_of(block.get("content")))
        text = prompt_text(entry, content)
        if text is not None:
            self.note_prompt(text)

    # What any transcript format reports, folded the same way (the Codex reader uses these too).

    def note_said(self, where: str, text: str) -> None:
        """Something the assistant wrote (``text``) or gave a tool (``tool:NAME``), for use receipts."""
        if self._said is not None and text:
            self._said(where, text)

    def note_input(self, tool: str, given: dict[str, Any]) -> None:
        """What the assistant gave a tool, for use receipts; Keeper's own save is evidence's, not a use,
        and a look-up of memory (``keeper recall``, ``why``, ``expand``…) loads an item, not uses it."""
        command = given.get("command")
        if self._said is not None and not (isinstance(command, str) and runs_keeper(command, MEMORY_COMMANDS)):
            self.note_said(f"tool:{tool}", _inputs(given))

    def note_prompt(self, text: str) -> None:
        """One real prompt of the user's: a turn boundary."""
        self.note_said("prompt", text)
        self.prompt_count += 1
        prompt = _short(self._clean(text[:4096]), 240)  # redact, then cut: a cut secret would no longer match
        if len(self.prompts) < KEEP_PROMPTS:
            self.prompts.append(prompt)
        else:  # keep the first half and the most recent ones
            half = KEEP_PROMPTS // 2
            self.prompts = [*self.prompts[:half], *self.prompts[half + 1 :], prompt]

    def note_error(self, tool: str, output: str) -> None:
        """A tool use that failed, shown by the first line of what it printed."""
        self.error_count += 1
        first = output.strip().splitlines()
        error = _short(self._clean(f"{tool}: {(first[0] if first else 'error')[:4096]}"), 170)
        self.errors = [*self.errors, error][-KEEP_ERRORS:]

    def note_command(self, command: str) -> None:
        """A shell command run; Keeper's own save is counted as a save, not as the session's work."""
        if is_save_command(command):
            self.saves += 1
        elif command.strip():
            short = _short(self._clean(command.strip().splitlines()[0][:4096]), 160)
            self.commands = [*self.commands, short][-KEEP_COMMANDS:]

    def note_file(self, path: str, how: str) -> None:
        """A file ``written`` (created or replaced whole), ``edited`` or ``deleted``; written wins over edited."""
        if not path or (len(self.files) >= KEEP_FILES and path not in self.files):
            return
        path = self._clean(path)
        previous = self.files.get(path)
        self.files[path] = "written" if how == "edited" and previous == "written" else how

    def note_lines(self, path: str, text: str) -> None:
        """Lines a session wrote into a file, kept as a bounded fingerprint (``claims.fingerprint``):
        the newest ``KEEP_LINES`` distinct ones, so a later rewrite of them can be told."""
        from keeper.store.claims import fingerprint

        path = self._clean(path)
        if path not in self.files or (len(self.wrote) >= KEEP_WROTE and path not in self.wrote):
            return
        new = fingerprint(text[: 1 << 20], KEEP_LINES)
        kept = [h for h in self.wrote.get(path, []) if h not in new]
        self.wrote[path] = [*kept, *new][-KEEP_LINES:]

    def _assistant(self, content: Any) -> None:
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                self.note_said("text", _text(block.get("text")))
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            block_id = str(block.get("id", ""))
            if block_id and block_id in self._seen_tool_ids:
                continue  # older versions repeat a message's blocks across entries
            self._seen_tool_ids.add(block_id)
            name = name_from(block.get("name"), "tool")
            self._tool_names[block_id] = name
            self.tools[name] = self.tools.get(name, 0) + 1
            raw_input = block.get("input")
            tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            command = tool_input.get("command")
            if name == "Bash" and isinstance(command, str):
                self.note_command(command)
                if is_save_command(command):
                    self._save_ids.add(block_id)
            self.note_input(name, tool_input)
            path = tool_input.get("file_path") or tool_input.get("notebook_path")
            if name in _WRITE_TOOLS and isinstance(path, str):
                self.note_file(path, _WRITE_TOOLS[name])
                self.note_lines(path, _written(tool_input))


def _inputs(tool_input: dict[str, Any]) -> str:
    """What the assistant gave a tool, as text: every text it passed but the code it replaced."""
    return "\n".join(v for k, v in tool_input.items() if isinstance(v, str) and k != "old_string")


def _written(tool_input: dict[str, Any]) -> str:
    """The text a Write, Edit or MultiEdit put into its file."""
    edits = tool_input.get("edits")
    parts = [tool_input.get("content"), tool_input.get("new_string")]
    parts += [e.get("new_string") for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
    return "\n".join(p for p in parts if isinstance(p, str))


def update(activity: Activity, path: str, offset: int) -> int:
    """Fold the transcript's new lines (from ``offset``) into ``activity``; return the new offset.

    A transcript that shrank was rewritten: it is read again from the start. More than
    ``TAIL_BUDGET`` unread bytes are read as head (first prompt) plus tail, marking the gap.
    """
    try:
        size = os.path.getsize(path)
    except OSError:
        return offset
    if size < offset:
        offset = 0
    if size - offset > TAIL_BUDGET:
        if offset == 0:
            head_end = first_prompt_offset(path)
            for line, _ in read_lines(path, 0, head_end):
                activity.add_line(line)
        activity.gap = True
        offset = max(offset, size - TAIL_BUDGET)
        with open(path, "rb") as fh:  # start at the first line boundary inside the tail, read in chunks
            fh.seek(offset)
            while True:
                piece = fh.readline(CHUNK)
                offset += len(piece)
                if not piece or piece.endswith(b"\n"):
                    break
    for line, end in read_lines(path, offset):
        activity.add_line(line)
        offset = end
    return offset


def earlier_uses(path: str, current: str = "") -> tuple[int, str]:
    """The tool uses a transcript shows but ``current`` (the id of the one a hook is counting now) and
    Keeper's own saves (the tally marks those apart), and the transcript's first time ('' when
    unknown): the work of a session before Keeper was ready."""
    activity = Activity()
    update(activity, path, 0)
    counted_now = current in activity._seen_tool_ids - activity._save_ids
    return max(activity.tool_uses - activity.saves - counted_now, 0), activity.first_ts


def claude_transcript(session: str) -> str:
    """The transcript Claude Code keeps for ``session``, found by its id in any project folder of
    ``~/.claude/projects`` (``CLAUDE_CONFIG_DIR`` honoured); '' when there is none."""
    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    base = os.path.join(home, "projects")
    try:
        folders = sorted(os.listdir(base))
    except OSError:
        return ""
    found = (os.path.join(base, folder, f"{session}.jsonl") for folder in folders)
    return next((path for path in found if readable(path)), "")


class Turn:
    """One turn of a conversation: the user's prompt and what followed, summarised line by line."""

    __slots__ = ("items", "prompt", "timestamp", "uuid", "uuids")

    def __init__(self, uuid: str, timestamp: str, prompt: str) -> None:
        self.uuid, self.timestamp, self.prompt = uuid, timestamp, prompt
        self.items: list[str] = []
        self.uuids = {uuid}

    def add(self, item: str) -> None:
        if len(self.items) < MAX_TURN_ITEMS:
            self.items.append(item)
        elif len(self.items) == MAX_TURN_ITEMS:
            self.items.append("… (more in the transcript)")

    def as_dict(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "timestamp": self.timestamp, "prompt": self.prompt, "items": self.items}


MAX_TURN_ITEMS = 60


def turns(path: str, text_limit: int = 600) -> list[Turn]:
    """The transcript as turns (a turn starts at each real prompt), in bounded memory per turn."""
    found: list[Turn] = []
    names: dict[str, str] = {}
    seen: set[str] = set()
    for line, _ in read_lines(path):
        try:
            entry = jsonio.loads(line.decode("utf-8", "replace")) if line is not None else None
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") in rollout.KINDS or chats.is_record(entry) or messages.is_record(entry):
            started, said = _other_format(entry, seen)
            if started:
                when = messages.stamp(entry) if messages.is_record(entry) else str(entry.get("timestamp", ""))
                found.append(Turn(started[0], when, _short(started[1], 2000)))
            for item in said if found else []:
                found[-1].add(item)
            continue
        raw = entry.get("message")
        content = raw.get("content") if isinstance(raw, dict) else None
        prompt = prompt_text(entry, content)
        if prompt is not None:
            found.append(Turn(str(entry.get("uuid", "")), str(entry.get("timestamp", "")), _short(prompt, 2000)))
            continue
        if not found:
            continue
        turn = found[-1]
        if entry.get("uuid"):
            turn.uuids.add(str(entry["uuid"]))
        _add_blocks(turn, entry, content, names, text_limit)
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            turn.add("(the conversation was compacted here)")
    return found


def _other_format(entry: dict[str, Any], seen: set[str]) -> tuple[tuple[str, str] | None, list[str]]:
    """A Codex rollout's, a Gemini chat's or an OpenCode session's line: the turn it starts, its lines."""
    if chats.is_record(entry):
        return chats.turn_lines(entry, seen, _short)
    if messages.is_record(entry):
        return messages.turn_lines(entry, _short)
    return rollout.turn_lines(entry, _short)


def _add_blocks(turn: Turn, entry: dict[str, Any], content: object, names: dict[str, str], text_limit: int) -> None:
    """A Claude Code entry's replies, tool calls and failed tool results, onto its turn."""
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and entry.get("type") == "assistant" and str(block.get("text", "")).strip():
            turn.add("Claude: " + _short(str(block["text"]), text_limit))
        elif kind == "tool_use":
            names[str(block.get("id"))] = str(block.get("name"))
            raw_input = block.get("input")
            tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            detail = tool_input.get("command") or tool_input.get("file_path") or tool_input.get("pattern") or ""
            turn.add(f"  -> {block.get('name')}: {_short(str(detail), 200)}")
        elif kind == "tool_result" and block.get("is_error"):
            first = _text_of(block.get("content")).strip().splitlines()
            name = names.get(str(block.get("tool_use_id")), "tool")
            turn.add(f"  !! {name} failed: {_short(first[0] if first else '', 200)}")


def render(activity: Activity, project_root: str) -> list[str]:
    """The ``## Activity`` section body: what happened, deterministically, from the transcript."""

    def rel(path: str) -> str:
        try:
            inside = os.path.commonpath([os.path.abspath(path), project_root]) == project_root
        except ValueError:
            inside = False
        return os.path.relpath(path, project_root) if inside else path

    lines: list[str] = []
    if activity.prompt_count:
        lines.append(f"- Prompts ({activity.prompt_count}):")
        lines += [f"  {i}. {_short(p, 300)}" for i, p in enumerate(activity.prompts, 1)]
        if activity.prompt_count > len(activity.prompts):
            lines.append(f"  (and {activity.prompt_count - len(activity.prompts)} more in the transcript)")
    if activity.files:
        lines.append(f"- Files changed ({len(activity.files)}):")
        lines += [f"  - {_short(rel(p), 300)} ({how})" for p, how in sorted(activity.files.items())]
    if activity.commands:
        lines.append(f"- Commands ({len(activity.commands)} most recent):")
        lines += [f"  - `{_short(c, 300).replace('`', chr(39))}`" for c in activity.commands]
    if activity.saves:
        lines.append(f"- Saves to memory: {activity.saves}")
    if activity.tools:
        counts = ", ".join(f"{name} {n}" for name, n in sorted(activity.tools.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"- Tools: {counts}")
    if activity.error_count:
        lines.append(f"- Errors ({activity.error_count}):")
        lines += [f"  - {_short(e, 300)}" for e in activity.errors]
    if activity.compactions:
        lines.append(f"- Compactions: {activity.compactions}")
    if activity.gap:
        lines.append("- Note: the transcript was long; its middle was not read")
    if activity.skipped:
        lines.append(f"- Unreadable transcript lines skipped: {activity.skipped}")
    return lines
