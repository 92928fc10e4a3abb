"""``keeper doctor --live``: one real model turn through the installed agent, to see that memory reaches it.

The other checks read files; this one asks the model. It runs one headless session of Claude Code
(``claude -p``) or Codex (``codex exec``) with the user's own login and no tools, in a throwaway
store whose global memory holds a word drawn for this run, and asks for the word back. Every hook
of that session writes into the throwaway store (the user's global settings copied in), which is
deleted afterwards, so nothing of the run stays in the user's memory; before it goes, the store
tells where a missing word was lost (SessionStart never ran, ran and gave nothing, or gave the word
and the model did not repeat it).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile

from keeper import process
from keeper.store import counters, paths
from keeper.store.fsutil import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

    Finding = tuple[bool, str, str]  # ok, what was seen, what to do next

TIMEOUT = 180.0  # seconds for the whole session: the agent's start, the hooks, one model turn
WORD = "keeper-live-"  # each run's check word: this and 12 random hex digits
MEMORY = "# Global Memory\n\n## Reference\n\n- Keeper live check word: {word}\n"
PROMPT = (
    "This is Keeper's live check (`keeper doctor --live`). The memory Keeper gave you when this session "
    "started has a line 'Keeper live check word: ...'. Reply with that word alone, or NONE if you were "
    "given no such line. Do not run any tool."
)
# What a session of the agent running this command (doctor run by Claude's Bash tool) leaves in the
# environment: the new session must not take itself for part of that one, nor use its store.
INHERITED = (
    *("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE"),
    *("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "PLUGIN_ROOT", "PLUGIN_DATA"),
    *("CODEX_SESSION_ID", "CODEX_THREAD_ID", "CODEX_TOOL_CALL_ID", "CODEX_CI"),
    *("KEEPER_HOME", "KEEPER_SESSION_ID", "KEEPER_AGENT"),
)
LOGGED_OUT = re.compile(r"log(?:ged)? ?in\b|/login|api key|unauthori[sz]ed|\b401\b|authenticat", re.IGNORECASE)


class Agent:
    """One agent the live check can ask: its program, how to run it headless, how to log in."""

    def __init__(self, name: str, title: str, args: tuple[str, ...], login: str) -> None:
        self.name, self.title, self.args, self.login = name, title, args, login


AGENTS = {
    "claude": Agent(
        "claude",
        "Claude Code",
        ("-p", "--no-session-persistence", "--tools", "", "--"),  # no tool: the word comes from memory only
        "run `claude` and log in (/login), or set ANTHROPIC_API_KEY; then run this again",
    ),
    "codex": Agent(
        "codex",
        "Codex",
        ("exec", "--skip-git-repo-check", "--ephemeral", "--sandbox", "read-only"),
        "run `codex login`, then run this again",
    ),
}


def installed() -> list[str]:
    """The agents the live check can ask here: those on PATH."""
    return [name for name in AGENTS if process.which(name)]


def notice(names: list[str]) -> str:
    """What the check is about to spend, said before it spends it."""
    runs = " and ".join(f"`{AGENTS[n].name} {AGENTS[n].args[0]}`" for n in names)
    return (
        f"Live check: starting {runs} once each in this folder, with your own login: one model turn, "
        f"which costs one request{'s' if len(names) > 1 else ''} each. Keeper's memory in that session is a "
        "throwaway copy holding one check word, deleted afterwards."
    )


def check(name: str, cwd: str, timeout: float = TIMEOUT) -> Finding:
    """Ask agent ``name`` for this run's check word, in ``cwd``: ``(ok, detail, fix)``."""
    agent = AGENTS[name]
    program = process.which(agent.name)
    if not program:
        return False, f"no `{agent.name}` on PATH", f"install {agent.title}, or choose another agent with --agent"
    word = WORD + secrets.token_hex(6)
    store = throwaway(word)
    try:
        try:
            done = process.run(
                [program, *agent.args, PROMPT],
                cwd=cwd,
                timeout=timeout,
                env={"KEEPER_HOME": store},
                check=False,
                group=True,
                drop=INHERITED,
            )
        except process.ProcessFailed as exc:
            fix = f"run `{agent.name}` here by hand to see what it waits for (a login, the network)"
            fix += "; --timeout waits longer"
            return False, f"{agent.title}: {exc}", fix
        return _verdict(agent, done, word, store)
    finally:
        shutil.rmtree(store, ignore_errors=True)


def throwaway(word: str) -> str:
    """A new store for one check: a global memory holding ``word``, and the user's global settings
    (context size and all), which ``KEEPER_HOME`` would otherwise hide from the session's hooks."""
    settings = paths.global_config_file()
    store = tempfile.mkdtemp(prefix="keeper-check-")
    atomic_write(os.path.join(store, "global", "memory.md"), MEMORY.format(word=word))
    if os.path.isfile(settings):
        shutil.copyfile(settings, os.path.join(store, "config.yaml"))
    return store


def _verdict(agent: Agent, done: subprocess.CompletedProcess[bytes], word: str, store: str) -> Finding:
    """Whether the word came back, and where it was lost when it did not."""
    answer = done.stdout.decode("utf-8", "replace").strip()
    if word in answer:
        return True, f"{agent.title} repeated this run's check word from Keeper's memory: memory reaches the model", ""
    said = process.last_words(done.stderr or done.stdout)
    if done.returncode != 0:
        if LOGGED_OUT.search(said) or LOGGED_OUT.search(answer):
            return False, f"{agent.title} is not logged in ({said})", agent.login
        return False, f"`{agent.name}` failed: {said}", f"run `{agent.name}` here by hand and fix what it says"
    injected = _start_injected(store)
    if injected is None:
        return (
            False,
            f"Keeper's hooks did not run in {agent.title}, so its memory never reached the model",
            _no_hooks(agent),
        )
    if not injected:
        problem = _last_error(store)
        detail = f"Keeper's SessionStart ran in {agent.title} but gave the model nothing"
        return False, detail + (f" ({problem})" if problem else ""), "run `keeper doctor` and `keeper status` here"
    heard = answer.splitlines()[-1][:200] if answer else "nothing"
    detail = f"Keeper gave {agent.title} its memory ({injected} characters), but the model's answer ({heard!r}) "
    fix = "run the check again; if it fails again, report it with the agent's version (`{} --version`)"
    return False, detail + "did not hold this run's check word", fix.format(agent.name)


def _start_injected(store: str) -> int | None:
    """Characters Keeper's SessionStart injected in the throwaway store; None when it never ran."""
    projects = os.path.join(store, "projects")
    found = None
    for name in os.listdir(projects) if os.path.isdir(projects) else []:
        started = counters.hook_summary(os.path.join(projects, name, "state")).get("session-start")
        if started:
            found = (found or 0) + int(started["injected_bytes"])
    return found


def _last_error(store: str) -> str:
    """The newest ERROR Keeper logged in the throwaway store, if any."""
    try:
        with open(os.path.join(store, "logs", "keeper.log"), encoding="utf-8", errors="replace") as fh:
            errors = [line.strip() for line in fh if " ERROR " in line]
    except OSError:
        return ""
    return errors[-1][:300] if errors else ""


def _no_hooks(agent: Agent) -> str:
    """What to do when Keeper's hooks never ran in the agent: install, trust, or wait for the set-up."""
    if agent.name == "codex":
        from keeper.plugin import codex

        found = codex.plugin_installs()
        if not found:
            return codex.install_hint()
        return codex.TRUST_STEP if any(p.untrusted for p in found) else "run `keeper doctor` here and fix what it says"
    from keeper.plugin import install

    plugins = install.plugin_installs()
    if not plugins:
        return install.install_hint()
    if not any(p.env_ready for p in plugins):
        return (
            "Keeper is still setting itself up (or failed to: see `keeper doctor`); start one Claude Code "
            "session, wait a minute, run this again"
        )
    return "run `keeper doctor` here and fix what it says; then start a new Claude Code session"
