"""``keeper doctor``: find what stops Keeper from working here, and say how to fix each thing.

Checks the Python in use; the plugin as Claude Code has it (enabled, set up, its marketplace
folder still there); the plugin as Codex has it (enabled, its hooks trusted, saves allowed by its
sandbox); a ``keeper`` on PATH (the same version, not only inside a virtualenv, a real
executable on Windows); a writable store; the configuration; and whether hooks ran here.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys

from keeper import __version__, process
from keeper.commands import common
from keeper.plugin import install
from keeper.store import counters, paths
from keeper.store.fsutil import ensure_dir
from keeper.text import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


class Check:
    """One finding: ``ok`` is True, False (a problem) or None (information only)."""

    def __init__(self, name: str, ok: bool | None, detail: str, fix: str = "") -> None:
        self.name, self.ok, self.detail, self.fix = name, ok, detail, fix

    def as_dict(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def _python() -> Check:
    version = platform.python_version()
    ok = sys.version_info >= (3, 9) and platform.python_implementation() == "CPython"
    fix = "" if ok else "install CPython 3.9 or newer, then start a new Claude Code session"
    return Check("python", ok, f"{platform.python_implementation()} {version} at {sys.executable}", fix)


def _command() -> Check:
    """The ``keeper`` on PATH: not needed with the plugin, but Claude's Bash tool runs it first."""
    found = install.keeper_on_path()
    if not found:
        return Check("command", None, "no `keeper` on PATH: the plugin runs its own (a shell of yours has none)")
    if os.name == "nt" and not found.lower().endswith(".exe"):
        return Check(
            "command",
            False,
            f"`keeper` on PATH is {found}, not an .exe, so it cannot be run directly",
            install.install_hint(),
        )
    try:
        done = process.run([found, "--version"], cwd=process.neutral_dir(), timeout=20, check=False)
        reported = done.stdout.decode("utf-8", "replace").strip()
    except process.ProcessFailed as exc:
        return Check("command", False, f"{found} does not run: {exc}", f"remove it, then {install.install_hint()}")
    if reported != f"keeper {__version__}":
        return Check(
            "command",
            False,
            f"{found} reports {reported or 'nothing'!r}, but this is keeper {__version__}; Claude's Bash tool "
            "runs the one on PATH first, so saves would go through another version",
            f"upgrade or remove {found} (pipx upgrade / pipx uninstall, or pip in its environment)",
        )
    if install.in_virtualenv(found) and not install.plugin_installs():
        return Check(  # the README's own set-up: a note with the next step, not a problem
            "command",
            None,
            f"{found} is inside a virtualenv: Claude Code started from a shell without it runs the plugin's own",
            install.install_hint(),
        )
    return Check("command", True, f"{found} (keeper {__version__})")


def _plugin_installs() -> list[Check]:
    """The plugin as Claude Code has it: enabled, set up, its marketplace folder still there."""
    found = install.plugin_installs()
    if not found:
        where = os.path.join(paths.claude_dir(), "settings.json")
        return [
            Check(
                "plugin",
                None,
                f"no keeper plugin is enabled in {where} (fine with --plugin-dir)",
                install.install_hint(),
            )
        ]
    checks = []
    for plugin in found:
        checks.append(Check("plugin", True, f"{plugin.name} {plugin.version} is enabled"))
        if plugin.source_missing:
            checks.append(
                Check(
                    "source",
                    False,
                    f"the marketplace folder {plugin.source_path} no longer exists, so the hooks cannot run",
                    f"run `claude plugin marketplace remove {plugin.name.split('@', 1)[1]}`, then add the folder where "
                    f"it is now (`claude plugin marketplace add PATH`) and `claude plugin install {plugin.name}`",
                )
            )
        extras = plugin.copied_extras()
        if extras:
            where = plugin.source_path or "the folder you added as the marketplace"
            checks.append(
                Check(
                    "copy",
                    False,
                    f"Claude Code copied {', '.join(extras)} from {where} into its plugin cache "
                    f"({plugin.install_path}): it copies a local marketplace's whole folder",
                    f"move them out of {where} (`git status --ignored` there lists them), then run "
                    f"`claude plugin uninstall {plugin.name}` and `claude plugin install {plugin.name}`",
                )
            )
        if plugin.env_ready:
            checks.append(Check("setup", True, f"hooks run Keeper in {plugin.data} (Python {plugin.env_python})"))
        elif plugin.failure:
            checks.append(
                Check("setup", False, plugin.failure, "follow the advice above, then start a new Claude Code session")
            )
        else:
            checks.append(
                Check("setup", None, "not set up yet: the next Claude Code session sets Keeper up by itself (~1 min)")
            )
    return checks


def _codex() -> list[Check]:
    """Keeper in Codex CLI: enabled, its hooks trusted (Codex skips others silently), saves not sandboxed out."""
    from keeper.plugin import codex

    config = codex.config()
    found = codex.plugin_installs(config)
    if not found:
        if shutil.which("codex"):
            return [Check("codex", None, "Codex CLI is here without Keeper", codex.install_hint())]
        return []
    checks = []
    for plugin in found:
        if plugin.untrusted:
            events = ", ".join(plugin.untrusted)
            detail = f"{plugin.name} is enabled in Codex, but it was not told to trust its hooks for {events}"
            checks.append(Check("codex", False, detail + ": Codex skips them without a word", codex.TRUST_STEP))
        else:
            detail = f"{plugin.name} {plugin.version} is enabled in Codex, its hooks trusted"
            checks.append(Check("codex", True, detail))
    store = paths.data_root()
    if codex.sandbox_blocks(store, config):
        detail = f"Codex's sandbox may keep the model's `keeper save` from writing {store}"
        checks.append(Check("sandbox", None, detail, codex.sandbox_step(store)))
    return checks


def _gemini() -> list[Check]:
    """Keeper in Gemini CLI: installed, its hooks complete and not switched off in Gemini's settings."""
    from keeper.plugin import gemini

    found = gemini.installs()
    if not found:
        if shutil.which("gemini"):
            return [Check("gemini", None, "Gemini CLI is here without Keeper", gemini.install_hint())]
        return []
    extension = found[0]
    how = f"linked to {extension.root}" if extension.linked else f"installed in {extension.folder}"
    off = extension.hooks_off(gemini.settings())
    if off:
        return [Check("gemini", False, f"Keeper {extension.version} is {how}, but {off}", "turn them back on")]
    if not extension.complete:
        detail = f"Keeper {extension.version} is {how}; its hooks so far only finish its set-up"
        return [Check("gemini", None, detail, gemini.COMPLETE_STEP)]
    return [Check("gemini", True, f"Keeper {extension.version} is {how}, its hooks complete (no trust step needed)")]


def _opencode() -> list[Check]:
    """Keeper's plugin in OpenCode: present where OpenCode's config says, and able to run Keeper."""
    from keeper.plugin import opencode

    checks = []
    places = opencode.installs()
    if not places and shutil.which("opencode"):
        return [Check("opencode", None, "OpenCode is here without Keeper", opencode.install_hint())]
    for found in places:
        where = found["plugin"]
        if not found["present"]:
            step = "run `opencode plugin <clone>/opencode -g` with the clone's new path"
            checks.append(Check("opencode", False, f"OpenCode loads Keeper's plugin from {where}, which is gone", step))
        elif not found["runs_keeper"]:
            detail = f"Keeper's plugin in OpenCode ({where}) finds no launcher beside it and no `keeper` on PATH"
            checks.append(Check("opencode", False, detail, "install Keeper with pipx (see its README)"))
        else:
            detail = f"Keeper's plugin is loaded by OpenCode from {where} (no trust step)"
            checks.append(Check("opencode", True, detail))
    return checks


def _store() -> Check:
    """Whether the store can be written; one this check makes is in this Keeper's format (on a fresh
    HOME, doctor reported "store format 0" for the folder it had just made)."""
    from keeper.store import migrate

    root = paths.data_root()
    probe = os.path.join(root, f".doctor-{os.getpid()}")
    try:
        new = not os.path.isdir(root)
        ensure_dir(root)
        with open(probe, "w", encoding="utf-8") as fh:
            fh.write("ok")
        os.remove(probe)
        if new:
            migrate.stamp(root)
    except OSError as exc:
        return Check(
            "store",
            False,
            f"cannot write to {root}: {exc.strerror or exc}",
            "set KEEPER_HOME to a folder you can write to",
        )
    return Check("store", True, f"{root} is writable")


def _store_format() -> Check:
    """The store's format against this code's: a newer Keeper's store is read, never changed."""
    from keeper.store import migrate

    root = paths.data_root()
    try:
        number = migrate.store_format(root).number
    except OSError as exc:  # the store check above names the cause
        return Check("format", None, f"the store's format cannot be read: {exc.strerror or exc}")
    newer = number if number > len(migrate.MIGRATIONS) else None
    if newer is not None:
        return Check(
            "format",
            False,
            f"{root} is in store format {newer}, written by a newer Keeper; this is keeper {__version__} "
            f"(format {len(migrate.MIGRATIONS)}), which reads it but changes nothing in its layout",
            "upgrade Keeper: `claude plugin marketplace update keeper`, then `claude plugin update keeper@keeper` "
            "(or `pip install -U` in the environment this keeper runs from)",
        )
    if number < len(migrate.MIGRATIONS):
        return Check("format", None, f"store format {number}: brought to {len(migrate.MIGRATIONS)} by the next command")
    return Check("format", True, f"store format {number}, this Keeper's own")


def _config(warnings: list[str]) -> list[Check]:
    if not warnings:
        return [Check("config", True, "no problems in the config files or KEEPER_* variables")]
    return [Check("config", False, warning, "edit the file or variable it names") for warning in warnings]


def _hooks(project: paths.Project) -> Check:
    ran = counters.hook_summary(project.state)
    if ran:
        return Check("hooks", True, f"{sum(v['calls'] for v in ran.values())} hook calls recorded for this project")
    step = "start a session in this folder (Claude Code, Codex, Gemini CLI or OpenCode) and send a prompt"
    return Check("hooks", None, "no hook has run for this project yet", step)


def _windows() -> list[Check]:
    """On Windows: the shell Claude's Bash tool runs, a Store Python, whether `keeper` resolves there."""
    if os.name != "nt":
        return []
    from keeper.plugin import windows

    env_python = next((str(p.env_python) for p in install.plugin_installs() if p.env_python), "")
    return [Check(*finding) for finding in windows.checks(env_python)]


def run_checks(project: paths.Project, config_warnings: list[str]) -> list[Check]:
    """Every check; ``config_warnings`` are the resolver's, from the config files it really read."""
    return [
        _python(),
        *_plugin_installs(),
        *_codex(),
        *_gemini(),
        *_opencode(),
        _command(),
        *_windows(),
        _store(),
        _store_format(),
        *_config(config_warnings),
        _hooks(project),
        _sync(),
    ]


def _sync() -> Check:
    from keeper.sync import report

    ok, detail, fix = report.check()
    return Check("sync", ok, detail, fix)


def lines(checks: list[Check]) -> list[str]:
    """``keeper doctor`` as text: one line per check, the fix under each problem, then a verdict."""
    out = []
    for check in checks:
        mark = {True: "ok  ", False: "FAIL", None: "note"}[check.ok]
        out.append(f"  {mark}  {check.name:8} {check.detail}")
        if check.fix and check.ok is not True:
            out.append(f"        {'':8} fix: {check.fix}")
    problems = sum(1 for c in checks if c.ok is False)
    out.append(f"{count(problems, 'problem')} found." if problems else "No problems found.")
    return out


def _live(args: argparse.Namespace, cwd: str, enabled: bool) -> list[Check]:
    """``--live``: ask each agent (or the one named) for a word only Keeper's memory holds, saying first
    what that costs; nothing is asked where Keeper is turned off, which the answer would only repeat."""
    from keeper.commands import live

    if not enabled:
        detail = "Keeper is turned off here (enabled: false), so its memory reaches no model; nothing was asked"
        return [Check("live", False, detail, "remove `enabled: false` from the file or variable that sets it")]
    names = [args.agent] if args.agent else live.installed()
    if not names:
        fix = "install Claude Code or Codex (or put it on PATH), with Keeper's plugin"
        return [Check("live", False, "neither `claude` nor `codex` is on PATH: no agent to ask", fix)]
    print(live.notice(names), file=sys.stderr if args.json else sys.stdout, flush=True)
    return [Check("live", *live.check(name, cwd, args.timeout)) for name in names]


def run(args: argparse.Namespace) -> int:
    """Exit 1 when a problem was found, so scripts can tell."""
    at = common.resolve_args(args, store=False)
    checks = run_checks(at.project, at.cfg.warnings)
    if getattr(args, "live", False):
        checks += _live(args, at.project.checkout, at.cfg.enabled)
    common.emit(args, [c.as_dict() for c in checks], lambda: lines(checks))
    return 1 if any(c.ok is False for c in checks) else 0
