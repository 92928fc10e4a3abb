"""Prompt-time answers: ``/keeper:recall``, ``/keeper:clear`` and automatic recall, in-process.

Claude Code pastes a command's arguments into ``!`` shell lines unquoted, so a query such as
``$(rm -rf ~)`` would run there. Instead the UserPromptSubmit hook receives the prompt as JSON
and answers here: the query is only ever data, searched literally, and nothing is executed. An
ordinary prompt may get a few relevant past notes (automatic recall).
"""

from __future__ import annotations

import os

from keeper.errors import KeeperError
from keeper.store import paths
from keeper.store.config import Config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from keeper.recall.search import Result

# context, search, sessions and trash load inside the functions that use them: an ordinary short
# prompt, the common case, must cost this hook nothing but the checks that turn it away.

SLASH_COMMANDS = ("keeper:recall", "recall", "keeper:clear", "keeper:save")
AUTO_LIMIT, AUTO_CHARS = 3, 1500
AUTO_MIN_WORDS = 4
# Characters of a prompt automatic recall searches with: its beginning and its end (a question before
# or after a pasted log). A 40 KB paste of 5,000 distinct words the memory holds took the hook 56 s.
AUTO_PROMPT_CHARS = 4000
MIN_COVERAGE, MIN_HITS = 0.5, 2
NATIVE_INDEX = "MEMORY.md"  # Claude Code's auto memory index: in context already


def slash_command(prompt: str) -> tuple[str, str] | None:
    """``("keeper:recall", "the query")`` for a prompt that invokes one of Keeper's commands, up to a
    blank line (Gemini's commands expand to the command's line, a blank line, the instructions)."""
    parts = prompt.strip().split("\n\n", 1)[0].split(None, 1)
    if not parts or not parts[0].startswith("/") or parts[0][1:] not in SLASH_COMMANDS:
        return None
    return parts[0][1:], parts[1].strip() if len(parts) > 1 else ""


class Answer:
    """What a prompt gets: text in front of Claude, and one line for the user ("" for none)."""

    __slots__ = ("context", "notice")

    def __init__(self, context: str = "", notice: str = "") -> None:
        self.context, self.notice = context, notice


def answer(project: paths.Project, cfg: Config, prompt: str, session: str) -> Answer:
    """A command's answer, relevant earlier notes, or nothing."""
    found = slash_command(prompt)
    if found is None:
        return auto_recall(project, cfg, prompt, session)
    command, args = found
    if command.endswith("recall"):
        return recall_for_prompt(project, cfg, args, session)
    if command == "keeper:save":
        return save_for_prompt(session)
    return clear_for_prompt(project, cfg, args)


def save_for_prompt(session: str = "") -> Answer:
    """/keeper:save: the command file's save, with an end marker drawn for this request (and, where the
    agent's shell carries no session id, the session)."""
    import os

    from keeper.hooks import context

    command = context.save_command(os.name == "nt", session=session)
    return Answer(
        f"Keeper: for this save, end the heredoc with the marker below instead of {context.STATIC_END}: "
        f"it was drawn for this request, so no saved line can end the input early.\n\n{command}"
    )


RECALLED_BYTES = 256 << 10  # recall hits kept for one session's use receipts; later ones are not judged


def remember_recalled(project: paths.Project, session: str, via: str, snippets: list[str]) -> None:
    """Keep what recall put into this session's context (``via``: how), one JSON line a hit, so the
    session's Stop judges whether the memory items it carried were used (``capture.receipts``)."""
    from keeper import jsonio

    path = project.session_file(session, "recalled")
    try:
        if os.path.getsize(path) > RECALLED_BYTES:
            return
    except OSError:
        pass
    lines = "".join(jsonio.dumps({"via": via, "text": text}) + "\n" for text in snippets)
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(lines)
    except OSError:
        pass


def recall_for_prompt(project: paths.Project, cfg: Config, query: str, session: str = "") -> Answer:
    from keeper.hooks import context
    from keeper.recall import search

    if not query:
        usage = (
            "Keeper recall: no query was given. Usage: /keeper:recall <words> "
            "(for example /keeper:recall cache invalidation)."
        )
        return Answer(usage, "Keeper: /keeper:recall needs words to look for")
    results = search.search(project, query, limit=cfg.recall_limit, team=cfg.team)
    files = len({r.chunk.path for r in results})
    shown = query if len(query) <= 40 else query[:39] + "…"
    matches = f"{len(results)} match{'es' if len(results) != 1 else ''}"
    notice = (
        f"Keeper: {matches} for '{shown}' in {files} file{'s' if files != 1 else ''}"
        if results
        else f"Keeper: nothing found for '{shown}'"
    )
    block = context.recall_block(query, results, patterns=cfg.redact_patterns)
    if session and results:
        hits = [r.snippet for r in results if r.snippet.split("\n", 1)[0] in block]  # not cut off the block
        remember_recalled(project, session, "recall", hits)
    return Answer(block, notice)


def clear_for_prompt(project: paths.Project, cfg: Config, args: str) -> Answer:
    from keeper.store import trash

    words = args.split()
    what = words[0].lower() if words else "old"
    if what not in trash.CLEAR_WHAT or len(words) > 1:
        text = (
            f"Keeper clear: {args!r} is not understood, so nothing was removed. Usage: /keeper:clear old "
            "(session files older than the configured days) or /keeper:clear all."
        )
        return Answer(text, "Keeper: nothing was cleared (use /keeper:clear old or /keeper:clear all)")
    days = cfg.clear_older_than
    try:
        files = trash.files_to_clear(project, what, days)
        if not files:
            scope = "memory" if what == "all" else f"session files older than {days} days"
            text = f"Keeper clear {what}: no {scope} to clear for project '{project.name}'. Nothing was removed."
            return Answer(text, f"Keeper: no {scope} to clear")
        backup = trash.clear(project, files, f"/keeper:clear {what}", cfg.trash_days)
    except KeeperError as exc:
        return Answer(f"Keeper clear {what}: nothing was removed: {exc}", "Keeper: nothing was cleared (see above)")
    moved = trash.described([os.path.relpath(f, project.dir) for f in files])
    text = (
        f"Keeper clear {what}: moved {moved} of project '{project.name}' to {backup}. "
        f"They can be brought back with `keeper restore` for {cfg.trash_days} days."
    )
    from keeper.sync import remote

    everywhere = remote.clears_everywhere(project, what)
    if everywhere:  # as the CLI warns: the clear is recorded and travels to every machine
        text += f" Tell the user this too: {everywhere}"
        return Answer(
            text, f"Keeper: moved {moved} to the trash on every machine that syncs; `keeper restore` undoes it"
        )
    return Answer(text, f"Keeper: moved {moved} to the trash; `keeper restore` brings them back")


def auto_recall(project: paths.Project, cfg: Config, prompt: str, session: str) -> Answer:
    """Up to three past sections that cover enough of the prompt, or "" when nothing is relevant.

    memory.md (given at session start) and this session's own file (in context already) are left
    out, as is Claude Code's own MEMORY.md index, which it loads itself. The index check is the
    quick one and typo correction is off: this runs on every prompt.
    """
    if not cfg.auto_recall or prompt.lstrip().startswith("/") or len(prompt.split()) < AUTO_MIN_WORDS:
        return Answer()
    if len(prompt) > AUTO_PROMPT_CHARS:
        half = AUTO_PROMPT_CHARS // 2
        prompt = f"{prompt[:half]}\n{prompt[-half:]}"
    if not os.path.isdir(project.sessions):
        return Answer()  # nothing beyond memory.md, which SessionStart already gave
    from keeper.recall import gate

    kept = gate.kept(project, cfg.team, session)  # the gate on disk, if it holds: the search uses it too
    if kept is not None and gate.holds_too_few(prompt, kept.terms, MIN_HITS):
        return Answer()  # fewer than MIN_HITS of its terms are anywhere in the memory: the index stays shut
    from keeper.recall import search
    from keeper.store import sessions

    own = sessions.existing_file(project, session)

    def shown_already(path: str) -> bool:  # memory.md, Claude Code's index, this session's own file
        return os.path.basename(path) in (paths.MEMORY_FILE, NATIVE_INDEX) or path == own

    results = search.search(
        project,
        prompt,
        limit=12,
        thorough=False,
        correct=False,
        min_terms=MIN_HITS,
        team=cfg.team,
        gate_for=(session, os.path.basename(own) if own else ""),
        leave_out=shown_already,
        gate_kept=kept is not None,
    )
    relevant = [r for r in results if r.coverage >= MIN_COVERAGE and r.hits >= MIN_HITS][:AUTO_LIMIT]
    if not relevant:
        return Answer()
    days = sorted({r.chunk.date for r in relevant if r.chunk.date}, reverse=True)
    when = f" from {', '.join(days)}" if days else ""
    notice = f"Keeper: recalled {len(relevant)} earlier note{'s' if len(relevant) != 1 else ''}{when}"
    remember_recalled(project, session, "auto-recall", [_head(r.snippet, AUTO_SNIPPET) for r in relevant])
    return Answer(auto_recall_block(relevant, AUTO_CHARS, cfg.redact_patterns), notice)


AUTO_SNIPPET = 300  # characters of one note automatic recall shows


def auto_recall_block(results: list[Result], limit_chars: int, patterns: Sequence[str] = ()) -> str:
    """What automatic recall adds to a prompt: a few dated, one-line pointers, bounded (without the
    session start's context builder, ``keeper.hooks.context``: this runs on every prompt that recalls)."""
    from keeper.recall import sources
    from keeper.redact import for_context
    from keeper.text import inline

    lines = ["Keeper found earlier notes in this project that match this prompt (automatic recall):"]
    for item in results:
        dated = f"{item.chunk.date}, " if item.chunk.date else ""
        snippet = " ".join(item.snippet.split())
        label = sources.LABELS.get(item.scope, "")
        lines.append(f"- {label}{inline(item.chunk.heading)} ({dated}id {item.id}): {snippet[:AUTO_SNIPPET]}")
    lines.append("The whole section: `keeper expand <id>`; more: `keeper recall <words>`.")
    return for_context("\n".join(lines), limit_chars, patterns)


def _head(snippet: str, size: int) -> str:
    """The lines of ``snippet`` that automatic recall shows within ``size`` characters (it joins them)."""
    kept, used = [], 0
    for line in snippet.splitlines():
        used += len(" ".join(line.split())) + 1
        if used > size + 1:
            break
        kept.append(line)
    return "\n".join(kept)
