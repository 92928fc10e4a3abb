"""Project identity: one folder, one id, however its path is spelled; two same-named folders never share."""

from __future__ import annotations

import hashlib
import json
import ntpath
import os
import posixpath
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from keeper.errors import KeeperError
from keeper.store import identity, paths


def test_git_top_level_is_found_from_a_subfolder(project_dir: Path) -> None:
    deep = project_dir / "src" / "pkg"
    deep.mkdir(parents=True)
    assert identity.find_project_root(str(deep)) == str(project_dir)


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    (worktree / "sub").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert identity.find_project_root(str(worktree / "sub")) == str(worktree)


def test_without_git_the_folder_itself_is_the_project(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert identity.find_project_root(str(plain)) == str(plain.resolve())


def test_same_name_different_folders_get_different_ids(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "api", tmp_path / "b" / "api"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    ida, idb = identity.project_id(str(a)), identity.project_id(str(b))
    assert ida != idb
    assert ida.startswith("api-") and idb.startswith("api-")


def test_spelling_of_a_posix_path_does_not_change_the_id(project_dir: Path, tmp_path: Path) -> None:
    spellings = [str(project_dir), str(project_dir) + "/", str(project_dir) + "/./"]
    if os.name != "nt":  # a Windows symlink needs a privilege (and Wine's cannot be resolved)
        (tmp_path / "link").symlink_to(project_dir)
        spellings.append(str(tmp_path / "link"))
    ids = {identity.project_id(identity.find_project_root(spelling)) for spelling in spellings}
    assert len(ids) == 1


@pytest.mark.parametrize(
    "spelling",
    [
        r"C:\Users\Ann\Code\API",
        r"c:\users\ann\code\api",
        "C:/Users/Ann/Code/API",
        "C:\\Users\\Ann\\Code\\API\\",
        r"C:\Users\Ann\.\Code\API",
    ],
)
def test_windows_spellings_of_one_folder_share_an_id(spelling: str) -> None:
    assert identity.project_id(spelling, ntpath) == identity.project_id(r"C:\Users\Ann\Code\API", ntpath)


def test_windows_drives_and_unc_paths_stay_distinct() -> None:
    ids = {identity.project_id(p, ntpath) for p in (r"C:\code\api", r"D:\code\api", r"\\server\share\code\api")}
    assert len(ids) == 3


def test_ids_are_stable_across_runs_and_platforms() -> None:
    # Pinned values: a change here would orphan every user's memory.
    assert (
        identity.project_id("/home/ann/code/api", posixpath)
        == "api-" + hashlib.sha256(b"/home/ann/code/api").hexdigest()[:10]
    )
    assert identity.project_id(r"C:\Code\API", ntpath) == "api-" + hashlib.sha256(b"c:/code/api").hexdigest()[:10]


def test_builtin_sha256_matches_hashlib() -> None:
    data = "naïve/路径".encode()
    assert identity.sha256_hex(data) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("My API", "my-api"),
        ("..hidden", "hidden"),
        ("日本語", "project"),
        ("CON", "con"),
        ("a" * 80, "a" * 40),
        ("x--y__z", "x--y__z"),
    ],
)
def test_slugs_are_safe_and_readable(name: str, slug: str) -> None:
    assert identity.slugify(name) == slug


def test_an_id_is_never_a_windows_device_name() -> None:
    assert identity.project_id("/x/con").startswith("con-")


@pytest.mark.parametrize("name", ["shared-api", "team.memory", "A1_b"])
def test_safe_pinned_names_are_accepted(name: str) -> None:
    assert identity.check_pinned_name(name, "keeper.yaml") == name


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "CON", "nul.txt", "-dash", "dot.", 5, None, "x" * 65, "a b"])
def test_unsafe_pinned_names_are_refused_with_a_clear_message(name: object) -> None:
    with pytest.raises(KeeperError, match="project:"):
        identity.check_pinned_name(name, "keeper.yaml")


def test_keeper_home_overrides_the_data_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEPER_HOME", str(tmp_path / "kh"))
    assert paths.data_root() == str(tmp_path / "kh")
    assert paths.global_config_file() == str(tmp_path / "kh" / "config.yaml")


@pytest.mark.parametrize("xdg", [None, "/custom/xdg"])
def test_default_folders_agree_with_platformdirs(xdg: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEEPER_HOME")
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        if xdg is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, xdg)
    assert paths.data_root() == platformdirs.user_data_dir("keeper", appauthor=False)
    assert paths.global_config_file() == os.path.join(
        platformdirs.user_config_dir("keeper", appauthor=False), "config.yaml"
    )


def test_a_relative_xdg_folder_is_ignored_as_the_xdg_spec_requires(monkeypatch: pytest.MonkeyPatch) -> None:
    # platformdirs changed its mind on this between releases (4.4 used it, 4.14 ignores it);
    # Keeper follows the spec so that hooks and CLI agree whatever platformdirs is installed.
    monkeypatch.delenv("KEEPER_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")
    assert os.path.isabs(paths.data_root()) and os.path.isabs(paths.global_config_file())


def test_hostile_session_ids_become_harmless_file_names() -> None:
    assert identity.safe_session_id("../../etc/passwd") == "etcpasswd"
    assert identity.safe_session_id(None) == "unknown"
    assert identity.safe_session_id({"x": 1}) == "unknown"
    assert identity.safe_session_id("e1801971-0299-4ceb-8b30-65fa1eb9e90d") == "e1801971-0299-4ceb-8b30-65fa1eb9e90d"


def test_the_layout_classifies_every_file_and_derived_ones_can_go(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run what a user runs, then: the durable files are the memory, and deleting every derived
    file loses nothing (recall, status and the next session start come back the same)."""
    from keeper.cli import main

    main(["save", "--decision", "Money is integer cents", "--summary", "set up billing"])
    main(["save", "--global", "--feedback", "Answer in British English"])
    for command in (["recall", "integer cents"], ["status"], ["hub"], ["projects"]):
        assert main(command) == 0
    capsys.readouterr()
    root = Path(paths.data_root())
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    kinds = {name: paths.kind(name) for name in files}
    durable = sorted(n for n, k in kinds.items() if k == paths.DURABLE)
    assert durable[:2] == ["global/memory.md", "global/provenance.jsonl"] and len(durable) == 5
    assert durable[2].endswith("/memory.md") and durable[3].endswith("/provenance.jsonl")
    assert durable[4].split("/")[2] == "sessions"
    before = json.loads(_run_json(main, capsys, ["recall", "integer cents", "--json"]))
    for name, kind in kinds.items():
        if kind == paths.DERIVED:
            (root / name).unlink()
    after = json.loads(_run_json(main, capsys, ["recall", "integer cents", "--json"]))
    assert [(r["path"], r["heading"], r["line"]) for r in after] == [
        (r["path"], r["heading"], r["line"]) for r in before
    ]


def _run_json(main: Any, capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 0
    return str(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("projects/api-1/memory.md", "durable"),
        ("projects/api-1/sessions/2026-11-24_1500.md", "durable"),
        ("global/memory.md", "durable"),
        ("projects/api-1/provenance.jsonl", "durable"),
        ("global/provenance.jsonl", "durable"),
        ("projects/api-1/state/provenance.jsonl", "derived"),
        ("projects/api-1/sessions/.2026-11-24_1500.md.tmp", "derived"),
        ("projects/api-1/state/index.sqlite3", "derived"),
        ("projects/api-1/state/memory.json", "local"),
        ("projects/api-1/state/sessions/memory.json", "derived"),
        ("projects/api-1/state/sessions/s-1.tally", "derived"),
        ("config.yaml", "local"),
        ("pins.json", "local"),
        ("trash/api-1/20260101-000000/memory.md", "derived"),
        ("hub.html", "derived"),
        ("logs/keeper.log", "derived"),
        ("projects/api-1/sessions/sub/x.md", "derived"),
        ("projects\\api-1\\memory.md", "durable"),
    ],
)
def test_kinds(name: str, kind: str) -> None:
    assert paths.kind(name) == kind


@pytest.mark.parametrize("session", ["memory", "project", "removed", "removals"])
def test_a_session_named_like_one_of_keepers_records_leaves_the_record_alone(
    project_dir: Path, session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Session state lives in a folder of its own: ``keeper save --session memory`` once overwrote
    ``state/memory.json``, the record of the lines Keeper wrote."""
    from keeper.cli import main

    assert main(["save", "--decision", "Money is integer cents", "--issue", "Floats in the cart"]) == 0
    assert main(["save", "--resolved", "Floats in the cart"]) == 0
    assert main(["save", "--session", session, "--summary", "Moved the cart to cents"]) == 0
    [state] = Path(paths.data_root()).glob(f"{paths.PROJECTS_DIR}/*/{paths.STATE_DIR}")
    records = [state / name for name in (paths.OWNED_LINES, paths.ROOT_RECORD, paths.REMOVED, paths.REMOVALS)]
    for record in records[:3] + [r for r in records[3:] if r.exists()]:  # no sync: no removals record
        assert "last_save" not in json.loads(record.read_text(encoding="utf-8")), record.name
    assert "Moved the cart to cents" in (state / paths.OWNED_LINES).read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["projects", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["root"] == str(project_dir)


def test_status_takes_the_last_save_from_session_state_alone(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.cli import main

    assert main(["save", "--session", "s-1", "--decision", "Money is integer cents"]) == 0
    [state] = Path(paths.data_root()).glob(f"{paths.PROJECTS_DIR}/*/{paths.STATE_DIR}")
    saved = json.loads((state / paths.SESSION_STATE / "s-1.json").read_text(encoding="utf-8"))["last_save"]
    (state / paths.PROJECT_SYNC).write_text(json.dumps({"last_save": "2999-01-01T00:00:00"}), encoding="utf-8")
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["last_save"] == saved  # a record of Keeper's is no session
