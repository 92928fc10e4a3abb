"""keeper sync at its seams: which history it trusts, what a removal is, whose a project is, what it accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from keeper.store import paths, removals
from keeper.sync import mirror
from tests.syncstores import Machine, connect, git, machines_fixture, remote_fixture, remote_objects, trashed

pytestmark = pytest.mark.needs("git")

__all__ = ["machines_fixture", "remote_fixture"]  # the fixtures this module's tests use

NOTE = "the remote's history was rewritten since the last sync: merged, nothing removed"


def _tip(remote: Path) -> str:
    return git("--git-dir", str(remote), "rev-parse", "main").strip()


def _sync_out(m: Machine, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    capsys.readouterr()
    assert m.sync(*extra) == 0
    return capsys.readouterr().out


def test_a_remote_rolled_back_loses_no_decision_and_brings_no_retired_one_back(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Old decision to retire", "--decision", "Use FTS5")
    connect([a, b], remote)
    old = _tip(remote)
    a.save("--retired", "Old decision to retire", "--decision", "Made after the old tip")
    assert a.sync() == 0 and b.sync() == 0
    newer = _tip(remote)
    git("--git-dir", str(remote), "update-ref", "refs/heads/main", old)  # someone rolls the remote back
    assert NOTE in _sync_out(a, capsys)
    assert b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        text = m.memory()
        assert "Made after the old tip" in text and "Use FTS5" in text, text
        assert "Old decision to retire" not in text, text
        assert trashed(m) == []
    assert git("--git-dir", str(remote), "merge-base", "--is-ancestor", newer, "main") == ""  # still reachable


def test_an_item_deleted_by_hand_stays_deleted_everywhere_even_after_the_history_is_replaced(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Deleted by hand later", "--decision", "Use FTS5", "--state", "Building the index")
    connect([a, b], remote)
    tree = git("--git-dir", str(remote), "rev-parse", "main^{tree}").strip()  # holds the item
    [memory] = a.memory_files()
    text = memory.read_text(encoding="utf-8")
    kept = [line for line in text.splitlines(keepends=True) if "Deleted by hand later" not in line]
    memory.write_text("".join(kept), encoding="utf-8")
    assert a.sync() == 0 and b.sync() == 0
    assert "Deleted by hand later" not in b.memory()
    # someone pushes a history of its own that holds the item, sharing no commit with this one
    root = git("--git-dir", str(remote), "-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-m", "new")
    git("--git-dir", str(remote), "update-ref", "refs/heads/main", root.strip())
    assert NOTE in _sync_out(b, capsys)
    assert a.sync() == 0 and b.sync() == 0
    for m in (a, b):
        text = m.memory()
        assert "Deleted by hand later" not in text and "Use FTS5" in text and "Building the index" in text, text
        assert trashed(m) == []


@pytest.mark.parametrize("damage", ["emptied", "utf-16", "cr"])
def test_a_memory_file_that_reads_as_no_memory_removes_nothing_anywhere(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use Postgres for storage", "--issue", "PDF export missing", "--state", "Building")
    connect([a, b], remote)
    b.save("--decision", "Money in cents")
    [memory] = a.memory_files()
    text = memory.read_text(encoding="utf-8")
    # a save cut short by a full disk, PowerShell 5's `>` (UTF-16), an editor's old-Mac line ends
    damaged = {"emptied": b"", "utf-16": text.encode("utf-16"), "cr": text.replace("\n", "\r").encode()}[damage]
    memory.write_bytes(damaged)
    assert "reads as no memory" in _sync_out(a, capsys)
    b.save("--decision", "Later from b")
    assert b.sync() == 0 and a.sync() == 0 and a.sync() == 0 and b.sync() == 0  # what arrives is not merged in
    assert memory.read_bytes() == damaged  # the file is the person's to fix: left as it is
    for kept in ("Use Postgres for storage", "PDF export missing", "Money in cents", "Later from b"):
        assert kept in b.memory()
    [folder] = [m.parent for m in b.memory_files()]
    assert not removals.removed(removals.read(str(folder)), "items")  # nothing recorded as removed
    memory.write_text(text, encoding="utf-8")  # written back as it was
    assert a.sync() == 0 and b.sync() == 0 and a.sync() == 0
    assert "Money in cents" in a.memory() and "Use Postgres for storage" in b.memory()


def test_a_current_state_line_a_save_replaced_is_no_removal_of_a_decision_that_says_the_same(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--state", "Freeze deploys on Fridays")
    connect([a, b], remote)
    b.save("--decision", "Freeze deploys on Fridays")
    a.save("--state", "Shipping")  # Keeper replaces a's Current State: the old line goes, meant by no one
    for m in (b, a, b):
        assert m.sync() == 0
    for m in (a, b):
        text = m.memory()
        assert "- Freeze deploys on Fridays (" in text and "Shipping" in text, (m.name, text)


def test_a_new_remote_gets_every_file_and_trashes_none(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    connect([a, b], remote)
    sessions = sorted(p.name for p in a.sessions())
    assert sessions
    fresh = tmp_path / "new-remote.git"
    git("init", "-q", "--bare", str(fresh))
    out = _sync_out(a, capsys, "--remote", str(fresh))
    assert "a new remote" in out
    assert trashed(a) == [] and sorted(p.name for p in a.sessions()) == sessions
    assert c.sync("--remote", str(fresh)) == 0
    c.start_session("join")
    assert c.sync() == 0
    assert "Use FTS5" in c.memory()
    assert len(c.sessions()) == len(sessions)


def test_a_deleted_branch_is_pushed_again_and_trashes_nothing(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    connect([a, b], remote)
    before = sorted(p.name for p in a.sessions())
    git("--git-dir", str(remote), "update-ref", "-d", "refs/heads/main")
    assert "the remote's branch is gone" in _sync_out(a, capsys)
    assert trashed(a) == [] and sorted(p.name for p in a.sessions()) == before
    assert b.sync() == 0
    assert trashed(b) == [] and "Use FTS5" in b.memory()


def test_an_absence_alone_removes_nothing(machines: list[Machine], remote: Path, tmp_path: Path) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    connect([a, b], remote)
    # the remote's history replaced by one that holds only the marker and the global memory
    fresh = tmp_path / "fresh"
    git("init", "-q", "-b", "main", str(fresh))
    (fresh / mirror.MARKER).write_text(mirror.MARKER_TEXT)
    git("add", ".", cwd=fresh)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "replaced", cwd=fresh)
    git("push", "-q", "--force", str(remote), "HEAD:main", cwd=fresh)
    for m in (b, a, b):
        assert m.sync() == 0
    for m in (a, b):
        assert "Use FTS5" in m.memory() and m.sessions() and trashed(m) == []


def test_a_deleted_session_file_and_clear_old_travel_to_every_machine_into_its_trash(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    [gone] = a.sessions()
    (gone.parent / "2020-01-01_0000.md").write_text("# An old session\n")
    connect([a, b], remote)
    assert len(b.sessions()) == 2
    gone.unlink()
    assert a.run("clear", "old", "--older-than", "30", "--yes", "--project-dir", str(a.project)) == 0
    assert a.sync() == 0 and b.sync() == 0
    assert b.sessions() == []
    assert sorted(p.name.split("@")[0] for p in trashed(b)) == ["2020-01-01_0000", gone.stem]
    project_id = trashed(b)[0].parent.parent.parent.name
    assert b.run("restore", "--project", project_id) == 0  # b's copies are restorable on b
    assert len(b.sessions()) == 2


def test_clear_all_on_a_synced_project_clears_it_everywhere_and_restore_brings_it_back(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    connect([a, b], remote)
    capsys.readouterr()
    assert a.run("clear", "all", "--yes", "--project-dir", str(a.project)) == 0
    assert "on every machine" in capsys.readouterr().err
    assert a.sync() == 0 and b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        assert "Use FTS5" not in m.memory() and m.sessions() == [], m.name
    assert any(p.name == "memory.md" for p in trashed(b))
    assert a.run("restore", "--project-dir", str(a.project)) == 0
    assert a.sync() == 0 and b.sync() == 0
    for m in (a, b):
        assert "Use FTS5" in m.memory() and m.sessions(), m.name


def test_the_clear_all_slash_command_on_a_synced_project_warns_that_it_clears_every_machine(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    connect([a, b], remote)
    payload = {
        "session_id": "s9",
        "cwd": str(a.project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "/keeper:clear all",
    }
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "hook", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        env={**a.env(), "KEEPER_SYNC": "false"},
        capture_output=True,
        timeout=60,
    )
    reply = json.loads(done.stdout)
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert "keeper restore" in context and f"syncs with {remote}" in context and "on every machine" in context
    assert "every machine" in reply["systemMessage"]
    assert a.sync() == 0 and b.sync() == 0
    assert "Use FTS5" not in b.memory()


@pytest.mark.parametrize("new_remote", [False, True])
def test_an_item_retired_then_cleared_before_a_sync_stays_retired_everywhere(
    machines: list[Machine], remote: Path, tmp_path: Path, new_remote: bool
) -> None:
    a, b, _ = machines
    a.save("--decision", "Retired before the clear", "--decision", "Use FTS5")
    connect([a, b], remote)
    a.save("--retired", "Retired before the clear")
    assert a.run("clear", "all", "--yes", "--project-dir", str(a.project)) == 0
    flags: list[str] = []
    if new_remote:  # b moves to a new remote first, taking its copy of the item along
        fresh = tmp_path / "fresh.git"
        git("init", "-q", "--bare", str(fresh))
        flags = ["--remote", str(fresh)]
        assert b.sync(*flags) == 0
    assert a.sync(*flags) == 0 and b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        assert "Retired before the clear" not in m.memory(), m.name


def test_a_new_session_never_takes_the_name_of_a_synced_session_file_deleted_by_hand(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    a, b, _ = machines
    assert a.run("save", "--project-dir", str(a.project), "--session", "first", "--summary", "the first") == 0
    connect([a, b], remote)
    [first] = a.sessions()
    first.unlink()  # deleted by hand, before any sync could record it
    assert a.run("save", "--project-dir", str(a.project), "--session", "second", "--summary", "the second") == 0
    [second] = a.sessions()
    assert second.name != first.name
    # the remote's history replaced: no base tells the deleted file from a changed one
    tree = git("--git-dir", str(remote), "rev-parse", "main^{tree}").strip()
    root = git("--git-dir", str(remote), "-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-m", "new")
    git("--git-dir", str(remote), "update-ref", "refs/heads/main", root.strip())
    for m in (a, b, a, b):
        assert m.sync() == 0
    for m in (a, b):
        texts = [p.read_text(encoding="utf-8") for p in m.sessions()]
        assert [t for t in texts if "the second" in t] and not [t for t in texts if "the first" in t], (m.name, texts)


def test_a_project_without_a_hosted_origin_is_backed_up_but_never_listed_elsewhere(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    notes = tmp_path / "notes-a"
    notes.mkdir()
    assert a.run("save", "--project-dir", str(notes), "--decision", "Only on a") == 0
    for m in (a, b, a, b):
        assert m.sync("--remote", str(remote)) == 0
    assert b"Only on a" in remote_objects(remote)  # backed up on the remote, under a's machine
    names = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main").split()
    keys = {n.split("/")[1] for n in names if n.startswith("projects/")}
    machine_a = json.loads((a.store / "sync.json").read_text())["machine"]
    assert any(k.startswith(f"local.{machine_a}.") for k in keys)
    assert not any("Only on a" in p.read_text() for p in b.memory_files())
    capsys.readouterr()
    assert b.run("projects") == 0
    assert "notes-a" not in capsys.readouterr().out


def test_a_project_that_gains_its_origin_joins_the_shared_memory_with_everything_it_backed_up(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    b.save("--decision", "Saved on b first")
    assert b.sync("--remote", str(remote)) == 0
    code = tmp_path / "a-home" / "started-without-origin"
    code.mkdir(parents=True)
    git("init", "-q", cwd=code)
    assert a.run("save", "--project-dir", str(code), "--decision", "Saved before the origin", "--summary", "s1") == 0
    assert a.sync("--remote", str(remote)) == 0  # backed up under a's machine only
    git("remote", "add", "origin", git("remote", "get-url", "origin", cwd=b.project).strip(), cwd=code)
    assert a.run("save", "--project-dir", str(code), "--decision", "Saved after the origin") == 0
    for m in (a, b, a):
        assert m.sync() == 0
    text = b.memory()
    for item in ("Saved on b first", "Saved before the origin", "Saved after the origin"):
        assert text.count(item) == 1, text
    assert len(b.sessions()) == 2  # b's own and a's (both saves of the day went to one session file)
    assert any("s1" in p.read_text(encoding="utf-8") for p in b.sessions())
    assert trashed(a) == [] and trashed(b) == []


def test_two_machines_with_a_folder_at_the_same_path_keep_two_memories(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    a, b, _ = machines
    notes = tmp_path / "notes"
    notes.mkdir()
    assert a.run("save", "--project-dir", str(notes), "--decision", "Written on a") == 0
    assert b.run("save", "--project-dir", str(notes), "--decision", "Written on b") == 0
    for m in (a, b, a, b):
        assert m.sync("--remote", str(remote)) == 0
    texts = {m.name: "".join(p.read_text() for p in m.memory_files()) for m in (a, b)}
    assert "Written on b" not in texts["a"] and "Written on a" not in texts["b"]


@pytest.mark.parametrize("branch", ["master", "trunk", "main"])
def test_a_code_repository_is_refused_whatever_its_branch_and_left_unchanged(
    machines: list[Machine], remote: Path, tmp_path: Path, branch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "code"
    git("init", "-q", "-b", branch, str(work))
    (work / "app.py").write_text("print('hi')\n")
    git("add", ".", cwd=work)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "app", cwd=work)
    git("push", "-q", str(remote), branch, cwd=work)
    refs = git("--git-dir", str(remote), "for-each-ref")
    a = machines[0]
    a.save("--decision", "Use FTS5")
    capsys.readouterr()
    assert a.sync("--remote", str(remote)) == 1
    err = capsys.readouterr().err
    assert err.startswith("keeper: error: ") and "not a Keeper store" in err and err.count("\n") == 1
    assert git("--git-dir", str(remote), "for-each-ref") == refs


def _push_tree(remote: Path, tmp_path: Path, files: dict[str, bytes], links: dict[str, str]) -> None:
    """Another 'machine' pushes these files (and symbolic links) on top of the remote's main."""
    work = tmp_path / "hostile"
    git("clone", "-q", "-b", "main", str(remote), str(work))
    for name, data in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    for name, target in links.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).unlink(missing_ok=True)
        os.symlink(target, work / name)
    git("add", "-A", cwd=work)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "hostile", cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)


def test_what_arrives_is_read_like_an_archive(machines: list[Machine], remote: Path, tmp_path: Path) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    connect([a, b], remote)
    [folder] = {
        n.split("/")[1]
        for n in git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main").split()
        if n.startswith("projects/origin.")
    }
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    _push_tree(
        remote,
        tmp_path,
        {
            f"projects/{folder}/sessions/2026-01-01_0000@evil01.md": f"- key {token}\n".encode(),
            f"projects/{folder}/sessions/2026-01-02_0000@evil01.md": b"x" * (paths.MAX_FILE + 1),
            f"projects/{folder}/sessions/.hidden.md": b"dot file\n",
        },
        {"global/memory.md": "/etc/passwd", f"projects/{folder}/sessions/2026-01-03_0000@evil01.md": "/etc/hostname"},
    )
    assert b.sync() == 0
    landed = {p.name: p for p in b.sessions()}
    assert "2026-01-01_0000@evil01.md" in landed and token not in landed["2026-01-01_0000@evil01.md"].read_text()
    assert not {"2026-01-02_0000@evil01.md", ".hidden.md", "2026-01-03_0000@evil01.md"} & set(landed)
    assert not any(p.is_symlink() for p in b.store.rglob("*"))
    assert "Use FTS5" in b.memory()


def test_a_secret_in_a_session_files_name_is_not_pushed(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    connect([a], remote)
    [session] = a.sessions()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    session.rename(session.with_name(f"2026-01-01_{token}.md"))
    capsys.readouterr()
    assert a.sync() == 1
    err = capsys.readouterr().err
    assert "file name" in err and token not in err
    assert token.encode() not in remote_objects(remote)


def test_export_of_a_synced_store_holds_every_session_file_and_import_restores_them(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "made on a")
    connect([a, b], remote)
    names = sorted(p.name for p in b.sessions())
    assert any("@" in n for n in names)
    out = tmp_path / "b.zip"
    assert b.run("export", "--project-dir", str(b.project), "--out", str(out)) == 0
    for p in b.sessions():
        p.unlink()
    assert b.run("import", str(out), "--project-dir", str(b.project)) == 0
    assert sorted(p.name for p in b.sessions()) == names


def test_an_unreachable_remote_is_one_clear_sentence(
    machines: list[Machine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    capsys.readouterr()
    assert a.sync("--remote", str(tmp_path / "no-such-repo.git")) == 1
    err = capsys.readouterr().err
    assert err.startswith("keeper: error: cannot reach the remote ") and err.count("\n") == 1
    assert "does not appear to be a git repository" in err and "and the repository exists" not in err
    assert "check the address" in err and "try later" not in err  # a wrong address is not fixed by waiting


def test_fetch_and_push_to_a_local_remote_read_no_configuration_of_the_user(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    decoy = tmp_path / "decoy.git"
    git("init", "-q", "--bare", str(decoy))
    # the user's configuration would send every fetch and push for the remote to another repository
    (Path(os.environ["HOME"]) / ".gitconfig").write_text(f'[url "{decoy}"]\n\tinsteadOf = {remote}\n')
    a = machines[0]
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    assert b"Use FTS5" in remote_objects(remote)
    assert git("--git-dir", str(decoy), "for-each-ref") == ""


def test_the_summary_says_up_to_date_only_when_nothing_changed(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5", "--summary", "first session")
    connect([a, b], remote)
    assert "Up to date" in _sync_out(b, capsys)
    for p in a.sessions():
        p.unlink()
    assert a.sync() == 0
    out = _sync_out(b, capsys)
    assert "Up to date" not in out and "moved 1 to the trash" in out and "removed on another machine" in out
    assert (
        json.loads(
            subprocess.run(
                [sys.executable, "-m", "keeper", "sync", "--json"], env=b.env(), capture_output=True, text=True
            ).stdout
        )["removed"]
        == []
    )


def test_an_item_saved_again_after_its_retirement_arrives_everywhere(machines: list[Machine], remote: Path) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    connect([a, b], remote)
    a.save("--retired", "Use FTS5")
    assert a.sync() == 0 and b.sync() == 0
    assert "Use FTS5" not in b.memory()
    a.save("--decision", "Use FTS5")
    assert a.sync() == 0 and b.sync() == 0 and a.sync() == 0
    assert "Use FTS5" in a.memory() and "Use FTS5" in b.memory()


def test_the_record_of_removals_keeps_the_newest_entry_and_a_removal_on_a_tie() -> None:
    from keeper.store import removals

    older = removals.Record(
        sessions={"x.md": ("2026-01-01T00:00:00.000000Z", True)}, items={"k": ("2026-01-02T00:00:00.000000Z", True)}
    )
    newer = removals.Record(
        sessions={"x.md": ("2026-01-03T00:00:00.000000Z", False)}, items={"k": ("2026-01-02T00:00:00.000000Z", False)}
    )
    for merged in (removals.merge(older, newer), removals.merge(newer, older)):
        assert removals.removed(merged, "sessions") == set() and removals.removed(merged, "items") == {"k"}
    assert removals.loads(b"not json") == removals.empty()
    assert removals.parse({"items": {"k": "yes", "j": ["t", 1]}}) == removals.empty()


def test_projects_does_not_list_another_machines_unshared_project_an_older_sync_brought(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = Path(paths.projects_dir()) / "notes-0123456789"
    (folder / "state").mkdir(parents=True)
    (folder / "memory.md").write_text("# Project Memory: notes\n\n## Decisions\n\n- Elsewhere\n")
    (folder / "state" / paths.PROJECT_SYNC).write_text(json.dumps({"key": "local.notes-0123456789", "commit": "x"}))
    from keeper.cli import main

    assert main(["projects"]) == 0
    assert "notes-0123456789" not in capsys.readouterr().out


def _listed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    from keeper.cli import main

    capsys.readouterr()
    assert main(["projects", "--json"]) == 0
    return [p["id"] for p in json.loads(capsys.readouterr().out)]


def test_an_imported_project_with_no_recorded_root_is_still_listed_and_in_the_hub_after_a_sync(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Imported decision")
    archive = tmp_path / "export.zip"
    assert a.run("export", "--out", str(archive)) == 0  # the archive leaves state/project.json out
    assert b.run("import", str(archive)) == 0
    [project_id] = _listed(capsys)
    assert b.sync("--remote", str(remote)) == 0
    record = json.loads((b.store / "projects" / project_id / "state" / paths.PROJECT_SYNC).read_text())
    assert record["key"].startswith("origin.")  # the archive named its repository: that repository's memory here
    assert _listed(capsys) == [project_id]
    hub = tmp_path / "hub.html"
    assert b.run("hub", "--out", str(hub)) == 0
    assert project_id in hub.read_text(encoding="utf-8") and "Imported decision" in hub.read_text(encoding="utf-8")


def test_a_project_of_a_0_1_0_store_is_still_listed_after_the_first_sync(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from keeper.cli import main
    from tests.conftest import REPO

    store = tmp_path / "old-store"
    shutil.copytree(REPO / "tests" / "fixtures" / "stores" / "0.1.0", store)  # 0.1.0 recorded no roots
    monkeypatch.setenv("KEEPER_HOME", str(store))
    assert _listed(capsys) == ["invoices-019c8680a8"]
    assert main(["sync", "--remote", str(remote)]) == 0
    assert _listed(capsys) == ["invoices-019c8680a8"]


def test_projects_does_not_list_another_machines_unshared_project_of_the_current_key_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path(paths.sync_file()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.sync_file()).write_text(json.dumps({"remote": "/nowhere.git", "machine": "aaaaaa"}))
    for name, machine in (("mine-0123456789", "aaaaaa"), ("theirs-0123456789", "bbbbbb")):
        folder = Path(paths.projects_dir()) / name
        (folder / "state").mkdir(parents=True)
        (folder / "memory.md").write_text(f"# Project Memory: {name}\n\n## Decisions\n\n- Here\n")
        record = {"key": f"local.{machine}.{name}", "commit": "x"}
        (folder / "state" / paths.PROJECT_SYNC).write_text(json.dumps(record))
    assert _listed(capsys) == ["mine-0123456789"]


def test_a_sync_typed_in_a_clone_says_where_the_memory_it_brought_lives_and_records_the_root(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    capsys.readouterr()
    assert b.sync("--remote", str(remote), "--project-dir", str(b.project)) == 0  # b never ran Keeper here
    out = capsys.readouterr().out
    [memory] = b.memory_files()
    assert f"{b.project} holds this memory now: {memory.parent}" in out, out
    assert b.run("projects") == 0
    listed = capsys.readouterr().out
    assert str(b.project) in listed and "not recorded" not in listed, listed


def test_a_line_a_person_added_right_after_keepers_current_state_survives_a_save_on_another_machine(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use Postgres", "--state", "Building the index\nthen the API", "--state", "Tests green")
    [memory] = a.memory_files()
    text = memory.read_text(encoding="utf-8")
    assert "- Tests green\n" in text
    memory.write_text(text.replace("- Tests green\n", "- Tests green\n- Waiting for API keys from Dana\n"), "utf-8")
    connect([a, b], remote)
    b.save("--state", "Shipping")
    assert b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        text = m.memory()
        assert "Waiting for API keys from Dana" in text and "Shipping" in text, (m.name, text)
        assert "Building the index" not in text and "Tests green" not in text, (m.name, text)


def test_a_current_state_that_arrives_before_the_project_is_opened_here_is_replaced_by_the_next_save(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use Postgres", "--state", "Building the index")
    connect([a, b], remote)  # b's first sync holds the project apart; its first session takes it in
    b.save("--state", "Shipping")
    text = b.memory()
    assert text.count("Last updated:") == 1 and "Shipping" in text and "Building the index" not in text, text


def test_a_save_typed_in_a_clone_before_its_first_session_joins_the_memory_sync_brought(
    machines: list[Machine], remote: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    assert b.sync("--remote", str(remote)) == 0  # b has never run Keeper in its clone
    b.save("--decision", "Typed on b")
    assert b.sync() == 0 and a.sync() == 0 and b.sync() == 0
    assert len(b.memory_files()) == 1
    text = b.memory_files()[0].read_text()
    assert text.count("Use FTS5") == 1 and "Typed on b" in text


def test_a_new_session_file_never_takes_the_name_of_one_whose_removal_was_recorded(tmp_path: Path) -> None:
    from datetime import datetime

    from keeper.store import removals, sessions

    folder = tmp_path / "store" / "projects" / "proj-1"
    project = paths.Project(str(tmp_path / "proj"), "proj-1", str(folder))
    record = removals.empty()
    record.sessions["2026-01-01_0930@a1b2c3.md"] = (removals.now(), True)
    (folder / "state").mkdir(parents=True)
    removals.write(str(folder), record)
    made = sessions.ensure_file(project, "s1", datetime(2026, 1, 1, 9, 30))
    assert os.path.basename(made) == "2026-01-01_0930-2.md"


def test_a_push_killed_before_its_write_back_then_a_rollback_loses_no_other_machines_file(
    machines: list[Machine], remote: Path
) -> None:
    from unittest import mock

    from keeper.sync import engine

    a, b, c = machines
    a.save("--decision", "Use FTS5")
    connect([a], remote)
    before_c = _tip(remote)
    c.save("--summary", "made on c")
    assert c.sync("--remote", str(remote)) == 0
    made_on_c = [p.name for p in c.sessions()]

    class Killed(BaseException):
        pass

    b.save("--decision", "First from b")
    with mock.patch.object(engine.landing, "land", side_effect=Killed), pytest.raises(Killed):
        b.sync("--remote", str(remote))  # pushed, then killed before b's store took the merge
    git("--git-dir", str(remote), "update-ref", "refs/heads/main", before_c)
    b.save("--decision", "Then from b")  # b has something to push on top of the rolled-back remote
    assert b.sync() == 0 and c.sync() == 0
    assert set(made_on_c) <= {p.name for p in c.sessions()} and trashed(c) == []


def test_a_record_of_removals_nested_past_pythons_limit_on_the_remote_reads_as_none(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use Postgres for storage")
    connect([a, b], remote)
    clone = tmp_path / "hostile"
    git("clone", "-q", "-b", "main", str(remote), str(clone))
    [memory] = clone.glob("projects/*/memory.md")
    (memory.parent / paths.REMOVALS).write_text("[" * 100_000)  # JSON's grammar allows it; Python's parser gives up
    git("add", "-A", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "deep", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=clone)
    assert b.sync() == 0 and a.sync() == 0
    assert "Use Postgres for storage" in b.memory() and "Use Postgres for storage" in a.memory()
