"""The store's layout: where every file Keeper keeps lies, and what kind of file it is.

One owner for the layout, so export, clear, status, projects and sync ask rather than guess:
``kind`` classifies every path under the root as durable (memory a person would miss: memory.md,
session files, the global memory; what export carries and sync sends), machine-local
(configuration, pins, bookkeeping that only means something on this machine) or derived (the
index, caches, counters, logs, trash, the hub page: rebuilt or safely lost). Which project a
folder is lives in ``identity``.

Every hook runs this module, so it uses ``os.path`` strings and the standard library only:
``pathlib`` costs ~5 ms and ``platformdirs`` ~15 ms at import, more than a whole PostToolUse
hook may take. The folders follow the platform conventions platformdirs documents
(``keeper status`` cross-checks against platformdirs itself).
"""

from __future__ import annotations

import os
import posixpath
import sys

APP = "keeper"
MEMORY_FILE = "memory.md"
SESSIONS_DIR = "sessions"
GLOBAL_DIR = "global"
STATE_DIR = "state"
ROOT_RECORD = "project.json"  # in STATE_DIR: {"root": ..., "name": ...}, for `keeper projects` and the hub
NEWEST_SESSIONS = "newest-sessions"  # in the state folder: the newest session file names (sessions.newest)
OPEN_SESSIONS = "open"  # in the state folder: one marker per session that started and has not ended
# In the state folder: each session's own files, ``<session id>.<kind>``, apart from Keeper's records
# (a session named ``memory`` once overwrote ``state/memory.json``). The kinds: its state (``json``),
# its tally, the items shown to it, the recall hits put into it, its use receipts, its start and end
# markers, the key of its last Stop that found nothing new (``idle``: keeper.hooks.idle).
SESSION_STATE = "sessions"
SESSION_KINDS = ("json", "tally", "shown", "recalled", "receipts", "start", "end", "idle")
PROJECT_CONFIG = os.path.join(".claude", "keeper.yaml")
TEAM_DIR = os.path.join(".claude", "keeper")  # in the repository: the only Keeper files that live there
TEAM_FILE = "team.md"
TEAM_ATTRIBUTES = ".gitattributes"  # beside team.md: `team.md merge=union`, so branches merge with git alone
PROJECTS_DIR = "projects"
TRASH_DIR = "trash"
LOGS_DIR = "logs"
CACHE_DIR = "cache"
LOG_FILE = "keeper.log"
PINS_FILE = "pins.json"
CONFIG_FILE = "config.yaml"
HUB_PAGE = "hub.html"
LOCK_FILE = ".lock"
INDEX_FILE = "index.sqlite3"  # in STATE_DIR, with SQLite's -wal, -shm and -journal beside it
INDEX_SNAPSHOT = "index.snapshot"  # in STATE_DIR: the index as one marshal file, for prompts (recall.snapshot)
RECALL_GATE = "recall-gate"  # in STATE_DIR: the index's terms as a filter a prompt reads first (recall.gate)
OWNED_LINES = "memory.json"  # in STATE_DIR: which lines of memory.md Keeper wrote (export carries it)
REMOVED = "removed.json"  # in STATE_DIR: the keys of items retired or resolved, so import cannot revive them
STORE_FORMAT = "format.json"  # at the root: the store's format and the migrations it has had (store.migrate)
FORMAT = 3  # the store format this code writes: len(store.migrate.MIGRATIONS), which a test holds equal
BRIEFING_BYTES = 1 << 20  # SessionStart reads at most this much of a memory file: a huge one costs no more
PROVENANCE_FILE = "provenance.jsonl"  # beside memory.md: where each item came from (durable: export and sync carry it)
STALE_CACHE = "stale-marks.cache"  # in STATE_DIR: the stale check's last verdicts (derived: store.verdicts)
LOADS = "loads.cache"  # in STATE_DIR: what sessions did with the items they were shown (derived: store.loads)
START_CACHE = "start.cache"  # in STATE_DIR: SessionStart's last answer and what it rests on (derived: hooks.startcache)
RECORD_SEAL = "provenance.seal"  # in STATE_DIR: the record's size and digest as Keeper last wrote it (derived)
# In STATE_DIR and beside memory.md in the sync repository: the removals that travel (store.removals).
REMOVALS = "removals.json"
SYNC_FILE = "sync.json"  # at the root: the recorded remote and this machine's id (machine-local, never synced)
# In STATE_DIR (a "." no session id holds): the project's folder in the sync repository, its last sync.
PROJECT_SYNC = "sync.remote.json"
# In STATE_DIR: Keeper's own records of a project, what no session's file may ever be named.
RECORDS = (OWNED_LINES, ROOT_RECORD, REMOVED, REMOVALS, PROJECT_SYNC)
MAX_FILE = 8 << 20  # bytes: the largest memory or session file Keeper reads from an archive or a sync remote
SYNC_MARKER = "keeper-sync.json"  # at the sync repository's top: what makes a repository a Keeper store
# In SYNC_DIR (derived): Keeper's bare repository, the sync lock, what each store file last exported
# as, the last run's outcome, and the mark a hook leaves to ask for one more run.
SYNC_REPO, SYNC_LOCK, SYNC_EXPORTS, SYNC_STATUS, SYNC_QUEUED = (
    "repo.git",
    "lock",
    "exports.json",
    "status.json",
    "queued",
)
SYNC_DIR = "sync"  # at the root: the sync repository, its lock and its status (derived: rebuilt from the remote)
# At the root: the mark ``keeper import`` leaves while an archive's project waits for its clone (no
# project here was its repository), so the clone's first SessionStart takes it over (``sync.mirror.adopt``).
WAITING = "import.waiting"

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-")


def safe_session_name(name: str) -> bool:
    """A session file name Keeper reads from an archive or a sync remote: a digit first (no dot files,
    no device names), letters, digits and ``._@-`` (``@`` joins the machine a synced one was made on),
    ``.md`` last, at most 200 characters before it."""
    stem = name[:-3]
    return name.endswith(".md") and 0 < len(stem) <= 200 and stem[0].isdigit() and _NAME_CHARS.issuperset(stem)


DURABLE = "durable"
LOCAL = "local"
DERIVED = "derived"


def _xdg(var: str) -> str | None:
    value = os.environ.get(var, "")
    return value if posixpath.isabs(value) else None


def _platform_dir(xdg_var: str, linux_default: str) -> str:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(os.path.normpath(base), APP)
    if sys.platform == "darwin":
        base = _xdg(xdg_var) or os.path.expanduser("~/Library/Application Support")
    else:
        base = _xdg(xdg_var) or os.path.expanduser(linux_default)
    return os.path.join(base, APP)


def data_root() -> str:
    """``$KEEPER_HOME``, else the user data folder (``~/.local/share/keeper`` and kin)."""
    home = os.environ.get("KEEPER_HOME", "").strip()
    return os.path.abspath(os.path.expanduser(home)) if home else _platform_dir("XDG_DATA_HOME", "~/.local/share")


def claude_dir() -> str:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def global_memory_file() -> str:
    """``<root>/global/memory.md``: what holds across projects (feedback, the user, tools, references)."""
    return os.path.join(data_root(), GLOBAL_DIR, MEMORY_FILE)


def global_config_file() -> str:
    """``$KEEPER_HOME/config.yaml``, else ``config.yaml`` in the user config folder."""
    if os.environ.get("KEEPER_HOME", "").strip():
        return os.path.join(data_root(), "config.yaml")
    return os.path.join(_platform_dir("XDG_CONFIG_HOME", "~/.config"), "config.yaml")


def projects_dir() -> str:
    return os.path.join(data_root(), PROJECTS_DIR)


def global_dir() -> str:
    return os.path.join(data_root(), GLOBAL_DIR)


def trash_dir(project_id: str) -> str:
    """``<root>/trash/<project-id>``: the backups ``keeper clear`` made for one project."""
    return os.path.join(data_root(), TRASH_DIR, project_id)


def log_file() -> str:
    return os.path.join(data_root(), LOGS_DIR, LOG_FILE)


def cache_file(name: str) -> str:
    return os.path.join(data_root(), CACHE_DIR, name)


def pins_file() -> str:
    return os.path.join(data_root(), PINS_FILE)


def hub_page() -> str:
    return os.path.join(data_root(), HUB_PAGE)


def sync_file() -> str:
    """``<root>/sync.json``: the remote ``keeper sync`` uses; its existence is the hooks' one stat."""
    return os.path.join(data_root(), SYNC_FILE)


def waiting_file() -> str:
    """``<root>/import.waiting``: an imported project waits for its clone; a hook's second stat, taken
    only by a project with no memory where no remote is recorded."""
    return os.path.join(data_root(), WAITING)


def sync_dir() -> str:
    """``<root>/sync/``: Keeper's bare repository, the sync lock and the last run's status."""
    return os.path.join(data_root(), SYNC_DIR)


# The kinds of durable file a store holds (``file_kind``): what export, import, sync and the hub carry.
MEMORY, PROVENANCE, SESSION = "memory", "provenance", "session"


def file_kind(relpath: str) -> str | None:
    """``MEMORY``, ``PROVENANCE`` or ``SESSION`` for a durable file, by its path relative to the
    store's root, with ``/``; None for any other. An archive and the sync repository use the same
    layout (``global/memory.md``, ``projects/<folder>/sessions/<name>.md`` …), so this one list
    decides for export, import, sync and the hub alike."""
    parts = relpath.split("/")
    if parts[0] == GLOBAL_DIR and len(parts) == 2:
        rest = parts[1:]
    elif parts[0] == PROJECTS_DIR and len(parts) in (3, 4) and parts[1] not in ("", ".", ".."):
        rest = parts[2:]
    else:
        return None
    if rest == [MEMORY_FILE]:
        return MEMORY
    if rest == [PROVENANCE_FILE]:
        return PROVENANCE
    if parts[0] == PROJECTS_DIR and len(rest) == 2 and rest[0] == SESSIONS_DIR:
        return SESSION if rest[1].endswith(".md") and not rest[1].startswith(".") else None
    return None


def durable_files(folder: str, at: str) -> list[tuple[str, str]]:
    """The durable files one memory folder holds, ``(file_kind, path)``: its memory.md, its
    provenance record, then its session files by name; ``at`` is the folder as ``file_kind`` reads
    it (``global``, ``projects/<id>``, or a sync repository's ``projects/<key>``). What export,
    sync and the hub carry, listed in one place."""
    found: list[tuple[str, str]] = []
    for name in (MEMORY_FILE, PROVENANCE_FILE):
        path = os.path.join(folder, name)
        kind = file_kind(f"{at}/{name}")
        if kind is not None and os.path.isfile(path):
            found.append((kind, path))
    try:
        entries = sorted(os.scandir(os.path.join(folder, SESSIONS_DIR)), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        kind = file_kind(f"{at}/{SESSIONS_DIR}/{entry.name}")
        if kind is not None and entry.is_file(follow_symlinks=False):
            found.append((kind, entry.path))
    return found


def kind(relpath: str) -> str:
    """``DURABLE``, ``LOCAL`` or ``DERIVED`` for a path relative to the store's root (``/`` or ``\\``).

    Durable: ``projects/<id>/memory.md``, ``projects/<id>/sessions/*.md``, ``global/memory.md`` and
    the provenance record beside each memory.md (``provenance.jsonl``).
    Machine-local: the configuration, the pins, the recorded sync remote, the store's format and each
    project's ``state/memory.json``, ``state/project.json``, ``state/removed.json`` and
    ``state/removals.json`` (the global memory has these two too) and ``state/sync.remote.json``.
    Everything else (the index, each session's state, tally and markers in ``state/sessions/``, open
    markers, caches, logs, the trash, the hub page, the sync repository, locks, temp files) is derived.
    """
    parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
    if len(parts) == 1 and parts[0] in (CONFIG_FILE, PINS_FILE, SYNC_FILE, STORE_FORMAT):
        return LOCAL
    if parts and file_kind("/".join(parts)) is not None:
        return DURABLE
    if parts in ([GLOBAL_DIR, STATE_DIR, REMOVED], [GLOBAL_DIR, STATE_DIR, REMOVALS]):
        return LOCAL
    if len(parts) == 4 and parts[0] == PROJECTS_DIR and parts[2] == STATE_DIR and parts[3] in RECORDS:
        return LOCAL
    return DERIVED


class Project:
    """One project's identity and the files Keeper keeps for it (a plain class: no typing import)."""

    __slots__ = ("checkout", "dir", "id", "root")

    def __init__(self, root: str, id: str, dir: str, checkout: str | None = None) -> None:
        self.root, self.id, self.dir = root, id, dir
        self.checkout = checkout or root  # the work tree in use: in a linked worktree, not the main one

    def __repr__(self) -> str:
        return f"Project(root={self.root!r}, id={self.id!r})"

    @property
    def name(self) -> str:
        return os.path.basename(self.root.rstrip("/\\")) or self.root

    @property
    def memory(self) -> str:
        return os.path.join(self.dir, MEMORY_FILE)

    @property
    def sessions(self) -> str:
        return os.path.join(self.dir, SESSIONS_DIR)

    @property
    def provenance(self) -> str:
        """``provenance.jsonl``: where each item of memory.md came from and what happened to it."""
        return os.path.join(self.dir, PROVENANCE_FILE)

    @property
    def state(self) -> str:
        return os.path.join(self.dir, STATE_DIR)

    @property
    def session_state(self) -> str:
        """``state/sessions/``: the files each session leaves (``session_file``), derived."""
        return os.path.join(self.dir, STATE_DIR, SESSION_STATE)

    def session_file(self, session: str, kind: str) -> str:
        """``state/sessions/<session>.<kind>``: one of a session's files (a kind of ``SESSION_KINDS``;
        ``session`` a file-safe id, ``identity.safe_session_id``)."""
        return os.path.join(self.dir, STATE_DIR, SESSION_STATE, f"{session}.{kind}")

    @property
    def root_record(self) -> str:
        return os.path.join(self.dir, STATE_DIR, ROOT_RECORD)

    @property
    def team(self) -> str:
        """``<checkout>/.claude/keeper/team.md``: the team's memory, committed with the code."""
        return os.path.join(self.checkout, TEAM_DIR, TEAM_FILE)

    @property
    def lock(self) -> str:
        return os.path.join(self.dir, LOCK_FILE)

    @property
    def sync_record(self) -> str:
        return os.path.join(self.dir, STATE_DIR, PROJECT_SYNC)

    @property
    def index(self) -> str:
        return os.path.join(self.dir, STATE_DIR, INDEX_FILE)

    @property
    def index_files(self) -> list[str]:
        """The index's snapshot (first: gone before the index it was taken from), the index and the
        files SQLite keeps beside it while it works."""
        snapshot = os.path.join(self.dir, STATE_DIR, INDEX_SNAPSHOT)
        return [snapshot, *(self.index + suffix for suffix in ("", "-wal", "-shm", "-journal"))]

    @property
    def owned_lines(self) -> str:
        return os.path.join(self.dir, STATE_DIR, OWNED_LINES)

    @property
    def removed(self) -> str:
        return os.path.join(self.dir, STATE_DIR, REMOVED)

    @property
    def trash(self) -> str:
        return trash_dir(self.id)
