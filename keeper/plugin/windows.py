"""What Windows does with Keeper: the shell Claude Code gives its Bash tool, a Store Python, `keeper` there.

``keeper doctor`` reports from here on Windows. Hooks need no shell (hooks.json is in exec form and
Claude Code resolves ``bin/keeper`` to ``bin/keeper.exe``), but Claude's saves do: it runs
``keeper save`` in its Bash tool, which is Git Bash when Claude Code finds one and PowerShell
otherwise. The rules are Claude Code 2.1.330's own (read from its binary, see
``shared/research/claude-code-spec.md`` §5):

- Git Bash is ``CLAUDE_CODE_GIT_BASH_PATH`` when it names an existing ``bash.exe``/``sh.exe``, else
  ``C:\\Program Files\\Git\\bin\\bash.exe``, else the ``(x86)`` one, else ``bin\\bash.exe`` two
  folders above the ``git`` on PATH.
- The Bash tool exists only with Git Bash; the PowerShell tool is on when
  ``CLAUDE_CODE_USE_POWERSHELL_TOOL`` says so, or, unset, when there is no Git Bash.
- Both shells get the plugin's ``bin`` folder at the end of PATH: Git Bash finds ``bin/keeper`` (a
  sh script), PowerShell finds ``bin\\keeper.exe`` through PATHEXT.

Every function takes what it looks at (environment, PATH folders, a file test) as arguments, so the
rules are tested on any OS; ``checks()`` feeds them this machine.
"""

from __future__ import annotations

import ntpath
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    Exists = Callable[[str], bool]
    Finding = tuple[str, "bool | None", str, str]  # check name, ok, detail, fix: doctor's Check

GIT_BASH_DEFAULTS = ("C:\\Program Files\\Git\\bin\\bash.exe", "C:\\Program Files (x86)\\Git\\bin\\bash.exe")
DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"


def _flag(value: str | None) -> bool | None:
    """An environment flag as Claude Code reads it: unset is None; 1/true/yes/on are true."""
    if value is None or value.strip() == "":
        return None
    return value.strip().lower() in ("1", "true", "yes", "on")


def path_dirs(env: Mapping[str, str]) -> list[str]:
    """The PATH folders in order (any case of ``Path``; quotes dropped, empty entries skipped)."""
    value = next((v for k, v in env.items() if k.upper() == "PATH"), "")
    return [entry.strip('"') for entry in value.split(";") if entry.strip('"')]


def git_bash(env: Mapping[str, str], exists: Exists) -> str | None:
    """The Git Bash Claude Code uses, or None (then it has no Bash tool)."""
    chosen = env.get("CLAUDE_CODE_GIT_BASH_PATH")
    if chosen and ntpath.basename(chosen).lower() in ("bash.exe", "sh.exe", "bash", "sh") and exists(chosen):
        return chosen
    for candidate in GIT_BASH_DEFAULTS:
        if exists(candidate):
            return candidate
    git = which("git", path_dirs(env), env.get("PATHEXT", DEFAULT_PATHEXT), exists)
    if git:
        bash = ntpath.join(ntpath.dirname(ntpath.dirname(git)), "bin", "bash.exe")
        if exists(bash):
            return bash
    return None


def shells(env: Mapping[str, str], exists: Exists) -> tuple[str | None, bool]:
    """(Git Bash's path or None, whether the PowerShell tool is on), as Claude Code decides them."""
    bash = git_bash(env, exists)
    powershell = _flag(env.get("CLAUDE_CODE_USE_POWERSHELL_TOOL"))
    return bash, (bash is None) if powershell is None else powershell


def which(name: str, dirs: Sequence[str], pathext: str, exists: Exists) -> str | None:
    """The first ``name`` plus one of PATHEXT's extensions in ``dirs``, as Windows resolves a command."""
    extensions = [e for e in pathext.split(";") if e]
    for folder in dirs:
        for ext in extensions:
            candidate = ntpath.join(folder, name + ext.lower())
            if exists(candidate):
                return candidate
    return None


def keeper_for_shell(
    shell: str, dirs: Sequence[str], plugin_bin: str | None, pathext: str, exists: Exists
) -> str | None:
    """The ``keeper`` a command in the Bash tool runs: ``shell`` is ``bash`` (Git Bash) or ``powershell``.

    Claude Code appends the plugin's ``bin`` folder to that shell's PATH. Git Bash runs an
    extensionless script (bin/keeper) or an .exe; PowerShell goes by PATHEXT, plus its own .ps1.
    """
    search = [*dirs, *([plugin_bin] if plugin_bin else [])]
    if shell == "bash":
        for folder in search:
            for name in ("keeper", "keeper.exe"):
                if exists(ntpath.join(folder, name)):
                    return ntpath.join(folder, name)
        return None
    return which("keeper", search, pathext + ";.PS1", exists)


def is_store_python(executable: str) -> bool:
    """Whether an interpreter is the Microsoft Store's: its App Execution Alias stub in
    ``%LOCALAPPDATA%\\Microsoft\\WindowsApps`` or the MSIX package under ``Program Files\\WindowsApps``."""
    folded = executable.replace("/", "\\").lower()
    return "\\windowsapps\\" in folded or "pythonsoftwarefoundation.python" in folded


def findings(
    env: Mapping[str, str], exists: Exists, python: str, plugin_bin: str | None, env_python: str = ""
) -> list[Finding]:
    """doctor's findings on Windows, from the environment, a file test, the running Python's path,
    the plugin's ``bin`` folder (None when no plugin install is known) and its environment's Python."""
    found: list[Finding] = []
    bash, powershell = shells(env, exists)
    if bash:
        detail = f"Claude's Bash tool runs Git Bash ({bash})" + ("; PowerShell's tool is on too" if powershell else "")
        found.append(("shell", True, detail, ""))
    elif powershell:
        found.append(("shell", True, "no Git Bash: Claude's shell tool is PowerShell (hooks need no shell)", ""))
    else:
        found.append(
            (
                "shell",
                False,
                "no Git Bash, and CLAUDE_CODE_USE_POWERSHELL_TOOL turns PowerShell off: Claude has no shell to save in",
                "install Git for Windows, set CLAUDE_CODE_GIT_BASH_PATH to its bash.exe, or unset "
                "CLAUDE_CODE_USE_POWERSHELL_TOOL",
            )
        )
    for label, interpreter in (("this Python", python), ("the plugin's environment", env_python)):
        if interpreter and is_store_python(interpreter):
            found.append(
                (
                    "python",
                    False,
                    f"{label} is the Microsoft Store's ({interpreter}): it redirects writes under %LOCALAPPDATA% "
                    "into its own package folder, so other programs do not see Keeper's memory there",
                    "install Python from python.org (or winget install Python.Python.3.12), then start a new session",
                )
            )
    pathext = env.get("PATHEXT", DEFAULT_PATHEXT)
    for shell, on in (("bash", bash is not None), ("powershell", powershell)):
        if not on:
            continue
        keeper = keeper_for_shell(shell, path_dirs(env), plugin_bin, pathext, exists)
        name = "Git Bash" if shell == "bash" else "PowerShell"
        if keeper:
            found.append(("bash-tool", True, f"`keeper` in {name} is {keeper}", ""))
        else:
            found.append(
                (
                    "bash-tool",
                    False,
                    f"`keeper` does not resolve in {name}, so Claude cannot save",
                    "install the plugin (its bin folder is added to the shell's PATH), or `pipx install` Keeper",
                )
            )
    return found


def installed_plugin_bin() -> str | None:
    """The ``bin`` folder of an installed keeper plugin (``installPath`` in installed_plugins.json),
    else of the checkout this Keeper runs from, else None."""
    import json

    from keeper.plugin.install import checkout
    from keeper.store.paths import claude_dir

    try:
        with open(os.path.join(claude_dir(), "plugins", "installed_plugins.json"), encoding="utf-8") as fh:
            plugins = json.load(fh).get("plugins", {})
        for name, entries in sorted(plugins.items()):
            if name.startswith("keeper@") and entries and isinstance(entries[0].get("installPath"), str):
                return os.path.join(entries[0]["installPath"], "bin")
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    here = checkout()
    return os.path.join(here, "bin") if here else None


def checks(env_python: str = "") -> list[Finding]:
    """``findings`` for this machine; ``env_python`` is the Python the plugin's environment was made with."""
    return findings(os.environ, os.path.exists, sys.executable, installed_plugin_bin(), env_python)
