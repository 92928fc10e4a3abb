"""The store is private and stays inside itself: 0600 files, 0700 folders, no write through a link."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from keeper.cli import main
from keeper.store import identity
from tests.helpers import run_hook

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and symbolic links")


def use_everything(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every kind of file Keeper makes: memory, session file, state, tally, hook log, index, log, cache."""
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "keeper.yaml").write_text("save_every: 4\n")
    base = {"session_id": "s1", "cwd": str(project), "transcript_path": ""}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    run_hook("post-tool-use", {**base, "tool_name": "Read"}, monkeypatch, capsys)
    assert main(["save", "--decision", "Private by default", "--session", "s1"]) == 0
    capsys.readouterr()
    assert main(["recall", "private"]) == 0
    capsys.readouterr()
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "ok"}, monkeypatch, capsys)
    run_hook("session-end", {**base, "reason": "other"}, monkeypatch, capsys)
    run_hook("no-such-event", {}, monkeypatch, capsys)  # a log line
    capsys.readouterr()


def test_everything_in_the_store_is_private_whatever_the_umask(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = os.umask(0)
    try:
        use_everything(project_dir, monkeypatch, capsys)
    finally:
        os.umask(old)
    found = list(store.rglob("*"))
    kinds = {p.name.split(".")[-1] for p in found if p.is_file()}
    assert {"md", "json", "tally", "stats", "sqlite3", "log", "end", "start"} <= kinds
    loose = [(str(p), oct(p.stat().st_mode & 0o777)) for p in found if p.stat().st_mode & 0o077]
    assert not loose, loose


def test_a_damaged_index_is_rebuilt_private(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged index is removed and made again (now by a Stop too): SQLite made the new file with
    the umask's mode (0666 under umask 0), not Keeper's 0600."""
    old = os.umask(0)
    try:
        use_everything(project_dir, monkeypatch, capsys)
        index = identity.make_project(identity.find_project_root(str(project_dir))).index
        with open(index, "r+b") as fh:
            fh.write(b"not a database" * 100)
        base = {"session_id": "s1", "cwd": str(project_dir), "transcript_path": "", "stop_hook_active": False}
        run_hook("stop", {**base, "last_assistant_message": "rebuilt"}, monkeypatch, capsys)
    finally:
        os.umask(old)
    loose = [(str(p), oct(p.stat().st_mode & 0o777)) for p in store.rglob("*") if p.stat().st_mode & 0o077]
    assert not loose, loose


@pytest.mark.parametrize("link", ["sessions", "state", "state/sessions", "logs"])
def test_a_folder_linked_out_of_the_store_is_never_written_through(
    link: str,
    project_dir: Path,
    store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    where = Path(project.dir) / link if link != "logs" else store / "logs"
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(outside, target_is_directory=True)
    base = {"session_id": "s1", "cwd": str(project_dir), "transcript_path": ""}
    reply = run_hook("post-tool-use", {**base, "tool_name": "Read"}, monkeypatch, capsys)
    assert reply == {}
    code = main(["save", "--decision", "Stays inside", "--session", "s1"])
    err = capsys.readouterr().err
    if link in ("sessions", "state", "state/sessions"):
        assert code == 1 and "leads out of Keeper's store" in err
    run_hook("stop", {**base, "stop_hook_active": False, "last_assistant_message": "ok"}, monkeypatch, capsys)
    assert list(outside.iterdir()) == []  # nothing landed outside


def test_a_file_linked_out_of_the_store_is_never_written_through(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    Path(project.session_state).mkdir(parents=True)
    Path(project.session_file("s1", "tally")).symlink_to(victim)
    Path(project.state, "hooks.stats").symlink_to(victim)
    payload = {"session_id": "s1", "cwd": str(project_dir), "tool_name": "Read"}
    assert run_hook("post-tool-use", payload, monkeypatch, capsys) == {}
    assert victim.read_text() == "untouched\n"
    log = (Path(os.environ["KEEPER_HOME"]) / "logs" / "keeper.log").read_text()
    assert "WARN refused:" in log and "symbolic link" in log


def test_a_store_folder_realpath_gives_with_windows_long_prefix_is_still_the_stores(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows' realpath keeps the ``\\\\?\\`` prefix on a path it could not check the shorter name of
    (another process holding the folder: eight sessions at once under Wine): the folder is still the
    store's, and the write goes ahead."""
    from keeper.store import fsutil, paths

    folder = Path(paths.data_root(), "projects", "x", "state")
    folder.mkdir(parents=True)
    real = os.path.realpath

    def prefixed(path: str) -> str:
        found = real(path)
        return "\\\\?\\" + found if os.path.basename(found) == "state" else found

    monkeypatch.setattr(fsutil.os.path, "realpath", prefixed)
    fsutil.guard(str(folder / "tally"))  # raised OutsideStore: "leads out of Keeper's store (to \\?\...)"
