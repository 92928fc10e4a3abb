"""How OpenCode reaches Keeper on this machine: its plugin, from a folder named in OpenCode's config or a copied file.

``opencode plugin <folder> -g`` adds the folder to the ``plugin`` list of
``~/.config/opencode/opencode.jsonc`` (``$XDG_CONFIG_HOME``); a copy of ``keeper.js`` in
``~/.config/opencode/plugin/`` loads too. OpenCode asks no trust for either. The plugin runs the
launcher of the clone it comes from, or ``keeper`` on PATH: without one its hooks cannot run.
"""

from __future__ import annotations

import json
import os

from keeper.plugin import install

PLUGIN_FILE = "keeper.js"


def config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "opencode")


def _listed() -> list[str]:
    """Plugin paths of OpenCode's global config (``opencode.json`` or ``.jsonc``; comment lines skipped)."""
    found: list[str] = []
    for name in ("opencode.json", "opencode.jsonc"):
        try:
            with open(os.path.join(config_dir(), name), encoding="utf-8") as fh:
                text = "\n".join(line for line in fh if not line.lstrip().startswith("//"))
            plugins = json.loads(text).get("plugin")
        except (OSError, ValueError, AttributeError):
            continue
        found += [p for p in plugins if isinstance(p, str)] if isinstance(plugins, list) else []
    return found


def installs() -> list[dict[str, object]]:
    """Keeper's plugin as OpenCode loads it: ``{plugin, present, runs_keeper}`` for each place."""
    found = []
    for listed in _listed():
        if os.path.isfile(os.path.join(listed, PLUGIN_FILE)):
            launcher = os.path.join(listed, "..", "bin", "keeper")
            found.append({"plugin": listed, "present": True, "runs_keeper": os.path.isfile(launcher) or _on_path()})
        elif "keeper" in listed.lower() and not os.path.exists(listed):  # a clone moved or deleted since
            found.append({"plugin": listed, "present": False, "runs_keeper": False})
    copied = os.path.join(config_dir(), "plugin", PLUGIN_FILE)
    if os.path.isfile(copied):
        found.append({"plugin": copied, "present": True, "runs_keeper": _on_path()})
    return found


def _on_path() -> bool:
    return bool(install.keeper_on_path())


def install_hint() -> str:
    """The one command that installs Keeper in OpenCode: the ``opencode`` folder of a clone (this
    checkout, or the clone pip installed Keeper from)."""
    found = (install.source() or "").strip('"')
    if not os.path.isabs(found):  # none, or an owner/name repository on GitHub: OpenCode needs a clone
        return "run `opencode plugin <clone>/opencode -g` with the path of a clone of Keeper's repository"
    folder = os.path.join(found, "opencode")
    return f"run `opencode plugin {json.dumps(folder) if ' ' in folder else folder} -g`"
