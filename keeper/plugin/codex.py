"""How Codex CLI reaches Keeper on this machine: the plugin it enabled, the hooks it trusts, its sandbox.

``keeper doctor`` and ``keeper status`` report from what Codex itself wrote in
``$CODEX_HOME/config.toml`` (default ``~/.codex``): ``[plugins."keeper@MARKETPLACE"]``, one
``[hooks.state."KEY"]`` table per hook a person trusted (Codex skips every other hook without a
word), and the sandbox's writable roots (the model's ``keeper save`` writes Keeper's store).
Only the few line shapes Codex writes are read, so no TOML library is needed on Python 3.9.
"""

from __future__ import annotations

import json
import os

from keeper.plugin import install
from keeper.store.fsutil import read_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Codex's hook events (0.169.0), by the names hooks.json uses; it ignores any other.
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SessionEnd",
    "SubagentStart",
    "SubagentStop",
)
TRUST_STEP = "start `codex`, type /hooks and trust Keeper's hooks (again after each update of the plugin)"


def home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def _value(raw: str) -> Any:
    raw = raw.strip()
    if len(raw) > 1 and raw[0] == raw[-1] == "'" and "'" not in raw[1:-1]:
        return raw[1:-1]  # a literal string: no escapes
    try:
        return json.loads(raw)  # TOML's basic strings, booleans and string arrays read as JSON
    except ValueError:
        pass
    if raw.endswith("]") and raw[:-1].rstrip().endswith(","):  # an array's trailing comma
        return _value(raw[:-1].rstrip()[:-1] + "]")
    return None


def _code(line: str) -> tuple[str, int]:
    """A line without its comment (from a ``#`` outside any string), and how many more ``[`` than
    ``]`` it holds outside strings (an array that goes on over the next lines)."""
    quote, escaped, depth = "", False, 0
    for at, char in enumerate(line):
        if escaped:
            escaped = False
        elif quote:
            escaped = char == "\\" and quote == '"'
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:at], depth
        else:
            depth += (char == "[") - (char == "]")
    return line, depth


def tables(text: str) -> dict[str, dict[str, Any]]:
    """``config.toml``'s tables by header (``plugins."keeper@keeper"``), each with its ``key = value`` lines."""
    found: dict[str, dict[str, Any]] = {"": {}}
    current = found[""]
    held, depth = "", 0
    for raw in text.splitlines():
        code, opened = _code(raw)
        held, depth = f"{held} {code}" if held else code, depth + opened
        if depth > 0 and "=" in held:
            continue  # an array over several lines
        line, held, depth = held.strip(), "", 0
        if line.startswith("[[") and line.endswith("]]"):
            current = {}  # a table array's keys belong to none of the tables read here
        elif line.startswith("[") and line.endswith("]"):
            current = found.setdefault(line[1:-1].strip(), {})
        elif "=" in line:
            key, _, value = line.partition("=")
            current[key.strip()] = _value(value)
    return found


DEFAULT_HOOKS = "hooks/hooks.json"  # where Codex looks when .codex-plugin/plugin.json names no hooks file


def _snake(event: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")


class CodexInstall:
    """One ``keeper@<marketplace>`` plugin enabled in Codex, and which of its hooks Codex trusts."""

    def __init__(self, name: str, config: dict[str, dict[str, Any]]) -> None:
        self.name = name
        marketplace = name.split("@", 1)[1]
        cache = os.path.join(home(), "plugins", "cache", marketplace, name.split("@", 1)[0])
        versions = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
        self.version = versions[-1] if versions else ""
        self.install_path = os.path.join(cache, self.version) if versions else None
        self.untrusted = [event for event, key in self._hook_keys() if f"hooks.state.{json.dumps(key)}" not in config]

    def _hook_keys(self) -> list[tuple[str, str]]:
        """Each hook of the installed copy as ``(event, the key Codex records its trust under)``."""
        if not self.install_path:
            return []
        manifest = read_json(os.path.join(self.install_path, ".codex-plugin", "plugin.json")).get("hooks")
        hooks_file = os.path.normpath(manifest if isinstance(manifest, str) else DEFAULT_HOOKS).replace(os.sep, "/")
        declared = read_json(os.path.join(self.install_path, hooks_file)).get("hooks")
        keys = []
        for event in EVENTS:
            groups = declared.get(event) if isinstance(declared, dict) else None
            for g, group in enumerate(groups if isinstance(groups, list) else []):
                handlers = group.get("hooks") if isinstance(group, dict) else None
                for h, _ in enumerate(handlers if isinstance(handlers, list) else []):
                    keys.append((event, f"{self.name}:{hooks_file}:{_snake(event)}:{g}:{h}"))
        return keys

    def as_dict(self) -> dict[str, object]:
        return {"plugin": self.name, "version": self.version, "untrusted_hooks": self.untrusted}


def config() -> dict[str, dict[str, Any]]:
    try:
        with open(os.path.join(home(), "config.toml"), encoding="utf-8") as fh:
            return tables(fh.read())
    except (OSError, UnicodeDecodeError):
        return {}


def plugin_installs(found: dict[str, dict[str, Any]] | None = None) -> list[CodexInstall]:
    """The keeper plugins enabled in Codex's config.toml."""
    found = config() if found is None else found
    names = [h[len("plugins.") :] for h, t in found.items() if h.startswith('plugins."keeper@') and t.get("enabled")]
    return [CodexInstall(str(_value(name)), found) for name in sorted(names) if isinstance(_value(name), str)]


def sandbox_blocks(store: str, found: dict[str, dict[str, Any]] | None = None) -> bool:
    """Whether Codex's sandbox keeps the model's ``keeper save`` from writing ``store``.

    ``codex exec`` runs read-only unless told otherwise and ``workspace-write`` writes only the
    project and the writable roots; ``danger-full-access`` writes anywhere. Only a top-level
    ``sandbox_mode`` counts: below a ``[table]`` the line is that table's key, which Codex ignores.
    """
    found = config() if found is None else found
    mode = found.get("", {}).get("sandbox_mode")
    if mode != "workspace-write":
        return mode != "danger-full-access"
    roots = found.get("sandbox_workspace_write", {}).get("writable_roots")
    store = os.path.realpath(store)
    for root in roots if isinstance(roots, list) else []:
        if isinstance(root, str) and os.path.isabs(root):
            root = os.path.realpath(root)
            if store == root or store.startswith(root.rstrip(os.sep) + os.sep):
                return False
    return True


def sandbox_step(store: str) -> str:
    roots = json.dumps([store])
    return (
        f'add to {os.path.join(home(), "config.toml")}: sandbox_mode = "workspace-write" at the top, before any '
        f"[table], and, under [sandbox_workspace_write], writable_roots = {roots}"
    )


def install_hint() -> str:
    """The two commands that install Keeper in Codex, from the same source as Claude Code's."""
    found = install.source()
    where = "run" if found else "in a clone of Keeper's repository run"
    return f"{where} `codex plugin marketplace add {found or '.'}`, then `codex plugin add keeper@keeper`"
