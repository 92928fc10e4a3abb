"""The remote ``keeper sync`` uses, this machine's id, and how the last sync went.

The remote and the machine id are machine-local (``<root>/sync.json``, never synced): another
machine may reach the same repository by another URL. The last run's outcome is derived
(``<root>/sync/status.json``): lost, it only means status shows no last sync until the next one.
A URL is shown without credentials wherever Keeper prints or logs it.
"""

from __future__ import annotations

import os

from keeper import jsonio
from keeper.errors import KeeperError
from keeper.records import Record
from keeper.store import paths
from keeper.store.fsutil import atomic_write, read_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def read() -> dict[str, Any]:
    """``{"remote": URL, "machine": ID}`` as recorded; ``{}`` before the first ``--remote``."""
    try:
        data = read_json(paths.sync_file())
    except OSError:  # an unusable store: status and doctor say so elsewhere
        return {}
    return data if isinstance(data.get("remote"), str) and data["remote"] else {}


def configured() -> bool:
    """Whether a remote is recorded: one stat, for the hooks."""
    try:
        os.stat(paths.sync_file())
    except (OSError, ValueError):
        return False
    return True


def check_url(url: str) -> str:
    """The URL as git should get it (a local folder made absolute); KeeperError for one git must not run."""
    url = url.strip()
    if not url:
        raise KeeperError("--remote needs a URL: a private repository you can push to (or a folder with a bare one)")
    if url.startswith("-") or "\n" in url or "\0" in url:
        raise KeeperError(f"{url!r} is not a repository URL")
    scheme = url.split("::", 1)[0].lower() if "::" in url else ""
    if scheme in ("ext", "fd"):
        raise KeeperError(f"keeper sync does not use the {scheme}:: transport; give an https, ssh or file URL")
    if "://" not in url and not _scp_like(url):
        return os.path.abspath(os.path.expanduser(url))
    return url


def _scp_like(url: str) -> bool:
    """``user@host:path`` or ``host:path`` (and not a Windows drive such as ``C:\\x``)."""
    head, sep, _ = url.partition(":")
    return bool(sep) and len(head) > 1 and "/" not in head and "\\" not in head


def proposed(url: str) -> dict[str, Any]:
    """What ``sync.json`` becomes once ``url`` is accepted as the remote (nothing is written yet):
    ``url`` replacing any other, the machine id kept (or made)."""
    data = read_json(paths.sync_file())
    data["remote"] = check_url(url)
    if not isinstance(data.get("machine"), str) or not data["machine"]:
        data["machine"] = os.urandom(3).hex()
    return data


def accept(data: dict[str, Any]) -> None:
    """Record the remote and machine id of ``data`` (from ``proposed``), once the remote was
    accepted: reachable, and Keeper's or empty. The rest of ``sync.json`` is kept as it is now."""
    current = read_json(paths.sync_file())
    current.update(remote=data["remote"], machine=data["machine"])
    atomic_write(paths.sync_file(), jsonio.dumps(current))


def record(url: str) -> dict[str, Any]:
    """Record ``url`` as this store's remote now, unchecked (replacing any other); keep the machine
    id. ``keeper sync --remote`` does not: it records a remote only once accepted."""
    data = proposed(url)
    accept(data)
    return data


def shown(url: str) -> str:
    """A URL without the credentials it may carry (``https://user:token@host`` → ``https://host``)."""
    if "://" in url:
        scheme, rest = url.split("://", 1)
        host, slash, path = rest.partition("/")
        return f"{scheme}://{host.rsplit('@', 1)[-1]}{slash}{path}"
    return url


def clears_everywhere(project: paths.Project, what: str) -> str | None:
    """What ``keeper clear`` or ``/keeper:clear`` means when the project syncs: it is recorded and
    travels to every machine (None when the project does not sync)."""
    data = read()
    if not data or not os.path.exists(project.sync_record):
        return None
    scope = "the project" if what == "all" else "these session files"
    return (
        f"'{project.name}' syncs with {shown(str(data['remote']))}: this clears {scope} on every machine "
        "syncing with it (each keeps a restorable copy in its trash; keeper restore here brings it back everywhere)."
    )


def status_file() -> str:
    return os.path.join(paths.sync_dir(), paths.SYNC_STATUS)


class Status(Record):
    """How the last runs went (``sync/status.json``, derived): when one was last tried, the last
    success (``last_sync``, also as ``last_sync_epoch``: to the fraction, so a file the sync wrote
    itself is not waiting), the commit it left and the remote it synced with, and the last error
    (None once a sync succeeds). A field missing or of another type is None."""

    __slots__ = (
        "last_attempt",
        "last_commit",
        "last_error",
        "last_error_at",
        "last_sync",
        "last_sync_epoch",
        "synced_with",
    )

    def __init__(self) -> None:
        self.last_attempt: str | None = None
        self.last_commit: str | None = None
        self.last_error: str | None = None
        self.last_error_at: str | None = None
        self.last_sync: str | None = None
        self.last_sync_epoch: float | None = None
        self.synced_with: str | None = None

    def update(self, **fields: object) -> None:
        """Set the fields named (a name of no field is a bug: AttributeError)."""
        for name, value in fields.items():
            setattr(self, name, value)

    @classmethod
    def parse(cls, data: object) -> Status:
        found = data if isinstance(data, dict) else {}
        status = cls()
        status.update(**{name: found[name] for name in cls.__slots__ if isinstance(found.get(name), str)})
        epoch = found.get("last_sync_epoch")
        status.last_sync_epoch = (
            float(epoch) if isinstance(epoch, (int, float)) and not isinstance(epoch, bool) else None
        )
        return status

    def dump(self) -> str:
        """The fields that are set (a cleared error is left out)."""
        return jsonio.dumps({name: getattr(self, name) for name in self.__slots__ if getattr(self, name) is not None})


def read_status() -> Status:
    return Status.parse(read_json(status_file()))


def write_status(**values: object) -> None:
    """Set ``values`` in the last run's status; a failure to write it is not the sync's failure."""
    data = read_status()
    data.update(**values)
    try:
        atomic_write(status_file(), data.dump())
    except OSError:
        pass
