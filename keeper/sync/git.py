"""Git, run the one way Keeper runs programs, with nothing of the user's able to steer it.

Every call goes through ``keeper.process.run`` (scrubbed environment, neutral folder, a time
limit) against Keeper's own bare repository (no user's repository is ever the one git runs in),
with ``-c`` overrides so that no system or user configuration can run a hook, start an fsmonitor,
a pager or an editor, sign, recurse into submodules, or ask for a password on the terminal. The
user's own configuration is still read for what reaching a remote needs: credential helpers,
``core.sshCommand``, proxies, ``url.*.insteadOf``. A failure is one line saying what git said.
"""

from __future__ import annotations

import os

from keeper import process
from keeper.errors import KeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence

MIN_VERSION = (2, 20)
NETWORK_TIMEOUT = 12.0  # a remote that cannot be reached is reported within the contract's 15 s
LOCAL_TIMEOUT = 120.0

# Settings that would otherwise come from the user's or the system's configuration.
_OVERRIDES = (
    "core.hooksPath=" + os.devnull,
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.askPass=",
    "credential.interactive=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "push.gpgSign=false",
    "protocol.file.allow=always",
    "core.pager=cat",
    "core.editor=true",
    "core.sparseCheckout=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "push.recurseSubmodules=no",
    "init.defaultBranch=main",
    "advice.detachedHead=false",
    "color.ui=false",
)
_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=10",
    "GIT_AUTHOR_NAME": "Keeper",
    "GIT_AUTHOR_EMAIL": "keeper@localhost",
    "GIT_COMMITTER_NAME": "Keeper",
    "GIT_COMMITTER_EMAIL": "keeper@localhost",
    "LC_ALL": "C",
    "LANGUAGE": "C",
}


def environment() -> dict[str, str]:
    """What every git child gets on top of the scrubbed environment: no prompt, no user config;
    ssh in batch mode unless the user set their own way of reaching a remote."""
    env = dict(_ENV)
    if os.environ.get("GIT_SSH_COMMAND") or os.environ.get("GIT_SSH"):
        del env["GIT_SSH_COMMAND"]
    return env


def transport(url: str) -> tuple[list[str], dict[str, str]]:
    """Extra arguments and environment for a fetch or push to ``url``.

    For a remote on this machine (a path or ``file://``) the other side (``upload-pack``,
    ``receive-pack``) runs here too, and git does not pass ``-c`` on to it: so it is started with
    the same overrides, and without the user's and the system's configuration, so no hook of
    theirs runs. A remote elsewhere runs its side itself.
    """
    head = url.split("://", 1)[0].lower() if "://" in url else ""
    scp = ":" in url and "/" not in url.split(":", 1)[0] and len(url.split(":", 1)[0]) > 1
    if head not in ("", "file") or (not head and scp):
        return [], {}
    side = "git -c core.hooksPath=" + os.devnull.replace("\\", "/") + " -c core.fsmonitor=false"
    return (
        [f"--upload-pack={side} upload-pack", f"--receive-pack={side} receive-pack"],
        {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull},
    )


class GitError(KeeperError):
    """Git is missing, too old, or a git command failed; the message says which and what to do."""


def program() -> str:
    """The git program on PATH, or GitError saying how to get one."""
    import shutil

    found = shutil.which("git")
    if not found:
        raise GitError("git is not installed or not on PATH; install git (2.20 or newer) to use keeper sync")
    return found


def version() -> tuple[int, ...]:
    """Git's version, e.g. ``(2, 39, 5)``."""
    done = process.run([program(), "--version"], cwd=process.neutral_dir(), timeout=LOCAL_TIMEOUT)
    words = done.stdout.decode("ascii", "replace").split()
    text = words[2] if len(words) > 2 else ""
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def check_version() -> tuple[int, ...]:
    found = version()
    if found < MIN_VERSION:
        shown = ".".join(map(str, found)) or "unknown"
        raise GitError(f"git {shown} is too old for keeper sync; install git 2.20 or newer")
    return found


class Repo:
    """Keeper's own bare repository (``<root>/sync/repo.git``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._git = program()

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**environment(), "GIT_DIR": self.path, **(extra or {})}

    def run(
        self,
        args: Sequence[str],
        *,
        input: bytes | None = None,
        timeout: float = LOCAL_TIMEOUT,
        check: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> bytes:
        done = self._call(args, input, timeout, extra_env)
        if check and done.returncode != 0:
            raise GitError(f"git {args[0]} failed: {process.last_words(done.stderr or done.stdout)}")
        return done.stdout

    def attempt(
        self, args: Sequence[str], *, timeout: float = LOCAL_TIMEOUT, extra_env: dict[str, str] | None = None
    ) -> tuple[int, bytes, bytes]:
        """Run without raising on a non-zero exit: ``(code, stdout, stderr)`` (a timeout still raises)."""
        done = self._call(args, None, timeout, extra_env)
        return done.returncode, done.stdout, done.stderr

    def _call(
        self, args: Sequence[str], input: bytes | None, timeout: float, extra_env: dict[str, str] | None
    ) -> subprocess.CompletedProcess[bytes]:
        """The one way Keeper runs git: the overrides, the environment, a neutral folder, a time limit."""
        argv = [self._git]
        for setting in _OVERRIDES:
            argv += ["-c", setting]
        argv += list(args)
        try:
            return process.run(
                argv, cwd=process.neutral_dir(), timeout=timeout, env=self.env(extra_env), input=input, check=False
            )
        except process.ProcessFailed as exc:
            raise GitError(str(exc)) from None

    def init(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        argv = [self._git, "-c", "init.defaultBranch=main", "init", "-q", "--bare", self.path]
        env = environment()
        try:
            process.run(argv, cwd=process.neutral_dir(), timeout=LOCAL_TIMEOUT, env=env)
        except process.ProcessFailed as exc:
            raise GitError(str(exc)) from None

    def rev(self, ref: str) -> str | None:
        code, out, _ = self.attempt(["rev-parse", "-q", "--verify", ref + "^{commit}"])
        return out.decode().strip() if code == 0 and out.strip() else None

    def ls_tree(self, commit: str | None) -> dict[str, str]:
        """``path: blob id`` for every regular file of a commit (empty for None): a symbolic link,
        a submodule or any other kind of entry is not a file Keeper reads."""
        if not commit:
            return {}
        out = self.run(["ls-tree", "-r", "-z", "--full-tree", commit])
        found: dict[str, str] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[0] in (b"100644", b"100755") and parts[1] == b"blob":
                found[path.decode("utf-8", "surrogateescape")] = parts[2].decode()
        return found

    def read_blobs(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The content of each blob id, in one ``cat-file --batch``."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        out = self.run(["cat-file", "--batch"], input=("\n".join(wanted) + "\n").encode())
        found: dict[str, bytes] = {}
        at = 0
        for blob in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            at = end + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            found[blob] = out[at : at + size]
            at += size + 1
        return found

    def write_blobs(self, contents: Sequence[bytes]) -> list[str]:
        """Store each content as a blob; return their ids (one ``hash-object`` for all, via files)."""
        if not contents:
            return []
        import tempfile

        with tempfile.TemporaryDirectory(prefix="keeper-blobs-") as folder:
            names = []
            for index, data in enumerate(contents):
                name = os.path.join(folder, str(index))
                with open(name, "wb") as fh:
                    fh.write(data)
                names.append(name)
            out = self.run(
                ["hash-object", "-w", "--no-filters", "--stdin-paths"], input="\n".join(names).encode() + b"\n"
            )
        return out.decode().split()

    def write_tree(self, files: dict[str, str]) -> str:
        """A tree of ``path: blob id`` through a throwaway index."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="keeper-index-") as folder:
            env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
            info = "".join(f"100644 {blob}\t{path}\0" for path, blob in sorted(files.items()))
            self.run(
                ["update-index", "-z", "--index-info"], input=info.encode("utf-8", "surrogateescape"), extra_env=env
            )
            return self.run(["write-tree"], extra_env=env).decode().strip()

    def commit(self, tree: str, parents: Sequence[str], message: str) -> str:
        args = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.run([*args, "-m", message]).decode().strip()

    def is_ancestor(self, older: str, newer: str) -> bool:
        code, _, _ = self.attempt(["merge-base", "--is-ancestor", older, newer])
        return code == 0

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of two commits, or None when their histories share none."""
        code, out, _ = self.attempt(["merge-base", one, other])
        return out.decode().strip() or None if code == 0 else None
