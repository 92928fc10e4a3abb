"""keeper sync: three machines (three stores, three clones at different paths) against a local bare remote."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from keeper.store import paths
from keeper.sync import mirror
from tests.syncstores import ORIGINS, Machine, git, machines_fixture, remote_fixture, remote_objects
from tests.syncstores import connect as _connect

pytestmark = pytest.mark.needs("git")

__all__ = ["machines_fixture", "remote_fixture"]  # the fixtures this module's tests use


def test_origin_urls_compare_without_scheme_credentials_or_dot_git() -> None:
    assert {mirror.normalise_origin(u) for u in ORIGINS} == {"github.com/me/proj"}
    assert mirror.normalise_origin("/some/local/path") is None
    assert mirror.normalise_origin("ssh://git@Example.org:2222/team/x.git/") == "example.org/team/x"


def test_the_recorded_remote_is_machine_local_and_the_sync_repository_derived() -> None:
    assert paths.kind("sync.json") == paths.LOCAL
    assert paths.kind("sync/repo.git/HEAD") == paths.DERIVED
    assert paths.kind("projects/x/state/sync.remote.json") == paths.LOCAL


def test_first_sync_brings_a_project_to_a_clone_at_another_path(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5 for search", "--summary", "set up search", "--state", "indexing works")
    assert a.sync("--remote", str(remote)) == 0
    assert "Synced with" in capsys.readouterr().out
    assert b.sync("--remote", str(remote)) == 0
    assert "Use FTS5 for search" in b.start_session()  # the clone's first session here starts with it
    assert "Use FTS5 for search" in b.memory()
    assert "indexing works" in b.memory()
    assert len(b.sessions()) == 1
    listed = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main")
    assert "token" not in listed and "user" not in listed
    assert mirror.MARKER in listed


def test_a_sync_run_in_a_clone_gives_it_its_memory_at_once(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`keeper sync` typed in the clone: `keeper recall` there finds the other machine's memory
    right away, not only after the clone's next session starts."""
    a, b, _ = machines
    a.save("--decision", "Use FTS5 for search")
    assert a.sync("--remote", str(remote)) == 0
    monkeypatch.chdir(b.project)
    assert b.sync("--remote", str(remote)) == 0
    capsys.readouterr()
    assert b.run("recall", "FTS5 search", "--json") == 0
    assert "Use FTS5 for search" in capsys.readouterr().out
    monkeypatch.chdir(b.project.parent)  # a folder that is no project: a sync there makes none
    assert b.sync() == 0
    assert len(list((b.store / "projects").iterdir())) == 1


def test_the_remote_url_is_replaced_by_a_later_remote_flag(machines: list[Machine], tmp_path: Path) -> None:
    a = machines[0]
    other = tmp_path / "other.git"
    git("init", "-q", "--bare", str(other))
    assert a.sync("--remote", str(tmp_path / "remote.git")) == 0
    assert a.sync("--remote", str(other)) == 0
    assert (a.store / "sync.json").read_text().count("other.git") == 1


def test_a_sync_with_nothing_new_touches_no_file(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    a.save("--decision", "Keep it small")
    _connect([a, b], remote)
    assert a.sync() == 0
    head = git("--git-dir", str(remote), "rev-parse", "main")
    stamps = {p: p.stat().st_mtime_ns for p in a.store.rglob("*") if p.is_file() and "sync" not in p.parts}
    assert a.sync() == 0
    assert b.sync() == 0
    assert git("--git-dir", str(remote), "rev-parse", "main") == head
    after = {p: p.stat().st_mtime_ns for p in a.store.rglob("*") if p.is_file() and "sync" not in p.parts}
    assert after == stamps


def test_session_files_with_the_same_name_on_two_machines_never_collide(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    a.save("--summary", "work on a")
    b.save("--summary", "work on b")
    assert {p.name for p in a.sessions()} == {p.name for p in b.sessions()}  # same minute, same name
    _connect([a, b], remote)
    assert a.sync() == 0
    texts = sorted(p.read_text() for p in a.sessions())
    assert len(texts) == 2 and "work on a" in "".join(texts) and "work on b" in "".join(texts)
    assert len(b.sessions()) == 2


@pytest.mark.parametrize("order", list(itertools.permutations("abc")))
def test_diverging_saves_retirements_and_hand_edits_agree_in_every_order(
    machines: list[Machine], remote: Path, order: tuple[str, ...]
) -> None:
    by = {m.name: m for m in machines}
    a, b, c = machines
    a.save("--decision", "Use FTS5", "--decision", "Ship weekly", "--issue", "Flaky login test")
    _connect(machines, remote)
    _connect(machines, remote)  # every machine has the shared start
    a.save("--retired", "Ship weekly", "--decision", "Tag releases")
    b.save("--resolved", "Flaky login test", "--decision", "Use pytest")
    memory = c.memory_files()[0]
    memory.write_text(memory.read_text().replace("## Known Issues", "A note c wrote by hand.\n\n## Known Issues"))
    for name in order:
        assert by[name].sync() == 0
    for name in order:
        assert by[name].sync() == 0
    texts = {m.name: m.memory() for m in machines}
    assert len(set(texts.values())) == 1, texts
    text = texts["a"]
    for kept in ("Use FTS5", "Tag releases", "Use pytest", "A note c wrote by hand."):
        assert kept in text
    assert "Ship weekly" not in text and "Flaky login test" not in text
    assert "<<<<<<<" not in text


def test_a_secret_hand_edited_into_memory_never_reaches_the_remote(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    memory = a.memory_files()[0]
    memory.write_text(memory.read_text() + f"\nDeploy token: {secret}\n")
    _connect([a, b], remote)
    assert secret.encode() not in remote_objects(remote)
    assert secret in memory.read_text()  # the local line stays as it is
    assert secret not in b.memory() and "Deploy token:" in b.memory()
    assert a.sync() == 0 and secret in memory.read_text()


def test_a_secret_another_machine_pushed_is_redacted_by_this_one(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    (b.store).mkdir(parents=True, exist_ok=True)
    (b.store / "config.yaml").write_text("redact_patterns: ['ACME-[0-9]{6}']\n")
    _connect([a, b], remote)
    a.save("--decision", "Licence key is ACME-123456")  # a's rules do not know it: a pushes it
    assert a.sync() == 0
    b.save("--decision", "Another decision")
    assert b.sync() == 0
    head = git("--git-dir", str(remote), "show", "main:" + _tree_memory(remote))
    assert "ACME-123456" not in head and "Another decision" in head
    assert "ACME-123456" not in b.memory()


def test_a_push_that_would_still_carry_a_secret_is_refused_naming_the_file_and_line() -> None:
    from keeper.errors import KeeperError
    from keeper.sync import scan

    outgoing = {"projects/pin.api/memory.md": b"# Project Memory: api\n\n- fine\n- key AKIAIOSFODNN7EXAMPLQ\n"}
    with pytest.raises(KeeperError, match=r"^not pushing: projects/pin.api/memory.md line 4 "):
        scan.check(outgoing, {})
    scan.check({"global/memory.md": b"- nothing secret here\n"}, {})


def _tree_memory(remote: Path) -> str:
    names = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main").split()
    return next(n for n in names if n.startswith("projects/") and n.endswith("/memory.md"))


def test_an_unreachable_remote_is_one_line_and_loses_nothing(
    machines: list[Machine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(tmp_path / "no-such-remote.git")) == 1
    err = capsys.readouterr().err
    assert err.startswith("keeper: error: cannot reach the remote") and err.count("\n") == 1
    assert "Use FTS5" in a.memory()


def test_a_remote_that_is_not_a_keeper_store_is_refused(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "code-repo"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "app.py").write_text("print('hi')\n")
    git("add", ".", cwd=work)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "app", cwd=work)
    git("push", "-q", str(remote), "main", cwd=work)
    a = machines[0]
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 1
    assert "not a Keeper store" in capsys.readouterr().err
    assert git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main").split() == ["app.py"]


def test_two_machines_syncing_at_once_both_complete(machines: list[Machine], remote: Path) -> None:
    _a, _b, _c = machines
    _connect(machines, remote)
    for m in machines:
        m.save("--decision", f"Decision from {m.name}")
    running = [m.spawn_sync() for m in machines]
    for proc in running:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for m in machines:
        assert m.sync() == 0
    for m in machines:
        text = m.memory()
        assert all(f"Decision from {n}" in text for n in "abc"), text


def test_a_remote_whose_history_was_rewritten_is_merged_never_forced(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    _connect([a, b], remote)
    b.save("--decision", "From b after the rewrite")
    # someone replaces the remote with another history (b's store pushed alone into a fresh repository)
    git("--git-dir", str(remote), "update-ref", "-d", "refs/heads/main")
    git("--git-dir", str(remote), "gc", "-q", "--prune=now")
    fresh = tmp_path / "fresh"
    git("clone", "-q", str(remote), str(fresh))
    (fresh / mirror.MARKER).write_text(mirror.MARKER_TEXT)
    (fresh / "global").mkdir()
    (fresh / "global" / "memory.md").write_text("# Global Memory\n\n## Feedback\n\n- Written elsewhere\n")
    git("add", ".", cwd=fresh)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "rewritten", cwd=fresh)
    git("push", "-q", "origin", "HEAD:main", cwd=fresh)
    rewritten = git("--git-dir", str(remote), "rev-parse", "main").strip()
    assert a.sync() == 0
    assert b.sync() == 0
    assert a.sync() == 0
    assert git("--git-dir", str(remote), "merge-base", "--is-ancestor", rewritten, "main") == ""
    for m in (a, b):
        assert "Use FTS5" in m.memory() and "From b after the rewrite" in m.memory()
        assert "Written elsewhere" in (m.store / "global" / "memory.md").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_sync_killed_at_random_points_is_completed_by_the_next(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    _connect([a, b], remote)
    for round_ in range(6):
        a.save("--decision", f"Decision {round_}")
        b.save("--decision", f"B decision {round_}")
        proc = a.spawn_sync()
        time.sleep(0.05 + 0.07 * round_)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert b.sync() == 0
    assert a.sync() == 0
    assert b.sync() == 0
    for m in (a, b):
        text = m.memory()
        assert all(f"Decision {n}" in text and f"B decision {n}" in text for n in range(6)), text


def test_concurrent_saves_during_syncs_all_land(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    _connect([a, b], remote)
    for n in range(4):
        proc = a.spawn_sync()
        a.save("--decision", f"Saved during sync {n}")
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    assert a.sync() == 0 and b.sync() == 0
    assert all(f"Saved during sync {n}" in b.memory() for n in range(4))
    assert all(f"Saved during sync {n}" in a.memory() for n in range(4))


def test_a_clone_keeps_its_memory_after_its_folder_moves(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    _connect([a, b], remote)
    moved = b.project.parent / "renamed"
    os.rename(b.project, moved)
    b.project = moved
    assert b.memory() == ""  # a new path is a new project here: its first session ties it to its origin
    b.start_session("after-move")
    assert b.sync() == 0
    assert "Use FTS5" in b.memory()
    b.save("--decision", "After the move")
    assert b.sync() == 0 and a.sync() == 0
    assert "After the move" in a.memory()


def test_automatic_pull_and_push_through_the_real_hooks(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    _connect([a, b], remote)
    a.save("--decision", "Saved on machine a")
    _hook(a, "session-end", {"session_id": "s-a", "cwd": str(a.project), "reason": "exit"})
    _wait_for(lambda: b"Saved on machine a" in remote_objects(remote))
    _hook(b, "session-start", {"session_id": "s-b", "cwd": str(b.project), "source": "startup"})
    _wait_for(lambda: "Saved on machine a" in b.memory())
    reply = _hook(b, "session-start", {"session_id": "s-b2", "cwd": str(b.project), "source": "startup"})
    assert "Saved on machine a" in reply


def test_sync_false_keeps_the_hooks_from_syncing(machines: list[Machine], remote: Path) -> None:
    a, _, _ = machines
    _connect([a], remote)
    (a.store / "config.yaml").write_text("sync: false\n")
    a.save("--decision", "Stays here until asked")
    _hook(a, "session-end", {"session_id": "s-a", "cwd": str(a.project), "reason": "exit"})
    time.sleep(1.5)
    assert b"Stays here until asked" not in remote_objects(remote)


def _hook(m: Machine, event: str, payload: dict[str, str]) -> str:
    import json

    done = subprocess.run(
        [sys.executable, "-m", "keeper", "hook", event],
        input=json.dumps(payload).encode(),
        env=m.env(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0
    return done.stdout.decode()


def _wait_for(condition: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("the background sync did not finish in time")


def test_saves_after_a_sync_replace_the_current_state_and_roll_recent_context_that_came_in(
    machines: list[Machine], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, _ = machines
    _connect([a, b], remote)
    a.save("--state", "state written on a", "--summary", "a one")
    assert a.sync() == 0 and b.sync() == 0
    assert "state written on a" in b.memory()
    b.save("--state", "state written on b")
    assert "state written on a" not in b.memory()
    for n in range(4):
        monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", f"b-session-{n}")
        b.save("--summary", f"b summary {n}")
    text = b.memory()
    assert "a one" not in text.split("## Recent Context")[1].split("##")[0]  # rolled out, kept in its session file


def test_status_and_doctor_show_the_remote_the_last_sync_and_what_waits(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    assert a.run("status", "--project-dir", str(a.project)) == 0
    assert "not set up (keeper sync --remote URL" in capsys.readouterr().out
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    time.sleep(1.1)  # the status records whole seconds
    a.save("--decision", "Waits to be pushed")
    capsys.readouterr()
    assert a.run("status", "--project-dir", str(a.project), "--json") == 0
    import json

    data = json.loads(capsys.readouterr().out)["sync"]
    assert data["remote"] == str(remote) and data["last_sync"]
    assert [w for w in data["waiting"] if w.endswith("/memory.md")]
    assert a.sync() == 0
    capsys.readouterr()
    assert a.run("status", "--project-dir", str(a.project), "--json") == 0
    assert json.loads(capsys.readouterr().out)["sync"]["waiting"] == []
    a.run("doctor", "--project-dir", str(a.project))
    assert f"ok    sync     {remote} (last sync " in capsys.readouterr().out


def test_doctor_says_when_the_remote_cannot_be_reached(
    machines: list[Machine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.sync import remote as recorded

    a = machines[0]
    a.monkeypatch.setenv("KEEPER_HOME", str(a.store))
    recorded.record(str(tmp_path / "gone.git"))
    a.run("doctor", "--project-dir", str(a.project))
    out = capsys.readouterr().out
    assert "FAIL  sync" in out and "cannot reach" in out


def test_a_background_sync_that_finds_one_running_queues_one_follow_up(machines: list[Machine], remote: Path) -> None:
    from filelock import FileLock

    from keeper.sync import engine

    a, b, _ = machines
    _connect([a, b], remote)
    a.save("--decision", "Saved while a sync ran")
    a.monkeypatch.setenv("KEEPER_HOME", str(a.store))
    held = FileLock(engine.lock_path())
    with held:
        for _ in range(3):
            done = subprocess.run([sys.executable, "-m", "keeper", "sync", "--background"], env=a.env(), timeout=60)
            assert done.returncode == 0
        assert Path(engine.queued_file()).exists()
        assert b"Saved while a sync ran" not in remote_objects(remote)
    assert a.sync() == 0  # the running sync honours the queued one before it lets go
    assert not Path(engine.queued_file()).exists()
    assert b"Saved while a sync ran" in remote_objects(remote)


def test_a_full_disk_loses_nothing_and_the_next_sync_completes(
    machines: list[Machine], remote: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from keeper.exchange import landing
    from keeper.sync import engine

    a, b, _ = machines
    _connect([a, b], remote)
    a.save("--decision", "Made on a")
    assert a.sync() == 0
    b.save("--decision", "Made on b")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(engine, "atomic_write", full)
        patched.setattr(landing, "atomic_write", full)
        patched.setattr(landing, "create_new", full)
        capsys.readouterr()
        assert b.sync() == 1
    err = capsys.readouterr().err
    assert err.startswith("keeper: error: No space left on device") and err.count("\n") == 1
    assert "Made on b" in b.memory()
    assert b.sync() == 0 and a.sync() == 0
    assert "Made on a" in b.memory() and "Made on b" in a.memory()


def test_a_repository_left_locked_or_broken_by_a_killed_sync_is_put_right(
    machines: list[Machine], remote: Path
) -> None:
    from keeper.sync import engine

    a, b, _ = machines
    _connect([a, b], remote)
    a.monkeypatch.setenv("KEEPER_HOME", str(a.store))
    repo = Path(engine.repo_path())
    (repo / "refs" / "keeper" / "synced.lock").write_text("")
    (repo / "packed-refs.lock").write_text("")
    a.save("--decision", "After the stale locks")
    assert a.sync() == 0
    (repo / "HEAD").write_text("garbage\n")
    a.save("--decision", "After the broken repository")
    assert a.sync() == 0
    assert list(repo.parent.glob("repo.git.broken-*"))  # kept aside, its commits reachable there
    assert b.sync() == 0
    assert "After the stale locks" in b.memory() and "After the broken repository" in b.memory()


def test_the_memory_hub_shows_the_remote_the_last_sync_and_what_waits(machines: list[Machine], remote: Path) -> None:
    from keeper.hub import build

    a = machines[0]
    a.save("--decision", "Use FTS5")
    a.monkeypatch.setenv("KEEPER_HOME", str(a.store))
    assert build.collect()["sync"]["remote"] is None
    assert a.sync("--remote", "file://user:secret@" + str(remote)) == 0
    time.sleep(1.1)
    a.save("--decision", "Not pushed yet")
    shown = build.collect()["sync"]
    assert shown["remote"] == "file://" + str(remote) and shown["last_sync"]
    assert shown["waiting_count"] >= 1
    assert "secret" not in build.render(build.collect())


def test_projects_pinned_to_one_name_share_memory_across_machines(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    for m in (a, b):
        (m.project / ".claude").mkdir()
        (m.project / ".claude" / "keeper.yaml").write_text("project: shop-api\n")
        (m.project / ".git" / "config").write_text("[core]\n\tbare = false\n")  # no origin: the pin alone
        assert m.run("pin", "--project-dir", str(m.project)) == 0
    a.save("--decision", "Pinned memory travels")
    _connect([a, b], remote)
    assert "Pinned memory travels" in b.memory()
    assert (b.store / "projects" / "shop-api" / "memory.md").exists()
    listed = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main")
    assert "projects/pin.shop-api/memory.md" in listed


def test_a_session_file_both_machines_changed_is_kept_twice(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    a.save("--summary", "a's session")
    _connect([a, b], remote)
    [on_b] = b.sessions()
    on_b.write_text(on_b.read_text() + "\nA line b added by hand.\n")
    [on_a] = a.sessions()
    on_a.write_text(on_a.read_text() + "\nA line a added later.\n")
    assert a.sync() == 0 and b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        texts = [p.read_text() for p in m.sessions()]
        assert len(texts) == 2, [p.name for p in m.sessions()]
        assert any("A line b added by hand." in t for t in texts)
        assert any("A line a added later." in t for t in texts)


def test_sync_without_a_remote_says_how_to_set_one(machines: list[Machine], capsys: pytest.CaptureFixture[str]) -> None:
    assert machines[0].sync() == 1
    err = capsys.readouterr().err
    assert err.startswith("keeper: error: no remote recorded yet") and "keeper sync --remote URL" in err


@pytest.mark.parametrize("url", ["--upload-pack=touch /tmp/x", "ext::sh -c touch% /tmp/x", "  "])
def test_a_remote_that_would_make_git_run_something_is_refused(
    machines: list[Machine], url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert machines[0].sync("--remote=" + url) == 1
    assert capsys.readouterr().err.startswith("keeper: error: ")
    assert not (machines[0].store / "sync.json").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the hooks are shell scripts")
def test_no_git_configuration_of_the_user_runs_a_hook_during_sync(
    machines: list[Machine], remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = tmp_path / "evil-hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    for name in ("pre-push", "reference-transaction", "post-update", "pre-commit"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    (Path(os.environ["HOME"]) / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n")
    a = machines[0]
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    assert a.sync() == 0
    assert not marker.exists()
