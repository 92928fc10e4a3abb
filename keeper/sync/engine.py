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
4. writes the result back into the store, each file atomically under its project's lock, merged
   once more with what the file holds now, so a save made during the sync and a local line that
   redaction changed both stay as they are; then records the commit as each copy's base.

A run killed at any point leaves the store whole and the next run completes: until step 4
records a base, the next run merges from the old one, and merging twice gives the same result.
"""

from __future__ import annotations

import os
import time

from keeper import redact
from keeper.errors import KeeperError
from keeper.memory.merge import merge3
from keeper.store import config, paths, provenance
from keeper.store.fsutil import atomic_write, create_new, ensure_dir, project_lock, read_json, read_text
from keeper.sync import git, mirror, remote

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
        self.projects = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "pushed": self.pushed,
            "commit": self.commit,
            "received": self.received,
            "sent": self.sent,
            "projects": self.projects,
        }

    def lines(self, url: str) -> list[str]:
        if not self.received and not self.sent:
            return [f"Up to date with {remote.shown(url)} ({self.projects} project(s))."]
        out = [f"Synced with {remote.shown(url)}: sent {len(self.sent)} file(s), received {len(self.received)}."]
        out += [f"  + {name}" for name in self.received[:20]]
        if len(self.received) > 20:
            out.append(f"  … and {len(self.received) - 20} more")
        return out


def repo_path() -> str:
    return os.path.join(paths.sync_dir(), "repo.git")


def lock_path() -> str:
    return os.path.join(paths.sync_dir(), "lock")


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
        self._args = (patterns, base, blobs, cache)
        try:
            st = os.stat(copy.memory)
        except OSError:
            st = None
        if st is not None:
            self._add(f"{copy.prefix}/{paths.MEMORY_FILE}", copy.memory, st)
        record = provenance.record_file(copy.dir)  # provenance: merged by union, never forked
        if os.path.isfile(record):
            self._add(f"{copy.prefix}/{paths.PROVENANCE_FILE}", record, os.stat(record))
        if copy.key != mirror.GLOBAL:
            try:
                entries = sorted(os.scandir(copy.sessions), key=lambda e: e.name)
            except OSError:
                entries = []
            for entry in entries:
                if not mirror.is_session(entry.name) or not entry.is_file(follow_symlinks=False):
                    continue
                tree = f"{copy.prefix}/{paths.SESSIONS_DIR}/{mirror.tree_name(entry.name, machine)}"
                self._add(tree, entry.path, entry.stat())

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
    return os.path.join(paths.sync_dir(), "exports.json")


def _save_cache(cache: dict[str, Any]) -> None:
    from keeper import jsonio

    try:
        atomic_write(_cache_file(), jsonio.dumps(cache))
    except OSError:
        pass  # an optimisation: the next sync reads the files again


def _patterns(copy: mirror.Copy) -> list[str]:
    root = copy.project.root if copy.project is not None and os.path.isdir(copy.project.root) else None
    return list(config.load(root).redact_patterns)


def _base_commit(repo: git.Repo, copy: mirror.Copy, data: dict[str, Any]) -> str | None:
    found = read_json(copy.record).get("commit") if copy.record else data.get("global_commit")
    return repo.rev(found) if isinstance(found, str) and found else None


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


class _Plan:
    """The merged repository tree, and for each copy what to write back into the store."""

    def __init__(self) -> None:
        self.tree: dict[str, bytes] = {}
        self.sides: list[tuple[_Side, dict[str, bytes | None], str | None]] = []  # side, base files, base commit


def _in(files: dict[str, bytes], prefix: str) -> dict[str, bytes]:
    start = prefix + "/"
    return {path: data for path, data in files.items() if path.startswith(start)}


def _merge(
    theirs: dict[str, bytes],
    sides: list[tuple[_Side, dict[str, bytes], str | None]],
    machine: str,
    patterns: dict[str, list[str]],
) -> dict[str, bytes]:
    """The repository as it should be after this sync (see the module's help)."""
    merged = dict(theirs)
    for side, base, _ in sides:
        rules = patterns.get(side.copy.prefix, [])
        for path in sorted(set(side.files) | set(base)):
            ours, was, now = side.files.get(path), base.get(path), merged.get(path)
            if provenance.is_record(path):
                merged[path] = provenance.merge_bytes(ours, now, rules)
                continue
            if _is_memory(path):
                if ours is None:
                    if was is not None and now == was:
                        merged.pop(path, None)  # deleted here, unchanged there
                    continue
                if now is None:
                    if was is None or ours != was:
                        merged[path] = ours
                    continue
                text = merge3(_text(was), _text(ours) or "", _text(now) or "")
                if text != _text(now):  # what leaves is redacted, the other side's lines included
                    text = redact.redact(text, rules)
                merged[path] = text.encode("utf-8", "surrogateescape")
                continue
            if ours is None:  # a session file this copy no longer holds
                if was is not None and now == was:
                    merged.pop(path, None)
                continue
            if now is None:
                if was is None or ours != was:  # new here, or changed here after the other side deleted it
                    merged[path] = ours
                continue
            if ours in (now, was):
                continue
            if now == was:
                merged[path] = ours
                continue
            stem = path[:-3]
            merged[f"{stem}-{machine}.md" if "@" in stem else f"{stem}@{machine}.md"] = ours  # both changed: keep both
    return merged


def _is_memory(path: str) -> bool:
    parts = path.split("/")
    return (parts == [mirror.GLOBAL, paths.MEMORY_FILE]) or (
        len(parts) == 3 and parts[0] == paths.PROJECTS_DIR and parts[2] == paths.MEMORY_FILE
    )


def _secret_line(path: str, data: bytes, patterns: list[str]) -> int | None:
    text = data.decode("utf-8", "replace")
    if redact.redact(text, patterns) == text:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if redact.redact(line, patterns) != line:
            return number
    return 1


def _scan(outgoing: dict[str, bytes], patterns: dict[str, list[str]]) -> None:
    """Refuse to push a file that still holds a secret: the message names the file and the line."""
    for path in sorted(outgoing):
        prefix = "/".join(path.split("/")[:2]) if path.startswith(paths.PROJECTS_DIR + "/") else mirror.GLOBAL
        line = _secret_line(path, outgoing[path], patterns.get(prefix, []))
        if line is not None:
            raise KeeperError(
                f"not pushing: {path} line {line} looks like a secret (a token, key or password); "
                "your local file is unchanged. Remove that line from the memory file, then run keeper sync again."
            )


def _fetch(repo: git.Repo, url: str) -> str | None:
    """The remote's ``main`` after a fetch (None for an empty remote); one line if it cannot be reached."""
    extra, env = git.transport(url)
    upload = [a for a in extra if a.startswith("--upload-pack")]
    code, _, err = repo.attempt(
        ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", *upload, url, f"+{BRANCH}:{FETCHED}"],
        timeout=git.NETWORK_TIMEOUT,
        extra_env=env,
    )
    if code != 0:
        said = err.decode("utf-8", "replace")
        if "couldn't find remote ref" in said or "could not find remote ref" in said.lower():
            repo.attempt(["update-ref", "-d", FETCHED])
            return None
        raise KeeperError(f"cannot reach the remote {remote.shown(url)}: {_said(err)}; memory stays here, try later")
    return repo.rev(FETCHED)


def _said(err: bytes) -> str:
    from keeper import process

    text = process.last_words(err)
    return text[len("fatal: ") :] if text.startswith("fatal: ") else text


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
    raise KeeperError(f"cannot push to {remote.shown(url)}: {_said(err)}; memory stays here, try later")


def sync(url_given: str | None = None, wait: float = LOCK_WAIT) -> tuple[Result, str]:
    """Bring this machine's memory and the remote's together, and push; ``(result, remote URL)``."""
    from filelock import FileLock, Timeout

    data = remote.record(url_given) if url_given else remote.read()
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
            result = _run(url, data)
            if _take_queued():  # a hook asked for a sync while this one ran: one more, for what it saw
                result = _run(url, remote.read() or data)
        except KeeperError as exc:
            remote.write_status(last_error=str(exc), last_error_at=_now())
            raise
        remote.write_status(last_sync=_now(), last_sync_epoch=time.time(), last_error=None, last_commit=result.commit)
        return result, url
    finally:
        lock.release()


def queued_file() -> str:
    return os.path.join(paths.sync_dir(), "queued")


def _take_queued() -> bool:
    try:
        os.remove(queued_file())
    except OSError:
        return False
    return True


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _run(url: str, data: dict[str, Any]) -> Result:
    machine = str(data.get("machine") or "local")
    repo = _open_repo()
    result = Result()
    for _ in range(ATTEMPTS):
        theirs_commit = _fetch(repo, url)
        theirs_ids = repo.ls_tree(theirs_commit)
        if theirs_commit and mirror.MARKER not in theirs_ids:
            raise KeeperError(
                f"the remote {remote.shown(url)} already holds a repository that is not a Keeper store; "
                "give keeper sync an empty private repository of its own (keeper sync --remote URL)"
            )
        copies = mirror.local_copies()
        result.projects = len(copies) - 1
        patterns: dict[str, list[str]] = {}
        bases: list[tuple[dict[str, str], str | None]] = []
        trees: dict[str | None, dict[str, str]] = {theirs_commit: theirs_ids}
        for copy in copies:
            base_commit = _base_commit(repo, copy, data)
            if base_commit not in trees:
                trees[base_commit] = repo.ls_tree(base_commit)
            ids = {p: b for p, b in trees[base_commit].items() if p.startswith(copy.prefix + "/")}
            bases.append((ids, base_commit))
        wanted = list(theirs_ids.values()) + [b for ids, _ in bases for b in ids.values()]
        blobs = repo.read_blobs(wanted)
        theirs = {p: blobs[b] for p, b in theirs_ids.items() if b in blobs}
        cache = read_json(_cache_file())
        before = len(cache), dict(cache)
        sides: list[tuple[_Side, dict[str, bytes], str | None]] = []
        for copy, (ids, base_commit) in zip(copies, bases):
            found = patterns.setdefault(copy.prefix, _patterns(copy))
            side = _Side(copy, machine, found, ids, blobs, cache)
            sides.append((side, {p: blobs[b] for p, b in ids.items() if b in blobs}, base_commit))
        if (len(cache), cache) != before:
            _save_cache(cache)
        merged = _merge(theirs, sides, machine, patterns)
        merged[mirror.MARKER] = merged.get(mirror.MARKER) or mirror.MARKER_TEXT.encode()
        outgoing = {p: d for p, d in merged.items() if theirs.get(p) != d}
        removed = [p for p in theirs if p not in merged]
        up_to_date = all(commit == theirs_commit for _, _, commit in sides) and theirs_commit is not None
        writes = _writes(sides, merged, machine)
        if not outgoing and not removed and up_to_date and not writes:
            result.commit = theirs_commit
            return result
        _scan(outgoing, patterns)
        commit = theirs_commit
        if outgoing or removed or theirs_commit is None:
            fresh = [p for p, d in merged.items() if theirs.get(p) != d]  # the rest are the remote's blobs
            entries = {p: theirs_ids[p] for p in merged if p not in fresh}
            entries.update(zip(fresh, repo.write_blobs([merged[p] for p in fresh])))
            tree = repo.write_tree(entries)
            parents = [theirs_commit] if theirs_commit else []
            previous = repo.rev(HEAD)
            if (
                previous
                and previous not in parents
                and not (theirs_commit and repo.is_ancestor(previous, theirs_commit))
            ):
                parents.append(previous)  # this machine's last sync, if the remote no longer holds it
            commit = repo.commit(tree, parents, f"keeper sync from {machine}")
            repo.run(["update-ref", HEAD, commit])
            if not _push(repo, url, commit):
                continue  # another machine pushed first: fetch and merge again
            result.pushed = True
        assert commit is not None
        result.commit = commit
        result.sent = sorted(outgoing) + sorted(removed)
        result.received = _write_back(sides, merged, machine, commit, cache)
        _save_cache(cache)
        return result
    raise KeeperError(
        f"the remote changed under every one of {ATTEMPTS} attempts (other machines syncing); run keeper sync again"
    )


def _writes(sides: list[tuple[_Side, dict[str, bytes], str | None]], merged: dict[str, bytes], machine: str) -> bool:
    """Whether any store file would change."""
    claimed = {side.copy.prefix for side, _, _ in sides}
    if any(p.startswith(paths.PROJECTS_DIR + "/") and "/".join(p.split("/")[:2]) not in claimed for p in merged):
        return True
    for side, _, _ in sides:
        for path, data in merged.items():
            if path.startswith(side.copy.prefix + "/") and side.files.get(path) != data:
                return True
        if any(p not in merged for p in side.files):
            return True
    return False


def _write_back(
    sides: list[tuple[_Side, dict[str, bytes], str | None]],
    merged: dict[str, bytes],
    machine: str,
    commit: str,
    cache: dict[str, Any],
) -> list[str]:
    """Bring each store folder to the merged state, merging with what each file holds now; record
    the commit as its base. Returns the store files written."""
    from keeper import jsonio

    written: list[str] = []
    claimed = {side.copy.prefix for side, _, _ in sides}
    new_copies = [
        mirror.Copy(prefix.split("/", 1)[1], mirror.local_dir_for(prefix.split("/", 1)[1]), "", None)
        for prefix in sorted({"/".join(p.split("/")[:2]) for p in merged if p.startswith(paths.PROJECTS_DIR + "/")})
        if prefix not in claimed and mirror.is_key(prefix.split("/", 1)[1])
    ]
    for copy in new_copies:
        copy.record = os.path.join(copy.dir, paths.STATE_DIR, paths.PROJECT_SYNC)
        empty = _Side.__new__(_Side)
        empty.copy, empty.files, empty.local = copy, {}, {}
        sides.append((empty, {}, None))
    for side, _, _ in sides:
        copy = side.copy
        lock = os.path.join(copy.dir, paths.LOCK_FILE) if copy.key != mirror.GLOBAL else os.path.join(copy.dir, ".lock")
        mine = {p: d for p, d in merged.items() if p.startswith(copy.prefix + "/")}
        with project_lock(lock):
            for path, content in sorted(mine.items()):
                exported = side.files.get(path)
                if exported == content:
                    continue
                target = side.local.get(path) or _store_path(copy, path, machine)
                if target is None:
                    continue
                current = read_text(target, exact=True)
                new = content.decode("utf-8", "surrogateescape")
                if current is not None and exported is not None and _is_memory(path):
                    new = merge3(exported.decode("utf-8", "surrogateescape"), current, new)
                new = provenance.merge(current, new) if provenance.is_record(path) else new
                if current == new:
                    continue
                if current is None:
                    if not create_new(target, new, durable=_is_memory(path)):
                        continue
                else:
                    atomic_write(target, new)
                if new.encode("utf-8", "surrogateescape") == content:
                    try:
                        st = os.stat(target)
                        cache[target] = [st.st_mtime_ns, st.st_size, _blob_id(content)]
                    except OSError:
                        pass
                if _is_memory(path) and copy.key != mirror.GLOBAL:
                    _own_what_came(copy, current, new)
                written.append(os.path.relpath(target, paths.data_root()))
            for path in side.files:
                if path not in mine and not _is_memory(path):
                    _to_trash(copy, side.local[path])
            if copy.record:
                record = read_json(copy.record)
                record.update({"key": copy.key, "commit": commit})
                atomic_write(copy.record, jsonio.dumps(record))
    data = read_json(paths.sync_file())
    if data.get("remote"):
        data["global_commit"] = commit
        atomic_write(paths.sync_file(), jsonio.dumps(data))
    return written


def _own_what_came(copy: mirror.Copy, before: str | None, after: str) -> None:
    """Keeper's lines that came from another machine stay Keeper's here (``state/memory.json``), so
    the next save here replaces that Current State and rolls those Recent Context lines out, as it
    would have done with its own."""
    from keeper import jsonio
    from keeper.markdown import Document, bare
    from keeper.memory.document import LAST_UPDATED, SECTIONS

    path = os.path.join(copy.dir, paths.STATE_DIR, paths.OWNED_LINES)
    owned = read_json(path)
    changed = False
    state = Document.parse(after).find(SECTIONS["state"][1])
    old_state = Document.parse(before or "").find(SECTIONS["state"][1])
    lines = [bare(line) for line in state.lines] if state is not None else []
    old_lines = [bare(line) for line in old_state.lines] if old_state is not None else []
    start = next((i for i, line in enumerate(lines) if line.startswith(f"- {LAST_UPDATED}")), None)
    if start is not None and lines[start] not in old_lines:  # another machine's newer Current State
        end = start + 1
        while end < len(lines) and lines[end].strip() and lines[end][:2] in ("- ", "  "):
            end += 1
        owned["state"], changed = lines[start:end], True
    recent = Document.parse(after).find(SECTIONS["recent"][1])
    old_recent = Document.parse(before or "").find(SECTIONS["recent"][1])
    had = {bare(line) for line in old_recent.lines} if old_recent is not None else set()
    mine = owned.get("recent") if isinstance(owned.get("recent"), list) else []
    assert isinstance(mine, list)
    for line in [bare(x) for x in recent.lines] if recent is not None else []:
        if line not in had and len(line) > 13 and line[2:6].isdigit() and line[12:14] == ": ":
            mine.append({"session": "sync", "line": line})
            changed = True
    if changed:
        mine.sort(key=lambda r: str(r.get("line", ""))[2:12] if isinstance(r, dict) else "", reverse=True)
        owned["recent"] = mine
        atomic_write(path, jsonio.dumps(owned))


def _store_path(copy: mirror.Copy, tree_path: str, machine: str) -> str | None:
    rest = tree_path[len(copy.prefix) + 1 :]
    if rest in (paths.MEMORY_FILE, paths.PROVENANCE_FILE):
        return os.path.join(copy.dir, rest)
    folder, _, name = rest.partition("/")
    if folder == paths.SESSIONS_DIR and mirror.is_session(name):
        return os.path.join(copy.sessions, mirror.store_name(name, machine))
    return None


def _to_trash(copy: mirror.Copy, path: str) -> None:
    """A session file another machine deleted: moved to the trash, restorable, never destroyed."""
    project_id = os.path.basename(copy.dir)
    folder = os.path.join(paths.trash_dir(project_id), "synced-away")
    try:
        ensure_dir(folder)
        os.replace(path, os.path.join(folder, os.path.basename(path)))
    except OSError:
        pass
