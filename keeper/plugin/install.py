"""How Claude Code reaches Keeper on this machine: the plugin install, its environment, a keeper on PATH.

``keeper doctor`` and ``keeper status`` report from here, reading what Claude Code itself wrote
(``settings.json``, ``plugins/known_marketplaces.json``, ``plugins/installed_plugins.json``) and
what the plugin's set-up left in its data folder. Every fix suggested is a command that works as
written on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

from keeper import __version__
from keeper.plugin import bootstrap
from keeper.store.paths import claude_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _ready_env(data: str, version: str) -> dict[str, object]:
    """The facts of a finished environment of this plugin version in its data folder (its folder is
    named by the version and the code's digest, which only the plugin's own files know), or ``{}``."""
    folder = os.path.join(data, bootstrap.ENV_DIR)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    for name in names:
        facts = bootstrap.ready_facts(os.path.join(folder, name))
        if facts.get("version") == version:
            return facts
    return {}


def checkout() -> str | None:
    """The repository folder this Keeper runs from, when it is a checkout of the plugin."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return here if os.path.isfile(os.path.join(here, ".claude-plugin", "plugin.json")) else None


def installed_from() -> str | None:
    """Where pip installed this Keeper from, as ``claude plugin marketplace add`` takes it: the clone's
    folder (``pip install .``) or ``owner/name`` on GitHub, read from the ``direct_url.json`` pip
    records (PEP 610); None for an install from an index."""
    import re
    from importlib import metadata
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    try:
        recorded = json.loads(metadata.distribution("claude-keeper").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None
    url = recorded.get("url") if isinstance(recorded, dict) else None
    if not isinstance(url, str):
        return None
    if url.startswith("file://"):
        folder = os.path.abspath(url2pathname(urlparse(url).path))
        return folder if os.path.isfile(os.path.join(folder, ".claude-plugin", "marketplace.json")) else None
    github = re.match(r"(?:git\+)?https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?(?:@.*)?$", url)
    return github.group(1) if github else None


def source() -> str | None:
    """Where Keeper can be installed from, as every agent's hint names it (quoted when it holds a
    space): this checkout, or the clone or ``owner/name`` repository pip installed Keeper from."""
    found = checkout() or installed_from()
    return f'"{found}"' if found and " " in found else found


def install_hint() -> str:
    """The two commands that install Keeper in Claude Code (the plugin sets itself up), naming a
    source that exists (``source``), or a clone's folder."""
    return (
        f"run `claude plugin marketplace add {source()}`, then `claude plugin install keeper@keeper`"
        if source()
        else "in a clone of Keeper's repository run `claude plugin marketplace add .`, "
        "then `claude plugin install keeper@keeper`"
    )


# What a working clone may hold besides the plugin that matters in Claude Code's copy of it: a
# virtualenv, dependencies, the tests' caches. (`pip install .` leaves build/ and *.egg-info: a few
# hundred kilobytes that nothing runs, so they are not worth a reinstall.)
NOT_PLUGIN_FILES = (".venv", "venv", ".cache", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache")


class PluginInstall:
    """One enabled ``keeper@<marketplace>`` plugin and the state of its set-up."""

    def __init__(self, name: str) -> None:
        self.name = name
        marketplace = name.split("@", 1)[1]
        plugins = os.path.join(claude_dir(), "plugins")
        known = _json(os.path.join(plugins, "known_marketplaces.json")).get(marketplace)
        source = known.get("source") if isinstance(known, dict) else None
        local = isinstance(source, dict) and source.get("source") == "directory"
        self.source_path = source.get("path") if local and isinstance(source, dict) else None
        entries = _json(os.path.join(plugins, "installed_plugins.json")).get("plugins", {})
        entry = entries.get(name) if isinstance(entries, dict) else None
        first = entry[0] if isinstance(entry, list) and entry and isinstance(entry[0], dict) else {}
        self.version = str(first.get("version") or "")
        path = first.get("installPath")
        self.install_path = path if isinstance(path, str) and os.path.isabs(path) else None
        self.data = os.path.join(plugins, "data", "".join(c if c.isalnum() or c in "_-" else "-" for c in name))
        facts = _ready_env(self.data, self.version or __version__)
        self.env_ready = bool(facts)
        self.env_python = str(facts.get("python", ""))
        failed = _json(os.path.join(self.data, bootstrap.SETUP_FAILED)).get("systemMessage")
        self.failure = failed if isinstance(failed, str) else None

    def copied_extras(self) -> list[str]:
        """Folders in Claude Code's copy of the plugin that are no part of it: a local marketplace's
        whole folder is copied (Claude Code honours no ignore file), a virtualenv and caches too."""
        if not self.install_path:
            return []
        return [name for name in NOT_PLUGIN_FILES if os.path.isdir(os.path.join(self.install_path, name))]

    @property
    def source_missing(self) -> bool:
        return bool(self.source_path) and not os.path.isdir(str(self.source_path))

    def as_dict(self) -> dict[str, object]:
        return {
            "plugin": self.name,
            "version": self.version,
            "data": self.data,
            "environment_ready": self.env_ready,
            "environment_python": self.env_python,
            "setup_failure": self.failure,
            "marketplace_folder": self.source_path,
            "marketplace_folder_missing": self.source_missing,
        }


def plugin_installs() -> list[PluginInstall]:
    """The keeper plugins enabled in Claude Code's user settings."""
    enabled = _json(os.path.join(claude_dir(), "settings.json")).get("enabledPlugins", {})
    if not isinstance(enabled, dict):
        return []
    return [PluginInstall(name) for name, on in sorted(enabled.items()) if name.startswith("keeper@") and on]


def keeper_on_path() -> str | None:
    """The ``keeper`` a shell (and Claude's Bash tool, before the plugin's own) would run."""
    return shutil.which("keeper")


def in_virtualenv(command: str) -> bool:
    """Whether a console script lives in a virtualenv's bin folder, which other shells do not see."""
    folder = os.path.dirname(os.path.dirname(os.path.realpath(command)))
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg")) and "pipx" not in folder and "uv" not in folder


def running_in_plugin_env() -> bool:
    """Whether this interpreter is the environment Keeper set up (bin/keeper starts it without the
    site module, so ``sys.prefix`` names the base Python: its own folder is asked instead)."""
    env = os.path.dirname(os.path.dirname(sys.executable))
    return os.path.isfile(os.path.join(env, bootstrap.READY)) or os.path.isfile(
        os.path.join(sys.prefix, bootstrap.READY)
    )
