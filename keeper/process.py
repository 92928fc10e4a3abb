"""The one way Keeper runs another program: a scrubbed environment, a neutral folder, a time limit,
and a failure said in one line.

Git and Python read settings from the environment and from the folder they start in; a repository
or a parent process can put both there (``GIT_DIR``, ``GIT_CONFIG_*``, ``PYTHONPATH``, a
``.git`` or ``pip.py`` in the working directory). So every child starts in a folder Keeper chose,
with those variables removed, stdin closed, and a timeout after which it is killed. The plugin's
set-up (``plugin/bootstrap.py``) runs as a standalone script and applies the same rules itself.
"""

from __future__ import annotations

import os
import subprocess

from keeper.errors import KeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# Variables that change what git or Python do, whoever set them: never inherited by a child.
_SCRUBBED_PREFIXES = ("GIT_", "PYTHON", "PIP_", "UV_", "VIRTUAL_ENV")
_KEPT_GIT = frozenset({"GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_TERMINAL_PROMPT"})  # how to reach a remote


class ProcessFailed(KeeperError):
    """A program Keeper ran failed or timed out; the message says which, and its last words."""


def neutral_dir() -> str:
    """A folder no repository controls, to start a child in: the system's temp folder."""
    import tempfile

    return tempfile.gettempdir()


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child: this one without the variables that would steer git or Python
    (the user's own ways of reaching a remote excepted), PATH without its empty and relative
    entries (they name whatever folder the child starts in), plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key in _KEPT_GIT or not key.upper().startswith(_SCRUBBED_PREFIXES)
    }
    entries = env.get("PATH", os.defpath).split(os.pathsep)  # an empty or relative entry names the cwd
    kept = [e for e in entries if e and os.path.isabs(e)]
    env["PATH"] = os.pathsep.join(kept or [e for e in os.defpath.split(os.pathsep) if os.path.isabs(e)])
    env.update(extra or {})
    return env


def which(name: str) -> str | None:
    """The program ``name`` on PATH, searched only through absolute entries (``run``'s PATH): a
    program in whatever folder Keeper happens to stand in is never found."""
    import shutil

    return shutil.which(name, path=clean_env()["PATH"])


def run(
    argv: Sequence[str],
    *,
    cwd: str,
    timeout: float,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
    group: bool = False,
    drop: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` (an absolute program path or a name found on PATH) in ``cwd`` and return what it did.

    ``env`` is added to the scrubbed environment, from which the variables whose names start with
    one of ``drop`` are removed first. Output is captured as bytes. With ``check``, a non-zero exit
    raises ``ProcessFailed`` with the program's last line of error output; a timeout or a program
    that cannot start always raises it.
    With ``group``, the program starts a process group of its own, and a timeout kills the whole
    group: a coding agent's tools and hooks would otherwise outlive it and hold its output open.
    """
    name = os.path.basename(argv[0])
    child_env = {key: value for key, value in clean_env().items() if not (drop and key.startswith(drop))}
    child_env.update(env or {})
    try:
        if group:
            done = _run_group(list(argv), cwd, child_env, input, timeout)
        else:
            done = subprocess.run(
                list(argv),
                cwd=cwd,
                env=child_env,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
    except subprocess.TimeoutExpired:
        raise ProcessFailed(f"{name} did not finish within {timeout:g} s; try again later") from None
    except OSError as exc:
        raise ProcessFailed(f"cannot run {name}: {exc.strerror or exc}") from None
    if check and done.returncode != 0:
        raise ProcessFailed(f"{name} {' '.join(argv[1:2])} failed: {last_words(done.stderr or done.stdout)}")
    return done


def _run_group(
    argv: list[str], cwd: str, env: dict[str, str], input: bytes | None, timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run`` for a program in its own process group, all of which a timeout kills."""
    own: dict[str, Any] = (
        {"creationflags": 0x00000200} if os.name == "nt" else {"start_new_session": True}  # NEW_PROCESS_GROUP
    )
    stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **own
    ) as child:
        try:
            out, err = child.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            raise
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill a program and every process of its group, then reap it."""
    if os.name == "nt":
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(child.pid)], capture_output=True, check=False)
    else:
        import signal

        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:  # gone already
            pass
    child.kill()
    try:
        child.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a process that left the group holds the pipes: leave it to them
        pass


def last_words(output: bytes) -> str:
    """The last non-empty line a program printed, short, for a one-line error."""
    lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    text = lines[-1] if lines else "no message"
    return text if len(text) <= 300 else text[:297] + "..."
