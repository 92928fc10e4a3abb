"""How Gemini CLI reaches Keeper on this machine: the extension it installed, whether its hooks can run.

``gemini extensions install OWNER/REPO --consent`` copies the repository into
``~/.gemini/extensions/keeper/`` (``$GEMINI_CLI_HOME`` in place of the home folder when set) and
records how in ``.gemini-extension-install.json``; ``gemini extensions link`` records a ``link`` to a
checkout instead. Gemini runs an extension's hooks with no trust step, but only from
``hooks/hooks.json`` (see ``bootstrap.complete_gemini_hooks``), only when ``hooksConfig.enabled`` is
not false in its settings, and not those named in ``hooksConfig.disabled``.
"""

from __future__ import annotations

import os

from keeper.plugin import bootstrap, install
from keeper.store.fsutil import read_json

NAME = "keeper"  # gemini-extension.json's name: the folder Gemini installs the extension into
FULL_HOOKS = ("BeforeAgent", "AfterTool", "AfterAgent")  # present once the hooks are complete
COMPLETE_STEP = "start one `gemini` session: at its end Keeper completes its hooks, which run from the next one"


def home() -> str:
    """Gemini CLI's own folder."""
    return os.path.join(os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~"), ".gemini")


def complete_hooks(root: str) -> bool:
    """The hook side of ``bootstrap.complete_gemini_hooks``, for a session run by a ``keeper`` on PATH."""
    return bool(root) and bootstrap.complete_gemini_hooks(root)


class GeminiInstall:
    """Keeper's extension in Gemini CLI: its version, whether it is a link, which hooks Gemini will run."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        how = read_json(os.path.join(folder, bootstrap.GEMINI_INSTALL))
        self.linked = how.get("type") == "link" and isinstance(how.get("source"), str)
        self.root = str(how["source"]) if self.linked else folder
        manifest = read_json(os.path.join(self.root, "gemini-extension.json"))
        self.version = str(manifest.get("version", ""))
        hooks = read_json(os.path.join(self.root, *bootstrap.SHARED_HOOKS)).get("hooks")
        self.complete = isinstance(hooks, dict) and all(event in hooks for event in FULL_HOOKS)
        self.data = os.path.join(home(), NAME)

    def hooks_off(self, settings: dict[str, object]) -> str:
        """Why Gemini's settings keep Keeper's hooks from running ("" when nothing does)."""
        config = settings.get("hooksConfig")
        config = config if isinstance(config, dict) else {}
        if config.get("enabled") is False:
            return "hooksConfig.enabled is false in Gemini's settings: no hook runs"
        disabled = config.get("disabled")
        named = (
            [n for n in disabled if isinstance(n, str) and n.startswith("keeper")] if isinstance(disabled, list) else []
        )
        return f"Gemini's settings disable {', '.join(named)} (hooksConfig.disabled)" if named else ""

    def as_dict(self) -> dict[str, object]:
        return {
            "extension": self.folder,
            "version": self.version,
            "linked": self.linked,
            "hooks_complete": self.complete,
            "hooks_off": self.hooks_off(settings()),
        }


def settings() -> dict[str, object]:
    return read_json(os.path.join(home(), "settings.json"))


def installs() -> list[GeminiInstall]:
    """Keeper's extension in Gemini CLI, if it is installed (or linked)."""
    folder = os.path.join(home(), "extensions", NAME)
    return [GeminiInstall(folder)] if os.path.isfile(os.path.join(folder, bootstrap.GEMINI_INSTALL)) else []


def install_hint() -> str:
    """The one command that installs Keeper in Gemini CLI, from the same source as Claude Code's."""
    found = install.source()
    if not found:
        return "in a clone of Keeper's repository run `gemini extensions install . --consent`"
    is_repository = "/" in found and not os.path.isabs(found.strip('"'))  # owner/name on GitHub
    return f"run `gemini extensions install {'https://github.com/' if is_repository else ''}{found} --consent`"
