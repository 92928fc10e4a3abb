"""Keeper's one-time set-up inside a plugin install: a private Python environment per build of the code.

``bin/keeper`` runs this file as a script (``python -B -I keeper/plugin/bootstrap.py --root R --data D``)
when ``D/env/<version>-<digest>`` is missing. The digest is of the package's files, committed in
``bin/keeper.digest`` so the launchers read it without starting a process: any change of code
gets an environment of its own, and an environment never runs code it was not built from. Any
Python 3.9+, standard library only, nothing imported from the package, nothing written into the
plugin folder (for a local marketplace that is the user's own checkout), except Gemini CLI's own
copy of the extension, whose hooks file is completed (``complete_gemini_hooks``). It builds the environment
in a temporary folder (a new one, or after an update a copy of the earlier one, which needs no
network), installs the dependencies listed in ``pyproject.toml``, copies the package in, checks that
it imports, and renames the folder into place, so a half-built environment is never used; then the
earlier one is removed. A lock folder keeps two sessions starting together from building twice; it
names its owner, so a lock left by a killed run is broken at once. All output goes to
``D/setup.log``; a failure leaves ``D/setup-failed.json``, the one line the next session start
shows, and the next session (or ``bin/keeper setup``) tries again. A hook that writes a session's file
(Stop, PreCompact, SessionEnd) and arrives meanwhile is kept in ``D/pending/`` (``keep``) and run once the
environment is ready (``replay``): a short first session still gets its session file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

LOCK_FUTURE_SLACK = 120.0  # a lock dated further ahead than this was made by a wrong clock: stale
LOCK_STALE_SECONDS = 15 * 60
STEP_TIMEOUT = 600
# The plugin environment's layout inside CLAUDE_PLUGIN_DATA, named here once. install.py imports
# these; the launchers (bin/keeper, launcher/keeper.c) cannot, and a test holds their spelling to them.
ENV_DIR = "env"  # <data>/env/<version>-<digest>/: one environment per build of the code
DIGEST_FILE = ("bin", "keeper.digest")  # the package digest, one line, read by the launchers
NO_KEEPER = 75  # the launchers' exit code for an environment that cannot import Keeper: set up again
READY = "keeper-env.json"  # written last inside a finished environment
SETUP_LOCK = "setup.lock"  # <data>/setup.lock/: a folder, made whole with its owner.json inside
SETUP_FAILED = "setup-failed.json"  # <data>/setup-failed.json: the next session start's one line
SETUP_LOG = "setup.log"
POSIX_PYTHON = ("bin", "python")
WINDOWS_PYTHON = ("Scripts", "python.exe")
WINDOWS_SITE = ("Lib", "site-packages")  # POSIX: lib/python3.X/site-packages


def plugin_version(root: str) -> str:
    """``__version__`` from the plugin's ``keeper/__init__.py``, read as text (nothing imported)."""
    with open(os.path.join(root, "keeper", "__init__.py"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("\"'")
    raise ValueError(f"no __version__ in {root}/keeper/__init__.py")


def package_files(root: str) -> list[str]:
    """The package's files as the set-up copies them into an environment, relative, ``/``-separated."""
    base = os.path.join(root, "keeper")
    found = []
    for folder, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(folder, base).replace(os.sep, "/")
        found += [("" if rel == "." else rel + "/") + n for n in names if n.endswith(PACKAGE_DATA)]
    return sorted(found)


def package_digest(root: str) -> str:
    """A digest of the package's files and dependencies: what an environment is built from. Line
    endings are read as ``\\n`` so a Windows checkout (``core.autocrlf``) has the same digest."""
    import hashlib

    digest = hashlib.sha256("\n".join(dependencies(root)).encode("utf-8"))
    for name in package_files(root):
        with open(os.path.join(root, "keeper", *name.split("/")), "rb") as fh:
            digest.update(b"\0" + name.encode("utf-8") + b"\0" + fh.read().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]


def recorded_digest(root: str) -> str:
    """The digest committed beside the code (what the launchers key the environment by)."""
    with open(os.path.join(root, *DIGEST_FILE), encoding="utf-8") as fh:
        return fh.readline().strip()


def env_key(root: str) -> str:
    """The environment folder's name for the plugin in ``root``: ``<version>-<digest>``."""
    return f"{plugin_version(root)}-{recorded_digest(root)}"


def dependencies(root: str) -> list[str]:
    """The ``[project] dependencies`` of the plugin's ``pyproject.toml`` (no TOML parser before 3.11)."""
    found: list[str] = []
    inside = False
    with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text.startswith("dependencies") and text.endswith("["):
                inside = True
            elif inside and text.startswith("]"):
                return found
            elif inside and text.startswith('"'):
                found.append(text.rstrip(",").strip('"'))
    raise ValueError(f"no dependencies list in {root}/pyproject.toml")


def env_python(env: str) -> str:
    """The interpreter inside an environment folder, on either layout."""
    windows = os.path.join(env, *WINDOWS_PYTHON)
    return windows if os.path.exists(windows) else os.path.join(env, *POSIX_PYTHON)


def ready_facts(env: str) -> dict[str, object]:
    """What a finished environment says of itself (its ``READY`` file), or ``{}``."""
    try:
        with open(os.path.join(env, READY), encoding="utf-8") as fh:
            facts = json.load(fh)
    except (OSError, ValueError):
        return {}
    return facts if isinstance(facts, dict) else {}


def is_ready(env: str, key: str) -> bool:
    """Whether ``env`` is a finished environment built for ``key`` (``<version>-<digest>``)."""
    return ready_facts(env).get("key") == key and os.path.exists(env_python(env))


class Log:
    """Appends to ``setup.log`` (restarted past 1 MiB): set-up output must never reach a hook's stdout."""

    def __init__(self, data: str, echo: bool) -> None:
        self.path, self.echo = os.path.join(data, SETUP_LOG), echo
        try:
            if os.path.getsize(self.path) > 1 << 20:
                os.replace(self.path, self.path + ".1")
        except OSError:
            pass

    def write(self, text: str) -> None:
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {os.getpid()} {text.rstrip()}\n"
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError:
            pass
        if self.echo:
            sys.stderr.write(text.rstrip() + "\n")


def _boot_id() -> str:
    """This boot of the machine (Linux), so a pid from before a restart is never taken for alive."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _process_start(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (never signals or stops it)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # access denied: it exists
        try:
            code = ctypes.c_ulong()
            return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists, owned by someone else
    return True


def _owner() -> dict[str, object]:
    import socket

    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "boot": _boot_id(),
        "start": _process_start(os.getpid()),
        "time": time.time(),
    }


def owner_gone(owner: object) -> bool | None:
    """True when the set-up that wrote ``owner`` is known dead, False when it runs, None when this
    machine cannot tell (another host sharing the folder, or no readable owner)."""
    import socket

    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return None
    if owner.get("host") != socket.gethostname():
        return None
    boot = _boot_id()
    if boot and owner.get("boot") and owner.get("boot") != boot:
        return True  # the machine restarted since: nothing of that run survives
    pid: int = owner["pid"]
    if not pid_alive(pid):
        return True
    start = owner.get("start")
    return bool(start and _process_start(pid) and _process_start(pid) != start)  # a reused pid


class SetupLock:
    """A lock folder holding ``owner.json`` (pid, host, boot and start of the process that holds it).

    It is made whole beside its place and renamed in (a rename onto a folder that holds a file fails
    everywhere), so a lock never exists without its owner. A lock whose owner is dead (a set-up
    killed half-way, a restart) is broken at once; one whose owner this machine cannot check is
    broken by age: older than 15 minutes, or dated in the future (a clock that was wrong).
    """

    OWNER = "owner.json"

    def __init__(self, data: str, wait: float) -> None:
        self.path, self.wait = os.path.join(data, SETUP_LOCK), wait
        self.refused: OSError | None = None  # the folder cannot be written here (a sandboxed shell)

    def _read_owner(self, path: str) -> object:
        try:
            with open(os.path.join(path, self.OWNER), encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def stale(self, path: str) -> bool:
        gone = owner_gone(self._read_owner(path))
        return gone if gone is not None else self.aged(path)

    @staticmethod
    def aged(path: str) -> bool:
        """Older than any set-up runs, or dated in the future: told without seeing its process, which a
        sandbox (its own process ids) may hide from a live one."""
        try:
            age = time.time() - os.stat(path).st_mtime
        except OSError:
            return False
        return age > LOCK_STALE_SECONDS or age < -60

    def _take(self) -> bool:
        mine = f"{self.path}.{os.getpid()}.new"
        shutil.rmtree(mine, ignore_errors=True)
        try:
            os.mkdir(mine)
            with open(os.path.join(mine, self.OWNER), "w", encoding="utf-8") as fh:
                json.dump(_owner(), fh)
        except OSError as exc:
            self.refused = exc
            shutil.rmtree(mine, ignore_errors=True)
            return False
        try:
            if os.path.lexists(self.path):
                raise FileExistsError(self.path)
            os.rename(mine, self.path)  # fails when another run's lock (never empty) got there first
            return True
        except OSError:
            shutil.rmtree(mine, ignore_errors=True)
            return False

    def _break(self) -> None:
        """Move a stale lock aside, then look again at what was moved: a run that took the lock in
        between is alive and gets it back."""
        aside = f"{self.path}.{os.getpid()}.stale"
        try:
            os.rename(self.path, aside)
        except OSError:
            return
        if self.stale(aside):
            shutil.rmtree(aside, ignore_errors=True)
            return
        try:
            os.rename(aside, self.path)
        except OSError:
            shutil.rmtree(aside, ignore_errors=True)

    def acquire(self) -> bool:
        deadline = time.monotonic() + self.wait
        while True:
            if self._take():
                return True
            if self.refused is not None and (not os.path.lexists(self.path) or self.aged(self.path)):
                return False  # nobody else sets Keeper up (or a dead run's lock stays), and this run cannot
            if self.refused is None and self.stale(self.path):
                self._break()
                continue
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.5)

    def release(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


# Variables that would change which code the set-up's interpreters import or run, whoever set them.
_SCRUBBED = ("PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX", "__PYVENV_LAUNCHER__")


def absolute_path(path: str | None = None) -> str:
    """PATH without its empty and relative entries, which name the working directory (a repository)."""
    entries = (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)
    return os.pathsep.join(e for e in entries if e and os.path.isabs(e))


def which(name: str) -> str | None:
    """``shutil.which`` over the absolute entries of PATH only, so a tool in the project folder is
    never found through a ``PATH=...:`` or ``.`` entry."""
    path = absolute_path()
    return shutil.which(name, path=path) if path else None


def child_env() -> dict[str, str]:
    """The environment of every program the set-up starts: PATH of absolute entries, no variable
    that steers Python's imports, and uv told to read no configuration files (a ``uv.toml`` or
    ``pyproject.toml`` up from any folder). The user's own pip and uv settings (a package mirror)
    are kept: a repository cannot supply them, and every child starts in the data folder."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_SCRUBBED)}
    env["PATH"] = absolute_path() or absolute_path(os.defpath)  # never empty: that would mean the cwd
    env["UV_NO_CONFIG"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(log: Log, args: list[str]) -> None:
    log.write("$ " + " ".join(args))
    done = subprocess.run(
        args,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=False,
        cwd=os.path.dirname(log.path),  # the data folder: never the project a session started in
        env=child_env(),
    )
    for line in (done.stdout + done.stderr).splitlines()[-40:]:
        log.write("  " + line)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"{os.path.basename(args[0])} failed: {tail[-1] if tail else f'exit {done.returncode}'}")


def _site_packages(env: str) -> str:
    """Where the environment's interpreter imports from (asked of it: the layout differs by OS)."""
    done = subprocess.run(
        [env_python(env), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=True,
        cwd=os.path.dirname(env),
        env=child_env(),
    )
    return done.stdout.strip()


PACKAGE_DATA = (".py", ".css", ".js")  # what the keeper package is made of; pyproject's package-data agrees


def _not_package_files(folder: str, names: list[str]) -> list[str]:
    """``copytree``'s filter: keep sub-packages and the package's own files, nothing a run left behind."""
    return [
        n
        for n in names
        if n == "__pycache__" or (not os.path.isdir(os.path.join(folder, n)) and not n.endswith(PACKAGE_DATA))
    ]


def _fresh_environment(tmp: str, deps: list[str], log: Log) -> None:
    """A new virtual environment in ``tmp`` with the dependencies installed (uv when there is one)."""
    uv = which("uv")
    if uv:
        _run(log, [uv, "venv", "--no-config", "--quiet", "--python", sys.executable, tmp])
        install = [uv, "pip", "install", "--no-config", "--quiet", "--python", env_python(tmp)]
    else:
        try:
            _run(log, [sys.executable, "-I", "-m", "venv", tmp])
        except RuntimeError as exc:
            raise RuntimeError(
                f"{exc}. This Python cannot make virtual environments: on Debian or Ubuntu install "
                "python3-venv (sudo apt install python3-venv), or install uv, then start a new session"
            ) from None
        pip = [env_python(tmp), "-I", "-m", "pip", "--disable-pip-version-check", "--no-input"]
        install = [*pip, "install", "--quiet"]
    try:
        _run(log, [*install, *deps])
    except RuntimeError as exc:  # a message alone ("No matching distribution") does not say what to fix
        raise RuntimeError(
            f"{exc}. Installing its dependencies ({', '.join(deps)}) failed: check that pip reaches PyPI or "
            "your package index (network, proxy, PIP_INDEX_URL)"
        ) from None


def earlier_environment(data: str, target: str, deps: list[str]) -> str | None:
    """A finished environment of an earlier build with the same dependencies, or None. An update
    starts from a copy of it (a second, no network) instead of a new one (a minute of pip)."""
    folder = os.path.join(data, ENV_DIR)
    try:
        names = sorted(os.listdir(folder), reverse=True)
    except OSError:
        return None
    for name in names:
        path = os.path.join(folder, name)
        same = not name.startswith(".") and ready_facts(path).get("dependencies") == deps
        if path != target and same and os.path.exists(env_python(path)):
            return path
    return None


def build(root: str, target: str, deps: list[str], log: Log, start_from: str | None = None) -> None:
    """Build the environment for ``target`` beside it, from a new one or a copy of ``start_from``
    with its code replaced, and rename it into place when it imports Keeper and its dependencies."""
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".build-{os.getpid()}-{int(time.time())}")
    try:
        if start_from:
            log.write(f"starting from a copy of {start_from}")
            shutil.copytree(start_from, tmp, symlinks=True)
            os.remove(os.path.join(tmp, READY))
        else:
            _fresh_environment(tmp, deps, log)
        site = _site_packages(tmp)
        shutil.rmtree(os.path.join(site, "keeper"), ignore_errors=True)  # an earlier build's code
        shutil.copytree(os.path.join(root, "keeper"), os.path.join(site, "keeper"), ignore=_not_package_files)
        try:  # setuptools' distutils shim: imported at every start of the interpreter, and never needed here
            os.remove(os.path.join(site, "distutils-precedence.pth"))
        except OSError:
            pass
        _run(log, [env_python(tmp), "-I", "-m", "compileall", "-q", os.path.join(site, "keeper")])  # first hook fast
        _run(log, [env_python(tmp), "-I", "-c", "import keeper.cli, yaml, filelock, rapidfuzz, platformdirs"])
        with open(os.path.join(tmp, READY), "w", encoding="utf-8") as fh:
            python = ready_facts(start_from).get("python") if start_from else sys.executable
            facts = {"version": plugin_version(root), "key": os.path.basename(target), "dependencies": deps}
            json.dump({**facts, "python": python or sys.executable}, fh)
        os.replace(tmp, target)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def _tidy(data: str, keep: str, log: Log) -> None:
    """Remove environments of other builds and builds that killed runs left behind, once ``keep`` works."""
    folder = os.path.join(data, ENV_DIR)
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if path != keep and os.path.isdir(path):
            log.write(f"removing {path}")
            shutil.rmtree(path, ignore_errors=True)


def _failed(data: str, reason: str) -> None:
    message = (
        f"Keeper could not set itself up: {reason}. It tries again at the next session start; "
        f"details: {os.path.join(data, SETUP_LOG)}"
    )
    try:
        with open(os.path.join(data, SETUP_FAILED), "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"systemMessage": message}) + "\n")
    except OSError:
        pass


GEMINI_INSTALL = ".gemini-extension-install.json"  # Gemini CLI writes it into its own copy of an extension
GEMINI_HOOKS = ("hooks", "gemini.json")  # Keeper's hooks as Gemini runs them
SHARED_HOOKS = ("hooks", "hooks.json")  # the one hooks file Gemini reads: Claude Code's, which names no Gemini event


def complete_gemini_hooks(root: str, log: Log | None = None) -> bool:
    """Give Gemini CLI's own copy of the extension its full hooks; whether the file was rewritten
    (said in ``log`` first: Gemini may end the set-up's process as its session ends).

    Gemini reads an extension's hooks only from ``hooks/hooks.json``, which Claude Code reads too and
    whose strict check refuses Gemini's event names; so that file holds, for Gemini, one hook (at
    SessionEnd) that comes here, and ``hooks/gemini.json`` is put in its place in Gemini's copy. Only
    there: a copy Gemini made (never a ``link``ed checkout, nor Claude Code's or Codex's folders),
    which an update replaces whole, so the first session after it completes the hooks again.
    """
    try:
        with open(os.path.join(root, GEMINI_INSTALL), encoding="utf-8") as fh:
            install = json.load(fh)
        with open(os.path.join(root, *GEMINI_HOOKS), "rb") as fh:
            wanted = fh.read()
        with open(os.path.join(root, *SHARED_HOOKS), "rb") as fh:
            if fh.read() == wanted:
                return False
    except (OSError, ValueError):
        return False
    if not isinstance(install, dict) or install.get("type") == "link":
        return False
    target = os.path.join(root, *SHARED_HOOKS)
    if log:
        log.write("giving Gemini CLI's copy of the extension its full hooks (from the next session on)")
    temporary = f"{target}.{os.getpid()}.tmp"
    with open(temporary, "wb") as fh:
        fh.write(wanted)
    os.replace(temporary, target)
    return True


def unwritable(data: str, refused: OSError) -> str:
    """What a set-up says that cannot write the plugin's data folder (a sandboxed shell)."""
    return (
        f"Keeper is not set up yet and cannot set itself up from here: {data} cannot be written "
        f"({refused.strerror}), as in a sandboxed shell. Start a new session (its first hook sets "
        "Keeper up), then run this again."
    )


def setup(root: str, data: str, foreground: bool = False, quick: bool = False) -> int:
    """Make ``data/env/<version>-<digest>`` ready; 0 when it is (or another run made it), 1 on failure.

    ``quick`` (a session start after an update) only tries the copy of an earlier environment, which
    takes a second, and leaves the full set-up to a background run: 1 when that did not make it ready.
    """
    os.makedirs(data, exist_ok=True)
    log = Log(data, echo=foreground)
    complete_gemini_hooks(root, log)
    key = env_key(root)
    target = os.path.join(data, ENV_DIR, key)
    if is_ready(target, key):
        return 0
    lock = SetupLock(data, wait=STEP_TIMEOUT if foreground else 0)
    if not lock.acquire():
        if is_ready(target, key):
            return 0  # the run this one waited for made it
        if lock.refused is not None:
            log.write(unwritable(data, lock.refused))
            return 1
        log.write("another set-up is running")
        return 1 if quick else 0
    try:
        if is_ready(target, key):
            return 0
        started = time.monotonic()
        log.write(f"setting up keeper {key} with Python {sys.version.split()[0]} ({sys.executable}) in {target}")
        if os.path.isdir(target):  # a leftover without its ready marker, or one that could not import Keeper
            shutil.rmtree(target)
        deps = dependencies(root)
        earlier = earlier_environment(data, target, deps)
        if earlier:
            try:
                build(root, target, deps, log, start_from=earlier)
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                log.write(f"could not start from {earlier} ({exc}); building a new environment")
        if not is_ready(target, key):
            if quick:
                return 1
            build(root, target, deps, log)
        _tidy(data, target, log)
        try:
            os.remove(os.path.join(data, SETUP_FAILED))
        except OSError:
            pass
        log.write(f"ready in {time.monotonic() - started:.1f} s")
        if quick or foreground:  # within a session start's or a person's wait
            replay_apart(root, data)
        else:
            replay(data, target, log)
        return 0
    except (OSError, RuntimeError, ValueError, subprocess.SubprocessError) as exc:
        log.write(f"FAILED: {exc}")
        if not quick:
            _failed(data, str(exc))
        return 1
    finally:
        lock.release()


# -- hooks that arrive while the set-up runs -----------------------------------------------------------
PENDING = "pending"  # <data>/pending/<time>-<pid>.json: a hook kept until Keeper is ready
KEPT_EVENTS = ("stop", "pre-compact", "session-end")  # the ones that write a session's file
PENDING_MAX = 200  # a set-up that keeps failing never lets the folder grow past this
# What chooses the store, the project, the session and the agent of a hook: kept with it, and on replay
# taken from it alone (the set-up may have been started by another agent's hook, in another project).
HOOK_ENV = (
    "HOME", "USERPROFILE", "LOCALAPPDATA", "APPDATA", "PATH",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
    "CLAUDECODE", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_SESSION_ID", "PLUGIN_ROOT", "CODEX_HOME", "CODEX_SESSION_ID",
    "GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID", "GEMINI_CLI_HOME",
)  # fmt: skip
_LAUNCHERS_OWN = ("KEEPER_COUNT", "KEEPER_LAUNCHER_")  # the launchers' hand-offs to one call: never replayed
KEEP_UP_TO = 32 << 20  # a larger payload the hook itself refuses (keeper.hooks.entry.MAX_STDIN): not kept
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # a link put in pending/ is never followed out of it


def _hook_env(name: str) -> bool:
    return name in HOOK_ENV or (name.startswith("KEEPER_") and not name.startswith(_LAUNCHERS_OWN))


def _kept_event(event: str, raw: bytes) -> bool:
    """Whether a hook that met the set-up is kept: only those that write a session's file. Codex names
    none on the command line; its payload does (``Stop``)."""
    if event:
        return event in KEPT_EVENTS
    try:
        named = json.loads(raw.decode("utf-8", errors="replace")).get("hook_event_name")
    except (ValueError, AttributeError):
        return False
    return named in ("Stop", "PreCompact", "SessionEnd")


def keep(root: str, data: str, event: str, cwd: str, raw: bytes) -> None:
    """Keep a hook that arrived before Keeper was ready, to be run once it is (``replay``): a session
    that ends while the set-up runs (a short first session) still gets its session file. Then, if the
    set-up finished meanwhile, run it now: the set-up may have looked at the folder before it was kept."""
    folder = os.path.join(data, PENDING)
    os.makedirs(folder, exist_ok=True)
    if len(raw) <= KEEP_UP_TO and _kept_event(event, raw) and len(os.listdir(folder)) < PENDING_MAX:
        facts: dict[str, object] = {"event": event, "payload": raw.decode("utf-8", errors="replace"), "cwd": cwd}
        facts["env"] = {k: v for k, v in os.environ.items() if _hook_env(k)}
        name = os.path.join(folder, f"{time.time_ns()}-{os.getpid()}.json")
        # the session's last message and its variables: its owner's only, as the store's files
        fd = os.open(name + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with open(fd, "w", encoding="utf-8") as fh:
            json.dump(facts, fh)
        os.replace(name + ".tmp", name)
    key = env_key(root)
    if is_ready(os.path.join(data, ENV_DIR, key), key):
        replay_apart(root, data)


def replay_apart(root: str, data: str) -> None:
    """Run the kept hooks in a process of their own (``--replay``), in a session of its own: each may
    take a minute, and the call that starts it (a hook with a 2 s limit, a session start's quick set-up,
    a person's save) would otherwise wait for them or, ended at its limit, end them half done. None
    kept, no process; one that cannot start leaves them kept (a later set-up or kept hook runs them)
    and never fails the set-up that is ready."""
    try:
        if not any(n.endswith(".json") for n in os.listdir(os.path.join(data, PENDING))):
            return
    except OSError:
        return
    flags = 0
    if sys.platform == "win32":
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    args = [sys.executable, "-B", "-I", os.path.abspath(__file__), "--root", root, "--data", data, "--replay"]
    try:
        subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=data,
            creationflags=flags, start_new_session=sys.platform != "win32",
        )  # fmt: skip
    except OSError as exc:
        Log(data, echo=False).write(f"could not start the hooks kept while Keeper set itself up: {exc}")


_HOOK_CODE = "from keeper.hooks.entry import main; import sys; main(sys.argv[1:])"


def _read_kept(path: str) -> tuple[str, str, str, dict[str, str]]:
    """A kept hook's event, payload, folder and variables, as ``keep`` writes them; ValueError for
    anything else (the folder is the user's, but what is in it runs: a link is not followed, and
    only the variables ``keep`` keeps are taken)."""
    with open(os.open(path, os.O_RDONLY | _NOFOLLOW), encoding="utf-8") as fh:
        facts = json.load(fh)
    if not isinstance(facts, dict):
        raise ValueError("not a kept hook")
    event, payload, cwd, env = (facts.get(k) for k in ("event", "payload", "cwd", "env"))
    if event not in ("", *KEPT_EVENTS) or not isinstance(payload, str) or not isinstance(cwd, str):
        raise ValueError("not a kept hook")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError("not a kept hook's variables")
    return str(event), payload, cwd, {k: v for k, v in env.items() if isinstance(k, str) and _hook_env(k)}


def replay(data: str, env: str, log: Log) -> None:
    """Run the hooks ``keep`` kept, oldest first, each once (taken by a rename, so two runs never share
    one), in the environment ``env``, with the environment and folder each arrived with."""
    folder = os.path.join(data, PENDING)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return
    for name in names:
        taken = os.path.join(folder, f"{name}.{os.getpid()}.taken")
        try:
            os.rename(os.path.join(folder, name), taken)
            event, payload, cwd, kept = _read_kept(taken)
            if not os.path.isdir(cwd):  # run elsewhere, its project would be that folder's, not its own
                log.write(f"not running the hook kept in {name}: its folder {cwd} is gone")
                continue
            variables = {k: v for k, v in child_env().items() if not _hook_env(k)}
            variables.update(kept, PATH=absolute_path(kept.get("PATH")) or child_env()["PATH"])
            log.write(f"running the {event or 'Codex'} hook that came while Keeper set itself up")
            args = [env_python(env), "-I", "-c", _HOOK_CODE, event]
            subprocess.run(
                args, input=payload.encode("utf-8"), capture_output=True, timeout=60,
                check=False, cwd=cwd, env=variables,
            )  # fmt: skip
        except (OSError, ValueError, RecursionError, subprocess.SubprocessError) as exc:
            log.write(f"could not run the hook kept in {name}: {exc}")
        finally:
            try:
                os.remove(taken)
            except OSError:
                pass


def write_digest(root: str) -> str:
    """Record the package digest beside the code (run after changing it; a test says when)."""
    digest = package_digest(root)
    os.makedirs(os.path.join(root, *DIGEST_FILE[:-1]), exist_ok=True)
    with open(os.path.join(root, *DIGEST_FILE), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(digest + "\n")
    return digest


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="bootstrap.py", description="Set Keeper up inside its plugin data folder.")
    parser.add_argument("--root", required=True, help="the plugin folder (CLAUDE_PLUGIN_ROOT)")
    parser.add_argument("--data", help="the plugin's data folder (CLAUDE_PLUGIN_DATA)")
    parser.add_argument("--foreground", action="store_true", help="wait for a running set-up; echo the log")
    parser.add_argument("--quick", action="store_true", help="only start from an earlier environment (an update)")
    parser.add_argument("--write-digest", action="store_true", help=f"write {'/'.join(DIGEST_FILE)} and stop")
    parser.add_argument("--keep", metavar="EVENT", help="keep the hook on stdin until Keeper is ready")
    parser.add_argument("--cwd", default="", help="the folder the kept hook ran in")
    parser.add_argument("--replay", action="store_true", help="run the kept hooks, when Keeper is ready")
    args = parser.parse_args(argv)
    if args.write_digest:
        sys.stdout.write(write_digest(os.path.abspath(args.root)) + "\n")
        return 0
    if not args.data:
        parser.error("--data is required")
    root, data = os.path.abspath(args.root), os.path.abspath(args.data)
    try:
        os.makedirs(data, exist_ok=True)
        os.chdir(data)  # started from the session's folder (a repository): nothing may resolve there
    except OSError as exc:
        sys.stderr.write(unwritable(data, exc) + "\n")
        return 1
    if args.keep is not None:
        keep(root, data, args.keep, args.cwd, sys.stdin.buffer.read())
        return 0
    if args.replay:
        key = env_key(root)
        target = os.path.join(data, ENV_DIR, key)
        if is_ready(target, key):
            replay(data, target, Log(data, echo=False))
        return 0
    return setup(root, data, args.foreground, args.quick)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
