"""The one way Keeper writes files: atomically, under a lock, never leaving half a file.

``atomic_write`` writes a uniquely named temp file beside the target, fsyncs it and replaces the
target, so a crash, a kill or a full disk leaves either the old file or the new one, never a mix.
Read-modify-write of shared files happens inside ``project_lock``. The store is private: files are
created 0600 and folders 0700 whatever the umask, and no write follows a link out of the store
(``guard``): a symlinked ``sessions/`` or log file cannot make Keeper write elsewhere.

Windows applies sharing rules POSIX does not have: replacing or opening a file that another
process has open, is replacing or has locked fails for that moment (WinError 5, 32 or 33, raised
as PermissionError). Every open and replace here goes through ``shared``, which tries again for a
bounded time there; on POSIX a PermissionError is real and raised at once.
"""

from __future__ import annotations

import os

from keeper.errors import KeeperError
from keeper.store import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any, Callable, TypeVar

    T = TypeVar("T")


# Hooks wait briefly and fail open; the CLI waits longer and then says what to do.
HOOK_LOCK_TIMEOUT = 2.0
CLI_LOCK_TIMEOUT = 15.0
# How long a Windows sharing refusal is retried. A reader holds a file for milliseconds, so a refusal
# that lasts is a reader in a tight loop on a loaded machine (one at load 10 outlasted 2 s). A hook
# gives up early: it must answer well inside its agent's limit (10 s) and fails open anyway. What
# someone waits on, a save above all, waits as long as it would for the project's lock rather than
# give up what it was asked to write.
HOOK_SHARING_WAIT = 2.0
_sharing_wait = [CLI_LOCK_TIMEOUT]  # this process's budget; ``sharing_wait`` narrows it while a hook runs
# A modification time's coarsest tick (FAT's), and a time anyone can set: a cache trusts a file's time
# only once it is older than this (the start's kept answer, the stale check's kept verdicts).
MTIME_TICK_NS = 2_000_000_000
# A change time's tick where the file system keeps finer than seconds: the kernel's clock, a few ms at most.
CHANGE_TICK_NS = 100_000_000


def settled(ctime_ns: int, before_ns: int) -> bool:
    """Whether a file's last change lies surely before ``before_ns``, by its change time (which no
    one can set back, as ``touch -r`` sets a modification time): older by a tick of its clock,
    ``MTIME_TICK_NS`` where the file system keeps whole seconds (ext3, HFS+). A change time ahead of
    ``before_ns`` (a clock that jumped) is not. Where there is no change time (Windows' ``st_ctime``
    is the creation; FAT) this tells nothing more than the modification time does."""
    tick = MTIME_TICK_NS if ctime_ns % 1_000_000_000 == 0 else CHANGE_TICK_NS
    return ctime_ns < before_ns - tick


class sharing_wait:  # named like a function: ``with sharing_wait(HOOK_SHARING_WAIT):``
    """``shared`` retries for ``seconds`` while the block runs (a hook's shorter budget), then as before.

    A class rather than ``@contextmanager``: ``contextlib`` costs a hook ~2 ms to import."""

    def __init__(self, seconds: float) -> None:
        self.seconds = self.earlier = seconds

    def __enter__(self) -> None:
        self.earlier, _sharing_wait[0] = _sharing_wait[0], self.seconds

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        _sharing_wait[0] = self.earlier


def shared(action: Callable[[], T], refusal: type[OSError] = PermissionError) -> T:
    """``action()``, tried again every millisecond (for this process's budget, see ``sharing_wait``)
    while Windows says another process holds the file it opens or replaces; elsewhere just ``action()``.

    Every millisecond, not with a growing pause: a reader in a loop holds a file ~95% of the time,
    so the writer needs many short chances rather than a few long waits.
    """
    if os.name != "nt":
        return action()
    import time

    deadline = time.monotonic() + _sharing_wait[0]
    while True:
        try:
            return action()
        except refusal:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.001)


def read_bytes(path: str) -> bytes:
    """The whole file's bytes (FileNotFoundError when missing), through Windows' sharing refusals."""

    def read() -> bytes:
        with open(path, "rb") as fh:
            return fh.read()

    return shared(read)


class OutsideStore(KeeperError):
    """A write inside the store would land outside it, through a symbolic link."""


def _plain(path: str) -> str:
    """``path`` without the extended-length prefix Windows' ``realpath`` may leave on one side only (it
    keeps ``\\\\?\\`` when it cannot check the shorter name, as when another process holds the folder):
    ``\\\\?\\C:\\x`` and ``C:\\x`` are one folder."""
    if path.startswith("\\\\?\\UNC\\"):
        return "\\\\" + path[8:]
    return path[4:] if path.startswith("\\\\?\\") else path


def guard(path: str) -> None:
    """Refuse a write to ``path`` (in the store, by its name) whose folder really lies elsewhere."""
    root = paths.data_root()
    lexical = os.path.abspath(path)
    if not lexical.startswith(root + os.sep):
        return  # not the store's (an export's output, say): the caller chose where it goes
    real_root = _plain(os.path.realpath(root))
    folder = _plain(os.path.realpath(os.path.dirname(lexical)))
    if folder != real_root and not folder.startswith(real_root + os.sep):
        raise OutsideStore(f"{os.path.dirname(lexical)} leads out of Keeper's store (to {folder}); not writing there")
    if os.path.islink(lexical):
        raise OutsideStore(f"{lexical} is a symbolic link; Keeper does not write through links in its store")


def store_problem() -> str | None:
    """Why Keeper's store cannot be used (a file where a folder should be, no write permission),
    said so the user knows what to do; None when it can. One stat when the store exists."""
    root = paths.data_root()
    if os.path.isdir(root):
        if os.access(root, os.W_OK):
            return None
        return f"Keeper cannot write to its store {root}; make it writable or set KEEPER_HOME to a folder you own"
    probe = root
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        return f"Keeper's store {root} cannot be made: {probe} is a file; move it away or set KEEPER_HOME elsewhere"
    if not os.access(probe, os.W_OK):
        return f"Keeper's store {root} cannot be made in {probe} (no permission); set KEEPER_HOME to a folder you own"
    return None


def open_append(path: str, readable: bool = False) -> int:
    """An append-only descriptor for a store file: created 0600, never through a link (``readable``:
    also open for reading, as the tally reads back what it appended)."""
    guard(path)
    mode = os.O_RDWR if readable else os.O_WRONLY
    flags = mode | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        return shared(lambda: os.open(path, flags, 0o600))
    except FileNotFoundError:
        ensure_dir(os.path.dirname(path))
        return shared(lambda: os.open(path, flags, 0o600))


def ensure_dir(path: str) -> None:
    """Create a folder and any missing parents, each private to the user on POSIX (0700).

    ``os.makedirs(mode=…)`` would apply the mode to the last folder only.
    """
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent and parent != path:
        ensure_dir(parent)
    guard(path)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass


def read_text(path: str, exact: bool = False) -> str | None:
    """The file's text (UTF-8, BOM kept), or None when missing.

    Undecodable bytes (a hand edit saved in Latin-1) are replaced for reading; with ``exact`` they
    are carried as surrogates, so a read-modify-write through ``atomic_write`` keeps them byte
    for byte.
    """
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return None
    return data.decode("utf-8", errors="surrogateescape" if exact else "replace")


def read_head(path: str, limit: int) -> tuple[str, int] | None:
    """At most ``limit`` bytes from the start of the file, cut after its last whole line, as text;
    and the file's whole size. None when missing or not a regular file (a FIFO would block).

    For readers that need only the start of a file that may have grown huge (SessionStart's
    memory.md): the cost is bounded by ``limit``, whatever the size.
    """
    import stat

    def head() -> tuple[os.stat_result, bytes] | None:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            return (st, fh.read(limit + 1)) if stat.S_ISREG(st.st_mode) else None

    try:
        found = shared(head)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if found is None:
        return None
    st, data = found
    if len(data) > limit:
        cut = data.rfind(b"\n", 0, limit)
        data = data[: cut + 1] if cut >= 0 else data[:limit]
    return data.decode("utf-8", errors="replace"), max(st.st_size, len(data))


def store_is_current() -> bool:
    """Whether ``format.json`` says the store has had every migration this code knows: one read, so
    a usual session start or command never imports ``keeper.store.migrate`` (which reads it the same way).
    False when it cannot be read (a file where the store's folder should be): the migrations say why."""
    try:
        found = read_json(os.path.join(paths.data_root(), paths.STORE_FORMAT))
    except OSError:
        return False
    number, applied = found.get("format"), found.get("applied")
    return (
        type(number) is int
        and number == paths.FORMAT
        and isinstance(applied, list)
        and sum(isinstance(name, str) for name in applied) == number
    )


def read_json(path: str) -> dict[str, Any]:
    """The JSON object in ``path``; ``{}`` when it is missing, unreadable or not an object.

    Keeper's state and cache files are derived, so a damaged one reads as empty and is rebuilt.
    """
    from keeper import jsonio

    text = read_text(path)
    try:
        data = jsonio.loads(text) if text else {}
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


_serial = [0]


def _temp_beside(path: str) -> tuple[int, str]:
    """A new private file beside ``path`` (``.NAME.PID.N.tmp``), made with O_EXCL so no two writers
    share one. Not ``tempfile``: it imports ``random``, ``shutil`` and ``re``, ~15 ms a hook."""
    base = os.path.join(os.path.dirname(path) or ".", "." + os.path.basename(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    while True:
        _serial[0] += 1
        tmp = f"{base}.{os.getpid()}.{_serial[0]}.tmp"
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:  # left by a killed writer that had this pid: take the next number
            continue


def atomic_write(path: str, text: str | bytes, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, never part of one.

    ``durable=False`` skips the fsync, for a derived file a crash may lose (``store.loads``)."""
    folder = os.path.dirname(path) or "."
    ensure_dir(folder)
    guard(path)
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        shared(lambda: os.replace(tmp, path))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def create_new(path: str, text: str, durable: bool = True) -> bool:
    """Create ``path`` holding ``text`` in one step, unless it exists; return whether it was created.

    The content is written and fsynced under a temp name, then hard-linked into place, so the
    file never exists half-written and an existing file is never replaced. Where the file system
    has no hard links, the caller's lock (all creators hold it) makes check-then-replace safe.
    ``durable=False`` skips the fsync, for a copy that can be fetched again (a synced file).
    """
    folder = os.path.dirname(path) or "."
    ensure_dir(folder)
    guard(path)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8", "surrogateescape"))
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:
            if os.path.exists(path):
                return False
            shared(lambda: os.replace(tmp, path))
        return True
    finally:
        try:  # the temp name is a second link to the file: on Windows a reader of it holds both
            shared(lambda: os.unlink(tmp))
        except OSError:
            pass


def is_temp(name: str) -> bool:
    """Whether a file name is one of ``atomic_write``'s temp files (``.NAME.PID.N.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp")


def sweep_temp_files(folder: str, max_age_seconds: float = 3600.0) -> int:
    """Remove temp files a killed writer left behind (older than an hour, so never a live one)."""
    import time

    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    cutoff = time.time() - max_age_seconds
    for entry in entries:
        if is_temp(entry.name):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


class project_lock:  # named like a function: it is used as ``with project_lock(path):``
    """Hold the project's lock; say how to recover if another Keeper process keeps it too long.

    A class rather than ``@contextmanager``: ``contextlib`` costs SessionStart ~2 ms to import.
    """

    def __init__(self, lock_path: str, timeout: float = CLI_LOCK_TIMEOUT) -> None:
        from filelock import FileLock

        ensure_dir(os.path.dirname(lock_path))
        self.path, self.timeout = lock_path, timeout
        self.lock = FileLock(lock_path, timeout=timeout, mode=0o600)

    def __enter__(self) -> None:
        from filelock import Timeout

        try:
            self.lock.acquire()
        except Timeout:
            raise KeeperError(
                f"another Keeper process has held {self.path} for over {self.timeout:.0f} s. "
                "Wait a moment and try again; if no Keeper or Claude Code process is running, delete that file."
            ) from None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.lock.release()
