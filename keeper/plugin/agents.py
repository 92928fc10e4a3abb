"""The coding agents Keeper serves, Claude Code and Codex CLI: which one runs us, and how each one finds us.

Both run the same plugin (the repository root) with the same hook payloads, but they differ where
Keeper meets them. Codex puts no ``keeper`` on the model's PATH (its shell is a login shell whose
profile may reset PATH anyway), so a save request there names the launcher by its absolute path;
its shell tool carries the session in ``CODEX_SESSION_ID`` where Claude Code's Bash tool has
``CLAUDE_CODE_SESSION_ID``. Standard library only: the hooks ask these questions.
"""

from __future__ import annotations

import os


def session_from_env() -> str:
    """The session a command runs in, from the agent's shell tool (empty outside one)."""
    return os.environ.get("CLAUDE_CODE_SESSION_ID") or os.environ.get("CODEX_SESSION_ID") or ""


def under_codex() -> bool:
    """Whether this hook runs under Codex: it sets ``PLUGIN_ROOT`` beside ``CLAUDE_PLUGIN_ROOT``, and
    never ``CLAUDECODE``, which Claude Code sets for every hook."""
    return bool(os.environ.get("PLUGIN_ROOT")) and not os.environ.get("CLAUDECODE")


def model() -> str:
    """Whom Keeper's one-line notices say it asked: ``Codex`` under Codex, else ``Claude``."""
    return "Codex" if under_codex() else "Claude"


def save_program() -> str:
    """How a save request names Keeper: ``keeper``, or under Codex the plugin's launcher, quoted for
    a POSIX shell (Codex's shell tool is ``bash -lc``; Claude Code's Bash tool has ``bin/`` on PATH)."""
    root = os.environ.get("CLAUDE_PLUGIN_ROOT", "")
    if os.name == "nt" or not root or not under_codex():
        return "keeper"
    import shlex

    return shlex.quote(os.path.join(root, "bin", "keeper"))
