"""One sync: fetch the remote, merge this machine's memory with it by Keeper's rules, push, write back.

The store is the source of truth; the repository (``<root>/sync/repo.git``, bare, so there is no
work tree to leave dirty or half-merged) is derived. A run, under the sync lock:

1. fetches the remote's ``main`` (one line within 15 s when it cannot be reached);
2. merges, file by file, the remote's version, each local copy's version (redacted) and the
   version that copy had at its last sync (its base, a commit): memory.md through ``merge3``;
   session files by name (names carry their machine, so two machines never collide; a file both
   sides changed is kept twice, never overwritten); what one side deleted since the base stays
   deleted;
3. commits the result on top of the remote (never a force, never a rewrite: a remote with a
   history of its own is merged as unrelated history), scans what would leave the machine for a
   secret and refuses the push naming the file and line, and pushes; a rejected push (another
   machine was faster) starts again from the fetch, a few times at most;
4. lands the result in the store through the one landing path (``keeper.exchange.landing``, as
   ``keeper import`` does), each copy's folder under its lock, merged once more with what each file
   holds now against what this copy sent, so a save made during the sync and a local line that
   redaction changed both stay as they are; then records the commit as each copy's base.

A run killed at any point leaves the store whole and the next run completes: until step 4
records a base, the next run merges from the old one, and merging twice gives the same result.
"""

from __future__ import annotations

import os
import time

from keeper import redact
from keeper.errors import KeeperError
from keeper.exchange import kinds, landing, removed, sessions
from keeper.store import paths, projects, provenance, removals
from keeper.store.fsutil import atomic_write, ensure_dir, project_lock, read_json, read_text
from keeper.sync import git, mirror, remote, scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BRANCH = "refs/heads/main"
FETCHED = "refs/keeper/remote"
HEAD = "refs/keeper/synced"
RESCUE = "refs/keeper/rescue/"
ATTEMPTS = 5
LOCK_WAIT = 120.0


class Busy(KeeperError):
    """Another sync holds the lock (a background run does not wait for it)."""


def busy() -> bool:
    """Whether a sync is running now."""
    from filelock import FileLock, Timeout

    lock = FileLock(lock_path(), timeout=0, mode=0o600)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False


class Result:
    """What a sync did, for the command line and the status file."""

    def __init__(self) -> None:
        self.pushed = False
        self.commit: str | None = None
        self.received: list[str] = []  # store files written from the remote
        self.sent: list[str] = []  # repository files this machine changed
        self.removed: list[str] = []  # store files moved to this machine's trash by a recorded removal
        self.notes: list[str] = []  # what the sync found about the remote's history, one line each
        self.held: list[str] = []  # session files not sent: their names look like they hold a secret (shown redacted)
        self.projects = 0

    def note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def absorb(self, earlier: Result) -> None:
        """Add what an earlier run of the same sync did (a queued follow-up ran after it)."""
        self.received = earlier.received + [p for p in self.received if p not in earlier.received]
        self.sent = sorted({*earlier.sent, *self.sent})
        self.removed = earlier.removed + self.removed
        self.notes = earlier.notes + [n for n in self.notes if n not in earlier.notes]
        self.held = sorted({*earlier.held, *self.held})
        self.pushed = self.pushed or earlier.pushed

    def as_dict(self) -> dict[str, Any]:
        return {
            "pushed": self.pushed,
            "commit": self.commit,
            "received": self.received,
            "sent": self.sent,
            "removed": self.removed,
            "notes": self.notes,
            "held": self.held,
            "projects": self.projects,
        }

    def problem(self) -> str | None:
        """What the person must fix before everything is sent: files held back, named (redacted)."""
        if not self.held:
            return None
        return (
            f"held back {', '.join(self.held)}: a file name that looks like it holds a secret (a token, key or "
            "password) is not sent; the rest was synced. Rename that file (keep .md at the end), then run keeper sync"
        )

    def lines(self, url: str) -> list[str]:
        if not (self.received or self.sent or self.removed or self.notes):
            return [f"Up to date with {remote.shown(url)} ({self.projects} project(s))."]
        out = [
            f"Synced with {remote.shown(url)}: sent {len(self.sent)} file(s), received {len(self.received)}"
            + (f", moved {len(self.removed)} to the trash" if self.removed else "")
            + "."
        ]
        out += [f"  {line}" for line in self.notes]
        out += _listed("+", self.received)
        if self.removed:
            out.append("  removed on another machine (keeper restore brings them back here):")
            out += _listed("-", self.removed)
        return out


def _listed(mark: str, names: list[str]) -> list[str]:
    out = [f"  {mark} {name}" for name in names[:20]]
    if len(names) > 20:
        out.append(f"  … and {len(names) - 20} more")
    return out


def repo_path() -> str:
    return os.path.join(paths.sync_dir(), paths.SYNC_REPO)


def lock_path() -> str:
    return os.path.join(paths.sync_dir(), paths.SYNC_LOCK)


def _open_repo() -> git.Repo:
    """Keeper's repository, made on first use and put right after a killed run: stale git lock files
    are removed (the sync lock is held, so no other Keeper git runs here); a repository git no
    longer reads is moved aside whole (its commits stay reachable there) and made anew."""
    path = repo_path()
    repo = git.Repo(path)
    if not os.path.isfile(os.path.join(path, "HEAD")):
        repo.init()
        return repo
    for folder, _, names in os.walk(path):
        for name in names:
            if name.endswith(".lock"):
                try:
                    os.remove(os.path.join(folder, name))
                except OSError:
                    pass
    code, _, _ = repo.attempt(["rev-parse", "--git-dir"])
    if code != 0:
        aside = f"{path}.broken-{time.strftime('%Y%m%d-%H%M%S')}"
        os.replace(path, aside)
        repo.init()
    return repo


def _blob_id(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's own object id


class _Side:
    """One copy's files as the repository would hold them: ``tree path: bytes``, redacted.

    A file whose ``(mtime, size)`` is what it was when its redacted form was last the base's blob
    is taken from the base without reading or redacting it again (``cache``: store path →
    ``[mtime_ns, size, blob id]``), so a sync with nothing new costs a stat per file.
    """

    def __init__(
        self,
        copy: mirror.Copy,
        machine: str,
        patterns: list[str],
        base: dict[str, str],
        blobs: dict[str, bytes],
        cache: dict[str, Any],
    ) -> None:
        self.copy = copy
        self.files: dict[str, bytes] = {}
        self.local: dict[str, str] = {}  # tree path: store path
        self.held: list[str] = []  # session files held back: a secret in the name (shown redacted)
        self.kept: list[bytes] = []  # their texts, redacted: held here still, so no removal
        self._args = (patterns, base, blobs, cache)
        for kind, path in paths.durable_files(copy.dir, copy.prefix):  # the store's one list of its files
            try:
                st = os.stat(path)
            except OSError:
                continue
            name = os.path.basename(path)
            if kind != paths.SESSION:
                self._add(f"{copy.prefix}/{name}", path, st)
                continue
            tree = f"{copy.prefix}/{paths.SESSIONS_DIR}/{mirror.tree_name(name, machine)}"
            hidden = scan.secret_name(tree, patterns)
            if hidden is not None:  # not sent, and so neither removed elsewhere nor trashed here
                self.held.append(hidden)
                text = read_text(path, exact=True)
                self.kept += [] if text is None else [redact.redact(text, patterns).encode("utf-8", "surrogateescape")]
                continue
            self._add(tree, path, st)

    def _add(self, tree: str, path: str, st: os.stat_result) -> None:
        patterns, base, blobs, cache = self._args
        stamp = [st.st_mtime_ns, st.st_size]
        hit = cache.get(path)
        blob = hit[2] if isinstance(hit, list) and len(hit) == 3 and hit[:2] == stamp else None
        if isinstance(blob, str) and base.get(tree) == blob and blob in blobs:
            self.files[tree] = blobs[blob]
            self.local[tree] = path
            return
        text = read_text(path, exact=True)
        if text is None:
            return
        data = redact.redact(text, patterns).encode("utf-8", "surrogateescape")
        self.files[tree] = data
        self.local[tree] = path
        cache[path] = [*stamp, _blob_id(data)]


def _cache_file() -> str:
    return os.path.join(paths.sync_dir(), paths.SYNC_EXPORTS)


def _save_cache(cache: dict[str, Any]) -> None:
    from keeper import jsonio

    try:
        atomic_write(_cache_file(), jsonio.dumps(cache))
    except OSError:
        pass  # an optimisation: the next sync reads the files again


def _recorded(repo: git.Repo, copy: mirror.Copy, data: dict[str, Any]) -> str | None:
    """The commit this copy last synced with, if the repository still holds it."""
    if not copy.record:
        found = data.get("global_commit")
    else:
        record = projects.SyncRecord.parse(read_json(copy.record))
        # a commit recorded under another key (a project that since found its origin) is no base for this one
        found = record.commit if record.key in ("", copy.key) else None
    return repo.rev(found) if isinstance(found, str) and found else None


class _Part:
    """One copy's share of the plan: its files here, the files it had at its last sync (what tells
    a removal made here from an absence), the merge base (their common ancestor with the remote,
    when the remote's history still holds one) and the merged record of removals."""

    def __init__(
        self, side: _Side, recorded: str | None, mine: dict[str, bytes], base: dict[str, bytes] | None
    ) -> None:
        self.side, self.recorded, self.mine, self.base = side, recorded, mine, base
        self.record: removals.Record = removals.empty()
        self.trash: list[str] = []  # store files to move to this machine's trash after the write-back
        self.held = False  # its memory.md reads as no memory: its last sync stays the base (``_hold_unreadable``)
        self.said: set[str] = set()  # the Current State lines the incoming saves wrote (``owned.stated``)


def _trusted_base(repo: git.Repo, recorded: str | None, theirs: str | None, seen: dict[str, str | None]) -> str | None:
    """The commit to merge against: the one this copy last synced when the remote descends from it;
    after a rollback or a rewrite, the newest commit both histories share (None: they share none,
    or the remote is empty, and the merge is a union in which only a recorded removal removes)."""
    if recorded is None or theirs is None:
        return None
    if recorded not in seen:
        seen[recorded] = recorded if repo.is_ancestor(recorded, theirs) else repo.merge_base(recorded, theirs)
    return seen[recorded]


def _merge(theirs: dict[str, bytes], parts: list[_Part], patterns: dict[str, list[str]]) -> dict[str, bytes]:
    """The repository as it should be after this sync (see the module's help): each copy's files
    merged into the remote's by their kinds (``exchange.kinds``), then what each copy removed
    since its last sync recorded and taken out (``exchange.removed``)."""
    merged = dict(theirs)
    for part in parts:
        copy = part.side.copy
        kinds.merge_folder(merged, part.side.files, part.base or {}, patterns.get(copy.prefix, []))
        part.record = removed.noticed(
            removals.read(copy.dir),
            removals.retired(copy.dir),
            part.mine,
            part.side.files,
            theirs,
            copy.prefix,
            part.side.kept,
        )
        removed.take_out(part.record, merged, copy.prefix)
    return merged


def _fetch(repo: git.Repo, url: str) -> str | None:
    """The remote's ``main`` after a fetch (None for a remote with no commits, or whose branch was
    deleted); one line if it cannot be reached, or if it holds commits on other branches only (a
    repository of something else)."""
    extra, env = git.transport(url)
    upload = [a for a in extra if a.startswith("--upload-pack")]
    code, _, err = repo.attempt(
        ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", *upload, url, f"+{BRANCH}:{FETCHED}"],
        timeout=git.NETWORK_TIMEOUT,
        extra_env=env,
    )
    if code == 0:
        return repo.rev(FETCHED)
    said = err.decode("utf-8", "replace")
    if "couldn't find remote ref" not in said and "could not find remote ref" not in said.lower():
        raise _unreachable(url, err)
    code, out, err = repo.attempt(["ls-remote", *upload, url], timeout=git.NETWORK_TIMEOUT, extra_env=env)
    if code != 0:
        raise _unreachable(url, err)
    if out.strip():
        raise NotKeepers(_not_keepers(url))
    repo.attempt(["update-ref", "-d", FETCHED])
    return None


# What git says when the address names no repository, or one this user may not read: a wrong
# address is fixed now, not by trying later.
_NO_SUCH = ("does not appear to be a git repository", "not found", "no such", "authentication failed", "denied")


def _unreachable(url: str, err: bytes) -> KeeperError:
    """One line: why the remote could not be read, and what to do about it."""
    said = _said(err, url)
    if any(words in said.lower() for words in _NO_SUCH):
        advice = (
            "check the address and that you may read it (git init --bare PATH makes a folder one); memory stays here"
        )
    else:
        advice = "memory stays here, try later"
    return KeeperError(f"cannot reach the remote {remote.shown(url)} ({said}); {advice}")


class NotKeepers(KeeperError):
    """The remote holds a repository that is not a Keeper store; it is left as it is."""


def _not_keepers(url: str) -> str:
    return (
        f"the remote {remote.shown(url)} already holds a repository that is not a Keeper store (left unchanged); "
        "give keeper sync an empty private repository of its own (keeper sync --remote URL)"
    )


def _said(err: bytes, url: str) -> str:
    """What git said, in a few words: its first ``fatal:`` or ``error:`` line (the lines after it
    are advice, such as "Please make sure … and the repository exists."), without that prefix, and
    without the URL's credentials should git have quoted it whole."""
    from keeper import process

    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    first = next((line for line in lines if line.startswith(("fatal:", "error:"))), None)
    text = first.split(":", 1)[1].strip() if first else process.last_words(err)
    return text.replace(url, remote.shown(url)).rstrip(" .;:") or "no answer"


def _push(repo: git.Repo, url: str, commit: str) -> bool:
    """Push ``commit`` to the remote's ``main``: True, or False when the remote moved on meanwhile."""
    extra, env = git.transport(url)
    receive = [a for a in extra if a.startswith("--receive-pack")]
    code, _, err = repo.attempt(
        ["push", "--quiet", "--no-verify", *receive, url, f"{commit}:{BRANCH}"],
        timeout=git.NETWORK_TIMEOUT,
        extra_env=env,
    )
    if code == 0:
        return True
    said = err.decode("utf-8", "replace")
    if "[rejected]" in said or "non-fast-forward" in said or "fetch first" in said or "cannot lock ref" in said:
        return False
    raise KeeperError(f"cannot push to {remote.shown(url)} ({_said(err, url)}); memory stays here, try later")


def sync(url_given: str | None = None, wait: float = LOCK_WAIT) -> tuple[Result, str]:
    """Bring this machine's memory and the remote's together, and push; ``(result, remote URL)``."""
    from filelock import FileLock, Timeout

    before = remote.read()
    data = remote.proposed(url_given) if url_given else before
    url = data.get("remote")
    if not isinstance(url, str) or not url:
        raise KeeperError(
            "no remote recorded yet: make a private repository, then run keeper sync --remote URL (once per machine)"
        )
    git.check_version()
    ensure_dir(paths.sync_dir())
    lock = FileLock(lock_path(), timeout=wait, mode=0o600)
    try:
        lock.acquire()
    except Timeout:
        raise Busy(
            f"another keeper sync has been running for over {wait:.0f} s; it will finish on its own, try later"
        ) from None
    try:
        remote.write_status(last_attempt=_now())
        try:
            result = _run(url, data, new=data != before)
            if _take_queued():  # a hook asked for a sync while this one ran: one more, for what it saw
                again = _run(url, remote.read() or data)
                again.absorb(result)
                result = again
        except KeeperError as exc:
            remote.write_status(last_error=str(exc), last_error_at=_now())
            if data != before and remote.read().get("remote") != url:
                if isinstance(exc, NotKeepers):  # refused for what it holds: never recorded
                    raise KeeperError(f"{exc}; {_still(before)}") from None
                remote.accept(data)  # not reached yet is no refusal: the next keeper sync tries it again
                raise KeeperError(f"{exc}; recorded as this machine's remote, keeper sync tries it again") from None
            raise
        remote.write_status(
            last_sync=_now(),
            last_sync_epoch=time.time(),
            last_error=result.problem(),
            last_error_at=_now() if result.held else None,
            last_commit=result.commit,
            synced_with=remote.shown(url),  # the credentials stay in sync.json alone
        )
        return result, url
    finally:
        lock.release()


def _still(before: dict[str, Any]) -> str:
    """What a new ``--remote`` refused for what it holds leaves in use: the one recorded before."""
    if not before:
        return "no remote was recorded"
    return f"this machine still syncs with {remote.shown(str(before['remote']))}"


def queued_file() -> str:
    return os.path.join(paths.sync_dir(), paths.SYNC_QUEUED)


def _take_queued() -> bool:
    try:
        os.remove(queued_file())
    except OSError:
        return False
    return True


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _run(url: str, data: dict[str, Any], new: bool = False) -> Result:
    """One sync, as a plan: prepare (fetch, and each copy's files and bases), merge, commit and
    push (again from the fetch when another machine pushed first), write back. A ``new`` remote
    (``--remote``) is recorded once the fetch accepted it (``sync`` records one that could not be
    reached too; one refused for what it holds leaves the remote recorded before in use)."""
    machine = str(data.get("machine") or "local")
    repo = _open_repo()
    result = Result()
    for _ in range(ATTEMPTS):
        theirs_commit, theirs_ids, theirs, parts, patterns = _prepare(repo, url, data, machine, result, new)
        merged = _merge(theirs, parts, patterns)
        merged[mirror.MARKER] = merged.get(mirror.MARKER) or mirror.MARKER_TEXT.encode()
        outgoing = {p: d for p, d in merged.items() if theirs.get(p) != d}
        removed = [p for p in theirs if p not in merged]
        up_to_date = theirs_commit is not None and all(part.recorded == theirs_commit for part in parts)
        if not outgoing and not removed and up_to_date and not _writes(parts, merged):
            result.commit = theirs_commit
            return result
        scan.check(outgoing, patterns)
        commit = theirs_commit
        if outgoing or removed or theirs_commit is None:
            fresh = list(outgoing)  # the rest are the remote's blobs
            entries = {p: theirs_ids[p] for p in merged if p not in outgoing}
            entries.update(zip(fresh, repo.write_blobs([merged[p] for p in fresh])))
            tree = repo.write_tree(entries)
            parents = [theirs_commit] if theirs_commit else []
            previous = repo.rev(HEAD)
            if (
                previous
                and previous not in parents
                and not (theirs_commit and repo.is_ancestor(previous, theirs_commit))
                and all(part.recorded == previous for part in parts)
            ):
                # this machine's last sync, if the remote no longer holds it, stays reachable; only
                # when this merge holds its files (a push killed before the write-back recorded it
                # would claim a merge that never happened, and a later sync trusting it lose files)
                parents.append(previous)
            commit = repo.commit(tree, parents, f"keeper sync from {machine}")
            repo.run(["update-ref", HEAD, commit])
            if not _push(repo, url, commit):
                continue  # another machine pushed first: fetch and merge again
            result.pushed = True
        assert commit is not None
        result.commit = commit
        result.sent = sorted(outgoing) + sorted(removed)
        _write_back(parts, merged, machine, commit, patterns, result)
        return result
    raise KeeperError(
        f"the remote changed under every one of {ATTEMPTS} attempts (other machines syncing); run keeper sync again"
    )


def _prepare(
    repo: git.Repo, url: str, data: dict[str, Any], machine: str, result: Result, new: bool = False
) -> tuple[str | None, dict[str, str], dict[str, bytes], list[_Part], dict[str, list[str]]]:
    """Fetch the remote, refuse one that is not a Keeper store (recording a ``new`` one only once it
    is accepted), and read each copy: its files here (redacted), its last synced files and the base
    it may be merged against."""
    theirs_commit = _fetch(repo, url)
    theirs_ids = repo.ls_tree(theirs_commit)
    if theirs_commit and mirror.MARKER not in theirs_ids:
        raise NotKeepers(_not_keepers(url))
    if new:
        remote.accept(data)
    copies = mirror.local_copies(machine)
    result.projects = len(copies) - 1
    seen: dict[str, str | None] = {}
    plans: list[tuple[mirror.Copy, str | None, dict[str, str], dict[str, str] | None]] = []
    trees: dict[str | None, dict[str, str]] = {theirs_commit: theirs_ids, None: {}}
    for copy in copies:
        recorded = _recorded(repo, copy, data)
        base = _trusted_base(repo, recorded, theirs_commit, seen)
        for commit in (recorded, base):
            if commit not in trees:
                trees[commit] = repo.ls_tree(commit)
        start = copy.prefix + "/"
        mine = {p: b for p, b in trees[recorded].items() if p.startswith(start)}
        base_ids = {p: b for p, b in trees[base].items() if p.startswith(start)} if base else None
        plans.append((copy, recorded, mine, base_ids))
        if recorded is not None and base != recorded:
            result.note(_joined(url, theirs_commit, data))
    wanted = [*theirs_ids.values()] + [b for _, _, m, ids in plans for b in [*m.values(), *(ids or {}).values()]]
    blobs = repo.read_blobs(wanted)  # one read: the three versions share most of their blobs
    theirs = {p: blobs[b] for p, b in theirs_ids.items() if b in blobs}
    cache = read_json(_cache_file())
    before = len(cache), dict(cache)
    patterns: dict[str, list[str]] = {}
    parts = []
    for copy, recorded, mine, base_ids in plans:
        found = patterns.setdefault(copy.prefix, landing.patterns(_folder(copy)))
        side = _Side(copy, machine, found, mine, blobs, cache)
        mine_files = {p: blobs[b] for p, b in mine.items() if b in blobs}
        _recognise(side, mine_files, theirs)
        base_files = None if base_ids is None else {p: blobs[b] for p, b in base_ids.items() if b in blobs}
        parts.append(_Part(side, recorded, mine_files, base_files))
        result.held += [name for name in side.held if name not in result.held]
        parts[-1].held = _hold_unreadable(side, mine_files, result)
    if (len(cache), cache) != before:
        _save_cache(cache)
    return theirs_commit, theirs_ids, theirs, parts, patterns


def _recognise(side: _Side, mine: dict[str, bytes], theirs: dict[str, bytes]) -> None:
    """A session file here that the repository holds under another name (it came here by an archive,
    or went there by another machine's import) is sent under that name (``sessions.recognised``),
    so one session stays one file everywhere: the name this copy synced it under before, else the
    remote's. So is one whose name here held another text when it last synced (that file deleted
    by hand, then an archive's file landed under its free name): the text it held is removed here."""
    folder = f"{side.copy.prefix}/{paths.SESSIONS_DIR}/"
    new = {
        t: kinds.text_of(d) or ""
        for t, d in side.files.items()
        if t.startswith(folder) and theirs.get(t) != d and (t not in theirs or t in mine) and mine.get(t) != d
    }
    if not new or not any(p.startswith(folder) for files in (mine, theirs) for p in files):
        return
    held = dict.fromkeys(p for files in (mine, theirs) for p in sorted(files) if p.startswith(folder))
    texts = ((p, kinds.text_of(mine.get(p, theirs.get(p))) or "") for p in held)
    for tree, found in sessions.recognised(new, texts, taken=side.files).items():
        side.files[found] = side.files.pop(tree)
        side.local[found] = side.local.pop(tree)


def _hold_unreadable(side: _Side, mine: dict[str, bytes], result: Result) -> bool:
    """A memory.md that reads as no memory (no section left: emptied by a save cut short, or written
    in UTF-16 or with old-Mac line ends) while its last synced version held sections is sent as that
    version: read as it is, each of its items would be deleted on every machine and recorded as
    removed. The file stays as it is here, for the person to fix, and the last sync stays this copy's
    base, so that what arrived meanwhile is not taken for items the fixed file lacks."""
    memory = f"{side.copy.prefix}/{paths.MEMORY_FILE}"
    was = mine.get(memory)
    if was is None or not kinds.reads_as_no_memory(side.files.get(memory), was):
        return False
    side.files[memory] = was
    result.note(
        f"{os.path.relpath(side.local[memory], paths.data_root())} reads as no memory (empty, or not UTF-8 text "
        "with newlines): not sent and nothing removed by it; write it back as UTF-8 and run keeper sync again"
    )
    return True


def _joined(url: str, theirs: str | None, data: dict[str, Any]) -> str:
    """The one line a sync says when the remote's history no longer holds its last sync."""
    last = remote.read_status().synced_with
    if last is not None and remote.shown(last) != remote.shown(url):
        return "a new remote: this machine's memory and the remote's were merged, nothing removed"
    if theirs is None:
        return (
            "the remote's branch is gone (deleted or a new repository): this machine's memory was sent, nothing removed"
        )
    return "the remote's history was rewritten since the last sync: merged, nothing removed"


def _writes(parts: list[_Part], merged: dict[str, bytes]) -> bool:
    """Whether any store file would change."""
    claimed = {part.side.copy.prefix for part in parts}
    if any(_new_key(p, claimed) for p in merged):
        return True
    for part in parts:
        side = part.side
        for path, data in merged.items():
            if (
                path.startswith(side.copy.prefix + "/")
                and side.files.get(path) != data
                and landing.acceptable(path, data)
            ):
                return True
        if any(p not in merged for p in side.files):
            return True
        if part.record != removals.read(side.copy.dir):
            return True
    return False


def _new_key(path: str, claimed: set[str]) -> str | None:
    """The key of a project of the repository no copy here claims and this machine may hold: a
    project with no hosted origin and no pin (``local.``) is its machine's alone."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != paths.PROJECTS_DIR or f"{parts[0]}/{parts[1]}" in claimed:
        return None
    key = parts[1]
    return key if mirror.is_key(key) and not key.startswith("local.") else None


def _write_back(
    parts: list[_Part],
    merged: dict[str, bytes],
    machine: str,
    commit: str,
    patterns: dict[str, list[str]],
    result: Result,
) -> None:
    """Land the merged state in each store folder (``exchange.landing``: read as an archive is,
    merged once more with what each file holds now, against what this copy sent); record the
    commit as each copy's base."""
    from keeper import jsonio

    claimed = {part.side.copy.prefix for part in parts}
    for key in sorted({k for k in (_new_key(p, claimed) for p in merged) if k}):
        copy = mirror.Copy(key, mirror.local_dir_for(key), "", None)
        copy.record = os.path.join(copy.dir, paths.STATE_DIR, paths.PROJECT_SYNC)
        empty = _Side.__new__(_Side)
        empty.copy, empty.files, empty.local, empty.kept = copy, {}, {}, []
        parts.append(_Part(empty, None, {}, None))
        parts[-1].record = removals.loads(merged.get(removed.record_path(copy.prefix)))
    cache = read_json(_cache_file())
    for part in parts:
        copy = part.side.copy
        folder = _folder(copy)
        incoming, base, trees = _arriving(part, merged, machine, patterns.get(copy.prefix) or landing.patterns(folder))
        if copy.record and not os.path.exists(copy.record):
            # the key before the files: a run killed while they land leaves this repository's
            # memory, which the clone's first session takes over, not a project of this machine's own
            with project_lock(folder.lock):
                atomic_write(copy.record, projects.SyncRecord(copy.key).dump())

        def record_commit(copy: mirror.Copy = copy, held: bool = part.held) -> None:
            if copy.record and not held:
                record = read_json(copy.record)
                record.update({"key": copy.key, "commit": commit})
                atomic_write(copy.record, jsonio.dumps(record))

        landed = landing.land(folder, incoming, base, then=record_commit)
        for path, text in landed.written:
            result.received.append(os.path.relpath(path, paths.data_root()))
            if text.encode("utf-8", "surrogateescape") == merged.get(trees.get(path, "")):
                try:
                    st = os.stat(path)
                    cache[path] = [st.st_mtime_ns, st.st_size, _blob_id(merged[trees[path]])]
                except OSError:
                    pass
        result.removed += [os.path.relpath(p, paths.data_root()) for p in landed.trashed]
    data = read_json(paths.sync_file())
    if data.get("remote") and not any(p.held and not p.side.copy.record for p in parts):
        data["global_commit"] = commit
        atomic_write(paths.sync_file(), jsonio.dumps(data))
    _save_cache(cache)


def _folder(copy: mirror.Copy) -> paths.Project:
    """The store folder a copy lands in."""
    if copy.project is not None:
        return copy.project
    return paths.Project("", landing.GLOBAL if copy.key == mirror.GLOBAL else os.path.basename(copy.dir), copy.dir)


def _arriving(
    part: _Part, merged: dict[str, bytes], machine: str, rules: list[str]
) -> tuple[landing.Incoming, landing.Incoming, dict[str, str]]:
    """What lands in a copy's folder: the merged files that differ from what it sent (each file
    under its name here: a session file as this copy holds it, else without this machine's
    suffix), what it sent of them (the base), and each store path's tree path."""
    side, copy = part.side, part.side.copy
    texts: dict[str, str] = {}
    sent: dict[str, str] = {}
    trees: dict[str, str] = {}
    for path, data in sorted(merged.items()):
        if not path.startswith(copy.prefix + "/") or side.files.get(path) == data or not landing.acceptable(path, data):
            continue
        kind = kinds.kind(path)
        if kind == paths.SESSION:
            local = side.local.get(path)
            here = os.path.basename(local) if local else mirror.store_name(path.rsplit("/", 1)[-1], machine)
            trees[os.path.join(copy.sessions, here)] = path
        else:
            here = kind
            trees[copy.memory if kind == paths.MEMORY else provenance.record_file(copy.dir)] = path
        texts[here] = data.decode("utf-8", "surrogateescape")
        if path in side.files:
            sent[here] = side.files[path].decode("utf-8", "surrogateescape")
    memory, origins = texts.pop(paths.MEMORY, None), texts.pop(paths.PROVENANCE, None)
    gone = [os.path.relpath(side.local[p], copy.dir).replace(os.sep, "/") for p in side.files if p not in merged]
    incoming = landing.Incoming.arrived(rules, memory, texts, origins, record=part.record, gone=gone)
    base = landing.Incoming(sent.pop(paths.MEMORY, None), sent)
    return incoming, base, trees
