"""What Keeper puts in front of Claude: memory at session start, save requests, recall results.

Everything here is worded as plain facts (Claude Code's docs warn that text framed as system
orders can trip prompt-injection defences) and bounded: Claude Code cuts hook output at 10,000
characters and hands the model only a preview beyond that.
"""

from __future__ import annotations

import os
import time

from keeper.store import paths
from keeper.store.fsutil import read_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from keeper.recall.search import Result

# memory, sessions and markdown load inside the functions that use them: `keeper recall` prints
# through this module and needs none of them.

HARD_CAP = 9500  # stays under Claude Code's 10,000-character hook output limit
SESSION_SO_FAR = 1500


# /keeper:save's command file is static, so it shows this marker; its prompt hook hands Claude a
# fresh one (``end_marker``) for the save itself, as every hook's save request does.
STATIC_END = "KEEPER_END"


def end_marker() -> str:
    """A heredoc end marker for one save request: ``KEEPER_`` and 12 random hex digits.

    A heredoc ends at the first line equal to its marker, and the lines after it run as shell
    commands. Saved text comes from the session (a web page, a file, a tool's output) and could
    hold a line equal to a fixed marker; it cannot know one drawn for this request alone.
    """
    return "KEEPER_" + os.urandom(6).hex().upper()


def save_command(windows: bool = False, end: str = "") -> str:
    """The exact command a model should run to save: a quoted heredoc, so nothing is expanded,
    ended by ``end`` (a fresh ``end_marker()`` when not given).

    The body is ``saveformat.template()``, which the save format's own tests parse back exactly.
    """
    from keeper.capture import saveformat

    end = end or end_marker()
    body = f"keeper save <<'{end}'\n" + saveformat.template() + end
    if windows:
        body += "\n\nIn PowerShell, pipe the same lines instead: @'\n...the lines above...\n'@ | keeper save"
    return body


TYPED_HINT = (
    "Where they apply, add typed lists the same way: feedback (a correction from the user not to repeat), "
    "user (who the user is, how they like to work), tool (a binary or service: install, config, gotchas), "
    "reference (stable technical knowledge); with a line scope: global they hold across all projects."
)


def _how_to_save() -> str:
    from keeper.capture import saveformat

    return (
        f"{saveformat.rules()} {TYPED_HINT} Replace the example values with this session's:\n\n"
        f"{save_command(os.name == 'nt')}"
    )


def save_request(unsaved: int) -> str:
    """PostToolUse's periodic request, exact enough to get right on the first try."""
    return (
        f"Keeper memory: {unsaved} tool uses since this session's memory was last saved. Saving now keeps "
        f"this session's decisions and progress for future sessions, in one Bash command. {_how_to_save()}\n\n"
        "After it prints what changed, carry on with the task."
    )


def final_save_request(unsaved: int) -> str:
    """Stop's request before the session may end with unsaved work."""
    return (
        f"Keeper memory: {unsaved} tool uses in this session are not yet in memory. Before finishing, save "
        f"what future sessions should know in one Bash command, then finish your reply as you intended. "
        f"{_how_to_save()}"
    )


def _age(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


GLOBAL_SHARE = 0.3  # at most this share of the budget for the global memory; what it leaves goes to the project


BRIEFING_BYTES = 1 << 20  # SessionStart reads at most this much of a memory file: a huge one costs no more


def _head(path: str) -> tuple[str, int]:
    """A memory file's text for the briefing, at most BRIEFING_BYTES of it; and its size when it was
    cut there (0 when read whole or missing)."""
    found = read_head(path, BRIEFING_BYTES)
    if found is None:
        return "", 0
    text, size = found
    return text, size if size > len(text.encode("utf-8", errors="replace")) else 0


def session_start(project: paths.Project, limit: int, source: str, session: str) -> tuple[str, str]:
    """The context for a new (or resumed, cleared, compacted) session and the user's status line.

    Everything fits in ``limit`` characters: the global memory in its own share (feedback and
    the user first), then the project's memory.md chosen by importance (``briefing.select``),
    sessions that ended without a save, and after a compaction this session's own record so far.
    """
    from keeper.hooks import briefing
    from keeper.memory import document
    from keeper.store import sessions

    limit = min(limit, HARD_CAP)
    text, cut = _head(project.memory)
    global_text, global_cut = _head(paths.global_memory_file())
    unsaved = briefing.unsaved_sessions(project, session)
    if not text.strip() and not unsaved and not global_text.strip():
        context = (
            f"Keeper memory for project '{project.name}' is empty so far. Keeper asks for a save every "
            "few tool uses; a save is a `keeper save` Bash command with key: lines on stdin."
        )
        return context, f"Keeper: no memory yet for {project.name}; it saves as you work"
    so_far = ""
    if source == "compact":
        own = sessions.existing_file(project, session)
        own_text = _head(own)[0] if own else None
        if own_text:
            so_far, _ = briefing.select(own_text, SESSION_SO_FAR)
            so_far = f"\n\nThis session so far ({os.path.basename(own or '')}):\n{so_far.strip()}"
    missed = ""
    if unsaved:
        missed = "\n\nSessions that ended without a save (their records hold what they did):\n" + "\n".join(unsaved)
    try:
        saved = _age(time.time() - os.stat(project.memory).st_mtime)
    except OSError:
        saved = "never"
    head = f"Keeper memory for project '{project.name}' (from {project.memory}, saved {saved})."
    tail = "Session files hold the full history; `keeper recall <words>` searches them and memory.md."
    room = max(limit - len(head) - len(tail) - len(so_far) - len(missed) - 300, 0)
    left: list[str] = []
    across = ""
    if global_text.strip():
        body, left_global = briefing.select(global_text, int(room * GLOBAL_SHARE))
        across = f"Across all projects ({paths.global_memory_file()}):\n\n{body.strip()}\n\n"
        left += [f"{item} (global)" for item in left_global]
        room -= len(across)
    body, left_project = briefing.select(text, room) if text.strip() else ("", [])
    left += left_project
    if left:
        tail = f"Left out for size: {'; '.join(left)}; `keeper recall <words>` finds them. " + tail
    for name, size in ((project.memory, cut), (paths.global_memory_file(), global_cut)):
        if size:
            tail = (
                f"{name} is {size / 1e6:.0f} MB, too large to read whole at session start: chosen from its "
                f"first {BRIEFING_BYTES >> 20} MB only (trim it by hand; recall searches it all). " + tail
            )
    context = head + "\n\n" + across + body.strip() + missed + so_far + "\n\n" + tail
    view = document.overview(text)
    parts = [f"{view.decisions} decision{'s' if view.decisions != 1 else ''}"]
    if view.issues:
        parts.append(f"{view.issues} open issue{'s' if view.issues != 1 else ''}")
    global_items = document.overview(global_text).typed
    if global_items:
        parts.append(f"{global_items} global note{'s' if global_items != 1 else ''}")
    if unsaved:
        parts.append(f"{len(unsaved)} unsaved session{'s' if len(unsaved) != 1 else ''}")
    status = f"Keeper: {', '.join(parts)}, last saved {saved}"
    return context.strip()[:HARD_CAP], status


SCOPE_LABELS = {"global": "[global memory] ", "native": "[Claude Code auto memory] "}


def _grouped(results: list[Result]) -> list[tuple[str, list[Result]]]:
    """Results grouped by file, files in the order of their best result."""
    groups: dict[str, list[Result]] = {}
    for result in results:
        groups.setdefault(os.path.abspath(result.chunk.path), []).append(result)
    return list(groups.items())


def recall_block(query: str, results: list[Result], limit_chars: int = 6000) -> str:
    """Recall results grouped by file, dated, best first; bounded for the hook channel."""
    if not results:
        return (
            f"Keeper recall for {query!r}: no match in this project's memory.md, its session files or the "
            "global memory. "
            "Different words (or fewer) may find it; `keeper status` shows where the files are."
        )
    groups = _grouped(results)
    lines = [f"Keeper recall for {query!r}: {len(results)} match(es) in {len(groups)} file(s), best first."]
    for path, items in groups:
        dated = items[0].chunk.date
        label = SCOPE_LABELS.get(items[0].scope, "")
        lines.append(f"\n{label}{os.path.basename(path)}" + (f" ({dated})" if dated else "") + f": {path}")
        for item in items:
            heading = item.chunk.heading.split(" > ", 1)[-1]
            lines.append(f"  - {heading} [score {item.score:.2f}, id {item.id}]")
            lines.extend("      " + ln for ln in item.snippet.splitlines())
    lines.append(
        "\nFor the whole section: `keeper expand <id>`. A session file's Transcript line names the full "
        "conversation: `keeper transcript <path>`."
    )
    return _bounded("\n".join(lines), limit_chars)


def _bounded(text: str, limit: int) -> str:
    """Text for Claude's context: redacted (recall also reads files Keeper did not write, such as
    hand edits and Claude Code's own memory) and cut to ``limit``."""
    from keeper.redact import redact

    out = redact(text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def auto_recall_block(results: list[Result], limit_chars: int) -> str:
    """What automatic recall adds to a prompt: a few dated, one-line pointers, bounded."""
    lines = ["Keeper found earlier notes in this project that match this prompt (automatic recall):"]
    for item in results:
        dated = f"{item.chunk.date}, " if item.chunk.date else ""
        snippet = " ".join(item.snippet.split())
        label = SCOPE_LABELS.get(item.scope, "")
        lines.append(f"- {label}{item.chunk.heading} ({dated}id {item.id}): {snippet[:300]}")
    lines.append("The whole section: `keeper expand <id>`; more: `keeper recall <words>`.")
    return _bounded("\n".join(lines), limit_chars)
