"""The store's format: stores that 0.1.0, 0.2.0, 0.3.0 and 0.4.0 really wrote are migrated once, under the
store's lock, with a backup; a store of a newer format is read and never changed."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

import pytest

from keeper.cli import main
from keeper.errors import KeeperError
from keeper.hooks import entry
from keeper.memory.items import key
from keeper.store import migrate, paths
from tests.conftest import REPO

STORES = REPO / "tests" / "fixtures" / "stores"  # made by tests/fixtures/stores/make.py from the releases' commits
PROJECT_ID = "invoices-019c8680a8"
RELEASES = ["0.1.0", "0.2.0", "0.3.0", "0.4.0"]
# The format each release's store is in: 0.3.0's release commit kept no format.json (the registry came
# minutes after it, still called 0.3.0), though its saves wrote state/removed.json already.
FORMAT = {"0.1.0": 0, "0.2.0": 0, "0.3.0": 0, "0.4.0": 2}
BOTH = ["removal_records", "session_state_folder"]
BACKED_UP = {"0.1.0": BOTH, "0.2.0": BOTH, "0.3.0": BOTH[1:], "0.4.0": []}  # what each migration changed


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def store(isolated: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = tmp_path / "store"
    shutil.copytree(STORES / request.param, root)
    return root


def sessions_of(store: Path) -> list[str]:
    """The sessions whose own files the release kept in ``state/`` (a manual save's is named by its day)."""
    return sorted(p.stem for p in (store / "projects" / PROJECT_ID / "state").glob("*.tally"))


@pytest.mark.parametrize("store", RELEASES, indirect=True)
def test_a_store_of_an_earlier_release_is_migrated_once_with_a_backup_and_reads_as_before(
    store: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    release = request.node.callspec.params["store"]
    before, sessions = files(store), sessions_of(store)
    assert migrate.store_format(str(store)).number == FORMAT[release]
    assert main(["status"]) == 0  # any command brings the store up to date first
    capsys.readouterr()
    found = migrate.store_format(str(store))
    assert (found.number, found.applied) == (len(migrate.MIGRATIONS), [name for name, _ in migrate.MIGRATIONS])
    removed = json.loads((store / "projects" / PROJECT_ID / "state" / "removed.json").read_text())["keys"]
    assert list(removed) == [key("Refunds use the old rounding")]  # resolved by the release's second session
    manifests = [json.loads((b / "manifest.json").read_text()) for b in sorted(store.glob("backups/*"))]
    assert [m["migration"] for m in manifests] == BACKED_UP[release]
    state = f"projects/{PROJECT_ID}/state/"
    moved = {f"{state}{s}.{k}": f"{state}sessions/{s}.{k}" for s in sessions for k in ("json", "tally")}
    moved.update({f"{state}{s}.{k}": f"{state}sessions/{s}.{k}" for s in sessions[:2] for k in ("start", "end")})
    if "session_state_folder" in BACKED_UP[release]:
        assert manifests[-1] == {"migration": "session_state_folder", "changed": [], "created": [], "moved": moved}
    if "removal_records" in BACKED_UP[release]:
        assert manifests[0] == {
            "migration": "removal_records",
            "changed": [],
            "created": [f"projects/{PROJECT_ID}/state/removed.json"],
            "moved": {},
        }
    after = files(store)
    renamed = {moved.get(name, name): content for name, content in before.items() if name != "format.json"}
    assert {name: after[name] for name in renamed} == renamed  # memory, records untouched; session files moved
    assert main(["projects", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["id"] == PROJECT_ID and listed["sessions"] == 3
    assert migrate.upgrade(str(store)) == []  # once: the next command finds nothing to do
    assert len(list(store.glob("backups/*"))) == len(BACKED_UP[release])


@pytest.mark.skipif(sys.platform != "linux", reason="the fixture's project id hashes its Linux path")
@pytest.mark.parametrize("store", RELEASES, indirect=True)
def test_the_first_session_after_the_upgrade_is_given_what_the_release_saved(store: Path, isolated: Path) -> None:
    import subprocess

    project = Path("/tmp/keeper-fixture/invoices")  # where tests/fixtures/stores/make.py ran the release
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    start = {"session_id": "s-after", "cwd": str(project), "source": "startup"}
    reply = entry.handle("session-start", json.dumps(start).encode(), str(project))
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert "Amounts round half-even" in context and "PDF export is missing" in context
    assert "Refunds use the old rounding" not in context.split("Known Issues")[-1]
    assert migrate.store_format(str(store)).number == len(migrate.MIGRATIONS)
    tally = store / "projects" / PROJECT_ID / "state" / "sessions" / "fixture-session-2.tally"
    counted = tally.read_bytes()  # the release's session, moved with its state, counts on
    use = {"session_id": "fixture-session-2", "cwd": str(project), "tool_name": "Bash"}
    assert entry.handle("post-tool-use", json.dumps(use).encode(), str(project)) == {}
    assert tally.read_bytes() == counted + b"u"


@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
def test_a_migration_changes_a_file_only_after_keeping_it(store: Path) -> None:
    path = store / "projects" / PROJECT_ID / "state" / "removed.json"
    path.write_text(json.dumps({"keys": {"an item removed by hand": "2026-01-02"}}))
    mine = path.read_bytes()
    done, moved = migrate.upgrade(str(store))
    assert done == "removal_records: 1 removed item recorded from the session files"
    assert moved == "session_state_folder: 10 session state files moved into state/sessions/"
    [backup] = (store / "backups").glob("removal_records-*")
    assert (backup / "projects" / PROJECT_ID / "state" / "removed.json").read_bytes() == mine
    assert json.loads((backup / "manifest.json").read_text())["changed"] == [
        f"projects/{PROJECT_ID}/state/removed.json"
    ]
    assert set(json.loads(path.read_text())["keys"]) == {"an item removed by hand", key("Refunds use the old rounding")}


@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
def test_migrations_run_under_the_stores_lock(store: Path) -> None:
    from filelock import FileLock

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with FileLock(str(store / ".lock")):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        with pytest.raises(KeeperError, match="another Keeper process has held"):
            migrate.upgrade(str(store), timeout=0.2)
        assert not (store / "format.json").exists() and not (store / "backups").exists()
    finally:
        release.set()
        holder.join()
    assert migrate.upgrade(str(store)) and (store / "format.json").exists()


@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
def test_a_store_of_a_newer_format_is_read_and_never_changed_and_doctor_says_to_upgrade(
    store: Path, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    (store / "format.json").write_text(json.dumps({"format": 99, "applied": ["from_the_future"]}))
    before = files(store)
    assert main(["projects", "--json"]) == 0
    [listed] = [p for p in json.loads(capsys.readouterr().out) if p["id"] == PROJECT_ID]
    assert listed["decisions"] == 2 and listed["open_issues"] == 1  # read as it is
    start = {"session_id": "s1", "cwd": str(isolated), "source": "startup"}
    assert entry.handle("session-start", json.dumps(start).encode()) is not None
    after = files(store)
    assert {name: after.get(name) for name in before} == before and not (store / "backups").exists()
    assert not (store / "projects" / PROJECT_ID / "state" / "removed.json").exists()
    assert main(["doctor", "--json"]) == 1
    [check] = [c for c in json.loads(capsys.readouterr().out) if c["check"] == "format"]
    assert check["ok"] is False and "store format 99, written by a newer Keeper" in check["detail"]
    assert "claude plugin update keeper@keeper" in check["fix"]


def test_the_format_a_session_start_checks_without_the_migrations_is_theirs() -> None:
    """SessionStart reads format.json itself and imports the migrations only when it is behind."""
    assert len(migrate.MIGRATIONS) == paths.FORMAT


@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
def test_a_session_start_brings_a_store_one_migration_behind_up_to_date(store: Path, isolated: Path) -> None:
    first = migrate.MIGRATIONS[0][0]
    (store / "format.json").write_text(json.dumps({"format": 1, "applied": [first], "keeper": "0.3.0"}))
    start = {"session_id": "s1", "cwd": str(isolated), "source": "startup"}
    assert entry.handle("session-start", json.dumps(start).encode()) is not None
    found = migrate.store_format(str(store))
    assert found.number == len(migrate.MIGRATIONS) and found.applied == [name for name, _ in migrate.MIGRATIONS]
    assert (store / "projects" / PROJECT_ID / "state" / "sessions").is_dir()


def test_a_new_store_starts_in_this_codes_format(isolated: Path, tmp_path: Path) -> None:
    assert main(["save", "--decision", "Use FTS5"]) == 0
    found = migrate.store_format(str(tmp_path / "store"))
    number, applied = found.number, found.applied
    assert number == len(migrate.MIGRATIONS) and applied == [name for name, _ in migrate.MIGRATIONS]
    assert not (tmp_path / "store" / "backups").exists()  # nothing of an earlier release to move


@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
def test_session_files_move_apart_from_keepers_records_and_never_over_a_newer_one(store: Path) -> None:
    state = store / "projects" / PROJECT_ID / "state"
    (state / "sessions").mkdir()
    newer = b'{"file": "2026-11-27_0900.md"}'  # the session went on under the new code before the migration ran
    (state / "sessions" / "fixture-session-2.json").write_bytes(newer)
    for name in ("sync.remote.json", "index.sqlite3", "hooks.stats.1", "removals.json", "x.json.tmp", "a.b.tally"):
        (state / name).write_bytes(b"{}")
    records = {
        p.name: p.read_bytes()
        for p in state.iterdir()
        if p.is_file() and not p.name.startswith(("fixture-", "manual-"))
    }
    assert migrate.upgrade(str(store))[1] == (
        "session_state_folder: 9 session state files moved into state/sessions/; "
        "1 left in state/, a newer one being in state/sessions/"
    )
    assert (state / "sessions" / "fixture-session-2.json").read_bytes() == newer
    left = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}
    assert set(left) == {*records, "removed.json", "fixture-session-2.json"}  # the one a newer one stands for
    assert {name: left[name] for name in records} == records
    assert (state / "sessions" / "manual-20261126.tally").exists()
    before = files(store)
    again = migrate.Backup(str(store), "session_state_folder")
    assert migrate.session_state_folder(str(store), again).startswith("1 left")  # idempotent: nothing more moves
    assert files(store) == before


@pytest.mark.skipif(sys.platform == "win32", reason="Windows refuses to rename a file another process holds open")
@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
def test_a_tally_appended_by_a_hook_of_the_old_release_while_it_moves_keeps_the_use(store: Path) -> None:
    import os

    tally = store / "projects" / PROJECT_ID / "state" / "fixture-session-2.tally"
    before = tally.read_bytes()
    fd = os.open(tally, os.O_WRONLY | os.O_APPEND)  # opened by 0.3.0's hook before the move, written after
    try:
        migrate.upgrade(str(store))
        os.write(fd, b"u")
    finally:
        os.close(fd)
    assert (tally.parent / "sessions" / tally.name).read_bytes() == before + b"u"


@pytest.mark.skipif(sys.platform != "linux", reason="the fixture's project id hashes its Linux path")
@pytest.mark.parametrize("store", ["0.2.0"], indirect=True)
@pytest.mark.parametrize("event", ["post-tool-use", "stop", "user-prompt-submit"])
def test_a_session_whose_first_hook_after_the_upgrade_is_not_a_start_goes_on_with_its_own_state(
    store: Path, event: str
) -> None:
    import subprocess

    project = Path("/tmp/keeper-fixture/invoices")  # where tests/fixtures/stores/make.py ran the release
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    state = store / "projects" / PROJECT_ID / "state"
    (state / "fixture-session-2.end").unlink()  # the release's session is still live when the upgrade lands
    counted = (state / "fixture-session-2.tally").read_bytes()
    sessions = sorted(p.name for p in (store / "projects" / PROJECT_ID / "sessions").iterdir())
    payload = {"session_id": "fixture-session-2", "cwd": str(project), "tool_name": "Bash", "prompt": "go on"}
    entry.handle(event, json.dumps(payload).encode(), str(project))
    assert not (state / "fixture-session-2.tally").exists() and not (state / "fixture-session-2.json").exists()
    assert (state / "sessions" / "fixture-session-2.tally").read_bytes().startswith(counted)
    assert json.loads((state / "sessions" / "fixture-session-2.json").read_bytes())["file"] == "2026-11-26_0452-2.md"
    assert sorted(p.name for p in (store / "projects" / PROJECT_ID / "sessions").iterdir()) == sessions


def _session(session: str, started: str, body: str) -> str:
    return f"# Session {started} · api\n\n- Session id: {session}\n- Started: {started}\n\n## Saves\n\n{body}\n"


def test_twins_of_a_session_that_came_by_import_and_by_sync_are_one_file_again_every_distinct_text_kept(
    isolated: Path, tmp_path: Path
) -> None:
    root = tmp_path / "store"
    sessions = root / "projects" / "api-0123456789" / "sessions"
    sessions.mkdir(parents=True)
    (root / "sync.json").write_text(json.dumps({"remote": str(tmp_path / "r.git"), "machine": "bbbbbb"}))
    one, grown = _session("s1", "2026-11-27 17:52", "first"), _session("s1", "2026-11-27 17:52", "first\n\nmore")
    mine, theirs = _session("s2", "2026-11-27 18:00", "mine"), _session("s2", "2026-11-27 18:00", "theirs")
    written = {
        "2026-11-27_1752.md": one,  # imported from a's archive (its plain name)
        "2026-11-27_1752@aaaaaa.md": one,  # the same, as a's sync sent it
        "2026-11-27_1752@aaaaaa-cccccc.md": grown,  # the same session, more text: distinct, kept
        "2026-11-27_1800.md": mine,  # same session id, other text: both kept
        "2026-11-27_1800@aaaaaa.md": theirs,
        "2026-11-27_1900.md": "a note without a header\n",
        "2026-11-27_1900-imported.md": "a note without a header\n",
    }
    for name, text in written.items():
        (sessions / name).write_text(text)
    (root / "format.json").write_text(json.dumps({"format": 2, "applied": [n for n, _ in migrate.MIGRATIONS[:2]]}))
    done = migrate.upgrade(str(root))
    assert done == ["session_twins: 2 session files removed, each the same text as one kept"]
    left = {p.name: p.read_text() for p in sessions.iterdir()}
    assert sorted(left.values()) == sorted(set(written.values()))  # every distinct text, once
    # the name the sync repository sorts first stays (the same choice on every machine)
    assert "2026-11-27_1752@aaaaaa.md" in left and "2026-11-27_1752.md" not in left
    assert "2026-11-27_1900-imported.md" not in left
    [backup] = (root / "backups").glob("session_twins-*")
    manifest = json.loads((backup / "manifest.json").read_text())
    assert sorted(manifest["changed"]) == [
        "projects/api-0123456789/sessions/2026-11-27_1752.md",
        "projects/api-0123456789/sessions/2026-11-27_1900-imported.md",
    ]
    assert (backup / "projects" / "api-0123456789" / "sessions" / "2026-11-27_1752.md").read_text() == one
    assert migrate.upgrade(str(root)) == []
