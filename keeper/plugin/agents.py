"""The coding agents Keeper serves, Claude Code, Codex CLI and Gemini CLI: which one runs us, and how each one finds us.

All run the same plugin (the repository root) with hook payloads of the same shape, but they differ
where Keeper meets them. Codex and Gemini put no ``keeper`` on the model's PATH (Codex's shell is a
login shell whose profile may reset PATH anyway), so a save request there names the launcher by its
absolute path; Codex's shell tool carries the session in ``CODEX_SESSION_ID`` where Claude Code's
Bash tool has ``CLAUDE_CODE_SESSION_ID``, and Gemini's carries none, so its save request names the
session itself. Gemini runs its hooks with ``GEMINI_SESSION_ID`` and ``GEMINI_PROJECT_DIR`` set, and
Keeper's Gemini hooks set ``CLAUDE_PLUGIN_ROOT`` to the extension's folder. OpenCode's plugin
(``opencode/keeper.js``) runs the hooks with ``KEEPER_AGENT=opencode`` and gives its shell tool the
session in ``KEEPER_SESSION_ID`` and the launcher's folder on PATH. Standard library only: the hooks
ask these questions.
"""

from __future__ import annotations

import os


def session_from_env() -> str:
    """The session a command runs in, from the agent's shell tool (empty outside one)."""
    found = os.environ.get("CLAUDE_CODE_SESSION_ID") or os.environ.get("CODEX_SESSION_ID")
    return found or os.environ.get("KEEPER_SESSION_ID") or ""


def under_codex() -> bool:
    """Whether this hook runs under Codex: it sets ``PLUGIN_ROOT`` beside ``CLAUDE_PLUGIN_ROOT``, and
    never ``CLAUDECODE``, which Claude Code sets for every hook."""
    return bool(os.environ.get("PLUGIN_ROOT")) and not os.environ.get("CLAUDECODE")


def under_gemini() -> bool:
    """Whether this hook runs under Gemini CLI, which sets both for every hook (its shell tool neither)."""
    return bool(os.environ.get("GEMINI_SESSION_ID")) and bool(os.environ.get("GEMINI_PROJECT_DIR"))


def under_opencode() -> bool:
    """Whether this hook runs from Keeper's OpenCode plugin, which says so."""
    return os.environ.get("KEEPER_AGENT") == "opencode"


def can_hold_stop() -> bool:
    """Whether the agent can keep a turn from ending with a request: OpenCode's plugins cannot."""
    return not under_opencode()


def model() -> str:
    """Whom Keeper's one-line notices say it asked: ``Codex``, ``Gemini``, ``OpenCode``, else ``Claude``."""
    if under_codex():
        return "Codex"
    return "Gemini" if under_gemini() else "OpenCode" if under_opencode() else "Claude"


def names_session() -> bool:
    """Whether a save request must name its session: the agent's shell tool carries no session id."""
    return under_gemini()


def save_program() -> str:
    """How a save request names Keeper: ``keeper``, or under Codex and Gemini the plugin's launcher, quoted
    for a POSIX shell (their shell tools run bash; Claude Code's Bash tool has ``bin/`` on PATH)."""
    root = os.environ.get("CLAUDE_PLUGIN_ROOT", "")
    if os.name == "nt" or not root or not (under_codex() or under_gemini()):
        return "keeper"
    import shlex

    return shlex.quote(os.path.join(root, "bin", "keeper"))
