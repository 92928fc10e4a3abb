"""Time-based decisions hold when the clock jumps either way (issue 23, family 3).

The rule (docs/SECURITY.md, "Clocks"): a time in the future proves nothing and never keeps
anything from happening for good; nothing is deleted on the word of one clock reading alone.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from keeper.capture import saving
from keeper.memory.document import SaveInput
from keeper.plugin import bootstrap
from keeper.store import config, identity, markers, paths, sessions, trash
from tests.helpers import run_hook
from tests.transcripts import SESSION, realistic

DAY = 86400


def project_of(folder: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(folder)))


@pytest.mark.parametrize("behind_days", [1, 400, 9000])
def test_a_backup_made_while_the_clock_was_behind_survives_the_next_clear(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, behind_days: int
) -> None:
    project = project_of(project_dir)
    saving.save(project, config.load(None), SaveInput(decisions=["Keep the memory"]), "s0")
    real_time, real_datetime = time.time, datetime

    class Behind(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[no-untyped-def,override]
            return real_datetime.now(tz) - timedelta(days=behind_days)

    with monkeypatch.context() as wrong:  # the clock is behind while the user clears
        wrong.setattr(time, "time", lambda: real_time() - behind_days * DAY)
        wrong.setattr(trash, "datetime", Behind)
        backup = trash.clear(project, trash.all_files(project), "clear all", keep_days=14)
    assert os.path.basename(backup) < real_datetime.now().strftime("%Y%m%d")  # named by the wrong clock
    trash.clear(project, [], "clear old", keep_days=14)  # the clock is right again
    assert os.path.exists(os.path.join(backup, "memory.md")), "the memory was purged after a day"
    restored, _ = trash.restore(project, os.path.basename(backup))
    assert "memory.md" in restored


def test_a_backup_dated_in_the_future_is_kept_and_one_truly_old_is_purged(project_dir: Path) -> None:
    project = project_of(project_dir)
    saving.save(project, config.load(None), SaveInput(decisions=["Keep the memory"]), "s0")
    future = trash.clear(project, trash.all_files(project), "clear all", keep_days=14)
    ahead = time.time() + 3000 * DAY
    for folder, _, names in os.walk(future):
        for name in names:
            os.utime(os.path.join(folder, name), (ahead, ahead))
    old = os.path.join(trash.trash_dir(project), "20200101-000000")
    os.mkdir(old)
    Path(old, "note.md").write_text("x", encoding="utf-8")
    long_ago = time.time() - 400 * DAY
    os.utime(os.path.join(old, "note.md"), (long_ago, long_ago))
    assert trash.purge_expired(project, 14) == 1
    assert os.path.exists(future) and not os.path.exists(old)


def test_an_unsaved_session_is_listed_when_memory_md_was_saved_by_a_clock_ahead(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = project_of(project_dir)
    saving.save(project, config.load(None), SaveInput(decisions=["Keep the memory"]), "s0")
    t = realistic(tmp_path / "t.jsonl")
    first = {"session_id": "first", "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**first, "source": "startup"}, monkeypatch, capsys)
    run_hook("stop", {**first, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    ahead = time.time() + 30 * DAY
    os.utime(project.memory, (ahead, ahead))
    reply = run_hook(
        "session-start", {"session_id": "second", "cwd": str(project_dir), "source": "startup"}, monkeypatch, capsys
    )
    assert "ended without a save" in reply["hookSpecificOutput"]["additionalContext"]


def test_a_killed_session_whose_transcript_is_dated_in_the_future_is_completed(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    t = realistic(tmp_path / "killed.jsonl")
    base = {"session_id": SESSION, "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)  # then the terminal was killed
    ahead = time.time() + 5 * DAY
    os.utime(t.path, (ahead, ahead))
    project = project_of(project_dir)
    run_hook("session-start", {"session_id": "next", "cwd": str(project_dir), "source": "startup"}, monkeypatch, capsys)
    assert SESSION not in markers.unended(project)
    text = Path(sessions.existing_file(project, SESSION) or "").read_text(encoding="utf-8")
    assert "the session ended without SessionEnd" in text


def test_a_setup_lock_dated_in_the_future_goes_stale(tmp_path: Path) -> None:
    lock = bootstrap.SetupLock(str(tmp_path), wait=0)
    os.mkdir(lock.path)
    ahead = time.time() + 2 * DAY
    os.utime(lock.path, (ahead, ahead))
    assert lock.acquire()
    lock.release()
    fresh = bootstrap.SetupLock(str(tmp_path), wait=0)
    os.mkdir(fresh.path)  # a live one, made now, still holds
    assert not fresh.acquire()
