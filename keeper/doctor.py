"""``keeper doctor``: find what stops Keeper from working here, and say how to fix each thing.

Checks the Python in use, the installed package, the ``keeper`` command Claude Code's hooks will
run (found on PATH, the same version, a real executable on Windows), a writable store, the
configuration, and whether the plugin is enabled and its hooks have run in this project.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys

from keeper import __version__, counters, paths
from keeper.fsutil import ensure_dir


class Check:
    """One finding: ``ok`` is True, False (a problem) or None (information only)."""

    def __init__(self, name: str, ok: bool | None, detail: str, fix: str = "") -> None:
        self.name, self.ok, self.detail, self.fix = name, ok, detail, fix

    def as_dict(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def install_hint(system: str, have: set[str]) -> str:
    """How to put ``keeper`` on PATH, given the OS and which installers are at hand."""
    if "uv" in have:
        command = "uv tool install claude-keeper"
    elif "pipx" in have:
        command = "pipx install claude-keeper"
    elif system == "Windows" and "py" in have:
        command = "py -m pip install --user claude-keeper (then add the Scripts folder it names to PATH)"
    else:
        command = f"{'python' if system == 'Windows' else 'python3'} -m pip install --user claude-keeper"
    return f"run `{command}`, then restart Claude Code so its hooks see the new PATH"


def _python() -> Check:
    version = platform.python_version()
    ok = sys.version_info >= (3, 9) and platform.python_implementation() == "CPython"
    fix = "" if ok else "install CPython 3.9 or newer and reinstall Keeper with it"
    return Check("python", ok, f"{platform.python_implementation()} {version} at {sys.executable}", fix)


def _command() -> Check:
    found = shutil.which("keeper")
    have = {tool for tool in ("uv", "pipx", "py") if shutil.which(tool)}
    if not found:
        return Check(
            "command",
            False,
            "`keeper` is not on PATH, so Claude Code cannot run the hooks",
            install_hint(platform.system(), have),
        )
    if os.name == "nt" and not found.lower().endswith(".exe"):
        return Check(
            "command",
            False,
            f"`keeper` on PATH is {found}, not an .exe: Claude Code's exec-form hooks need a real executable",
            install_hint("Windows", have),
        )
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=20, check=False)
        reported = done.stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("command", False, f"{found} does not run: {exc}", install_hint(platform.system(), have))
    if reported != f"keeper {__version__}":
        return Check(
            "command",
            False,
            f"{found} reports {reported or 'nothing'!r}, but this is keeper {__version__}",
            "reinstall so that one version is on PATH: " + install_hint(platform.system(), have),
        )
    return Check("command", True, f"{found} (keeper {__version__})")


def _store() -> Check:
    root = paths.data_root()
    probe = os.path.join(root, f".doctor-{os.getpid()}")
    try:
        ensure_dir(root)
        with open(probe, "w", encoding="utf-8") as fh:
            fh.write("ok")
        os.remove(probe)
    except OSError as exc:
        return Check(
            "store",
            False,
            f"cannot write to {root}: {exc.strerror or exc}",
            "set KEEPER_HOME to a folder you can write to",
        )
    return Check("store", True, f"{root} is writable")


def _config(warnings: list[str]) -> list[Check]:
    if not warnings:
        return [Check("config", True, "no problems in the config files or KEEPER_* variables")]
    return [Check("config", False, warning, "edit the file or variable it names") for warning in warnings]


def _plugin(project: paths.Project) -> list[Check]:
    settings_dir = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    settings = os.path.join(settings_dir, "settings.json")
    try:
        with open(settings, encoding="utf-8") as fh:
            enabled = json.load(fh).get("enabledPlugins", {})
    except (OSError, ValueError, AttributeError):
        enabled = {}
    names = (
        [name for name, on in enabled.items() if name.startswith("keeper@") and on] if isinstance(enabled, dict) else []
    )
    checks = [
        Check("plugin", True, f"enabled in {settings} as {', '.join(names)}")
        if names
        else Check(
            "plugin",
            None,
            f"no keeper plugin is enabled in {settings} (fine when loaded with --plugin-dir)",
            "claude plugin marketplace add OWNER/REPO, then claude plugin install keeper@keeper",
        )
    ]
    ran = counters.hook_summary(project.state)
    if ran:
        calls = sum(v["calls"] for v in ran.values())
        checks.append(Check("hooks", True, f"{calls} hook calls recorded for this project"))
    else:
        checks.append(
            Check(
                "hooks",
                None,
                "no hook has run for this project yet",
                "start Claude Code in this folder and send a prompt",
            )
        )
    return checks


def run_checks(project: paths.Project, config_warnings: list[str]) -> list[Check]:
    """Every check; ``config_warnings`` are the resolver's, from the config files it really read."""
    return [_python(), _command(), _store(), *_config(config_warnings), *_plugin(project)]


def lines(checks: list[Check]) -> list[str]:
    """``keeper doctor`` as text: one line per check, the fix under each problem, then a verdict."""
    out = []
    for check in checks:
        mark = {True: "ok  ", False: "FAIL", None: "note"}[check.ok]
        out.append(f"  {mark}  {check.name:8} {check.detail}")
        if check.fix and check.ok is not True:
            out.append(f"        {'':8} fix: {check.fix}")
    problems = sum(1 for c in checks if c.ok is False)
    out.append(f"{problems} problem(s) found." if problems else "No problems found.")
    return out
