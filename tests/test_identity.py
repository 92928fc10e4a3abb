"""Which project a folder belongs to, on real git layouts: worktrees share, sub-projects stand apart.

Repositories here are made by git itself (``git init``, ``git worktree add``, ``git submodule
add``); the damaged layouts git would never write are built by hand. Stores made under the old
rule (the nearest ``.git`` was the project) are taken over once, and every byte of them survives.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from keeper import cli
from keeper.hooks import entry
from keeper.store import identity, migrate, pins
from keeper.store.resolve import resolve

GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )


def new_repo(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A repository with one commit holding ``files`` (``git worktree add`` needs a commit)."""
    folder.mkdir(parents=True)
    for name, text in {"README": "x\n", **(files or {})}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "start")
    return folder


def add_worktree(main: Path, name: str) -> Path:
    git(main, "worktree", "add", "-q", "-b", name, str(main.parent / name))
    return main.parent / name


def real(path: Path) -> str:
    return os.path.realpath(path)


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, Path]:
    """A main work tree ``code/shop`` and its linked worktree ``code/shop-feature``."""
    main = new_repo(tmp_path / "code" / "shop")
    return main, add_worktree(main, "shop-feature")


def log_lines(store: Path, level: str) -> list[str]:
    log = store / "logs" / "keeper.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [line for line in lines if f" {level} " in line]


def inventory(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes (lock files hold nothing and are left out)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


# -- worktrees --------------------------------------------------------------------------------


@pytest.mark.needs("git")
def test_a_worktree_and_its_main_tree_are_one_project(shop: tuple[Path, Path]) -> None:
    main, wt = shop
    (wt / "src" / "deep").mkdir(parents=True)
    roots = {identity.find_project_root(str(p)) for p in (main, wt, wt / "src" / "deep")}
    assert roots == {real(main)}
    a, b = resolve(str(main), "s", strict=True), resolve(str(wt / "src" / "deep"), "s", strict=True)
    assert (a.project.id, a.project.dir) == (b.project.id, b.project.dir)
    assert a.project.id == identity.project_id(real(main))
    assert a.project.name == "shop"


@pytest.mark.needs("git")
def test_two_worktrees_share_and_another_repository_does_not(shop: tuple[Path, Path], tmp_path: Path) -> None:
    main, wt = shop
    second = add_worktree(main, "shop-hotfix")
    other = new_repo(tmp_path / "elsewhere" / "shop")
    ids = {resolve(str(p), "s", strict=True).project.id for p in (main, wt, second)}
    assert len(ids) == 1 and resolve(str(other), "s", strict=True).project.id not in ids


@pytest.mark.needs("git")
@pytest.mark.parametrize(
    ("gitfile", "commondir"),
    [
        ("gitdir: {abs}\n", "../..\n"),
        ("gitdir: {abs}\r\n", "../..\r\n"),
        ("gitdir: ../shop/.git/worktrees/shop-feature\n", "../..\n"),
        ("  gitdir:   ../shop/.git/worktrees/shop-feature  \r\n\r\n", "  ../..  \r\n"),
        ("gitdir: {abs}", "{common}"),  # absolute commondir, no newline at all
    ],
    ids=["absolute", "crlf", "relative", "padded", "absolute-commondir"],
)
def test_pointer_files_in_any_spelling_lead_to_the_main_tree(
    shop: tuple[Path, Path], gitfile: str, commondir: str
) -> None:
    main, wt = shop
    gitdir = main / ".git" / "worktrees" / "shop-feature"
    (wt / ".git").write_bytes(gitfile.format(abs=gitdir).encode())
    (gitdir / "commondir").write_bytes(commondir.format(common=main / ".git").encode())
    assert identity.find_project_root(str(wt)) == real(main)


def damage(kind: str, wt: Path, main: Path) -> None:
    gitdir = main / ".git" / "worktrees" / "shop-feature"
    commondir = gitdir / "commondir"
    if kind == "empty .git file":
        (wt / ".git").write_bytes(b"")
    elif kind == "no gitdir: line":
        (wt / ".git").write_bytes(b"this is not a pointer\n")
    elif kind == "gitdir gone":
        (wt / ".git").write_bytes(b"gitdir: /nonexistent/.git/worktrees/x\n")
    elif kind == "gitdir with NUL":
        (wt / ".git").write_bytes(b"gitdir: /tmp/a\x00b\n")
    elif kind == "gitdir not UTF-8":
        (wt / ".git").write_bytes(b"gitdir: /tmp/\xff\xfe\n")
    elif kind == "commondir missing":
        commondir.unlink()
    elif kind == "commondir empty":
        commondir.write_bytes(b"")
    elif kind == "commondir is a folder":
        commondir.unlink()
        commondir.mkdir()
    elif kind == "commondir points nowhere":
        commondir.write_bytes(b"../../../nowhere/.git\n")
    elif kind == "commondir garbled":
        commondir.write_bytes(b"\x00\xff garbage\n")


@pytest.mark.needs("git")
@pytest.mark.parametrize(
    "kind",
    [
        "empty .git file",
        "no gitdir: line",
        "gitdir gone",
        "gitdir with NUL",
        "gitdir not UTF-8",
        "commondir missing",
        "commondir empty",
        "commondir is a folder",
        "commondir points nowhere",
        "commondir garbled",
    ],
)
def test_a_damaged_pointer_falls_back_to_the_worktrees_own_top_level(shop: tuple[Path, Path], kind: str) -> None:
    main, wt = shop
    (wt / "sub").mkdir()
    damage(kind, wt, main)
    assert identity.find_project_root(str(wt / "sub")) == real(wt)
    at = resolve(str(wt / "sub"), "s", strict=False)  # the hook path: answers, logs no error
    assert at.project.root == real(wt)


@pytest.mark.needs("git")
def test_a_dangling_git_link_is_no_repository(shop: tuple[Path, Path]) -> None:
    _, wt = shop
    (wt / ".git").unlink()
    (wt / ".git").symlink_to(wt / "missing")
    assert identity.find_project_root(str(wt)) == real(wt)  # outside git (tmp has no .git): the folder itself


@pytest.mark.needs("git")
def test_a_submodule_is_its_own_project(tmp_path: Path) -> None:
    lib = new_repo(tmp_path / "upstream" / "lib")
    app = new_repo(tmp_path / "code" / "app")
    git(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    assert (app / "vendor" / "lib" / ".git").is_file()  # a pointer into app/.git/modules/
    (app / "vendor" / "lib" / "src").mkdir()
    assert identity.find_project_root(str(app / "vendor" / "lib" / "src")) == real(app / "vendor" / "lib")
    assert identity.find_project_root(str(app / "vendor")) == real(app)


def test_a_hand_built_submodule_pointer_keeps_its_own_top_level(tmp_path: Path) -> None:
    modules = tmp_path / "super" / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (modules / "HEAD").write_text("ref: refs/heads/main\n")
    lib = tmp_path / "super" / "lib"
    lib.mkdir()
    (lib / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert identity.find_project_root(str(lib)) == real(lib)


def forge(kind: str, victim: Path, wt: Path, stranger: Path) -> None:
    """A downloaded folder ``stranger`` whose ``.git`` file claims to belong to ``victim``."""
    gitdir = victim / ".git" / "worktrees" / wt.name
    if kind == "victim's worktree gitdir":
        (stranger / ".git").write_text(f"gitdir: {gitdir}\n")
    elif kind == "victim's worktree gitdir, relative":
        (stranger / ".git").write_text(f"gitdir: {os.path.relpath(gitdir, stranger)}\n")
    elif kind == "victim's .git itself":
        (stranger / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    elif kind == "own gitdir whose commondir is the victim's":  # back-pointer agrees, but git never made it
        fake = stranger / ".fake"
        fake.mkdir()
        (fake / "commondir").write_text(f"{victim / '.git'}\n")
        (fake / "gitdir").write_text(f"{stranger / '.git'}\n")
        (stranger / ".git").write_text(f"gitdir: {fake}\n")
    elif kind == "own worktrees folder beside a .git named folder":
        fake_common = stranger / "x" / ".git"
        (fake_common / "worktrees" / "w").mkdir(parents=True)
        (fake_common / "worktrees" / "w" / "commondir").write_text(f"{victim / '.git'}\n")
        (fake_common / "worktrees" / "w" / "gitdir").write_text(f"{stranger / '.git'}\n")
        (stranger / ".git").write_text(f"gitdir: {fake_common / 'worktrees' / 'w'}\n")


@pytest.mark.needs("git")
@pytest.mark.parametrize(
    "kind",
    [
        "victim's worktree gitdir",
        "victim's worktree gitdir, relative",
        "victim's .git itself",
        "own gitdir whose commondir is the victim's",
        "own worktrees folder beside a .git named folder",
    ],
)
def test_a_forged_git_file_never_gives_a_folder_another_projects_memory(
    shop: tuple[Path, Path], tmp_path: Path, kind: str
) -> None:
    main, wt = shop
    stranger = tmp_path / "Downloads" / "stranger"
    (stranger / "src").mkdir(parents=True)
    forge(kind, main, wt, stranger)
    assert identity.find_project_root(str(stranger / "src")) == real(stranger)
    victim = resolve(str(main), "s", strict=True).project
    assert resolve(str(stranger / "src"), "s", strict=True).project.id != victim.id
    assert identity.find_project_root(str(wt)) == real(main)  # the real worktree still shares


@pytest.mark.needs("git")
def test_a_worktree_whose_back_pointer_is_relative_is_accepted(shop: tuple[Path, Path]) -> None:
    main, wt = shop  # git 2.48+ with worktree.useRelativePaths writes relative pointers both ways
    gitdir = main / ".git" / "worktrees" / "shop-feature"
    (gitdir / "gitdir").write_text(os.path.relpath(wt / ".git", gitdir) + "\n")
    (wt / ".git").write_text(f"gitdir: {os.path.relpath(gitdir, wt)}\n")
    assert identity.find_project_root(str(wt)) == real(main)


@pytest.mark.needs("git")
def test_a_worktree_git_no_longer_knows_is_its_own_project(shop: tuple[Path, Path], tmp_path: Path) -> None:
    _, wt = shop
    moved = tmp_path / "moved"
    wt.rename(moved)  # moved by hand without `git worktree repair`: git itself no longer follows it
    assert identity.find_project_root(str(moved)) == real(moved)


@pytest.mark.needs("git")
def test_a_worktree_of_a_bare_repository_keeps_its_own_top_level(tmp_path: Path) -> None:
    source = new_repo(tmp_path / "src" / "shop")
    git(tmp_path, "clone", "-q", "--bare", str(source), "shop.git")
    git(tmp_path / "shop.git", "worktree", "add", "-q", "-b", "feature", str(tmp_path / "shop-feature"))
    assert identity.find_project_root(str(tmp_path / "shop-feature")) == real(tmp_path / "shop-feature")


# -- sub-projects -----------------------------------------------------------------------------

MONOREPO = {
    ".claude/keeper.yaml": "save_every: 4\n",
    "services/api/.claude/keeper.yaml": "save_every: 5\n",
    "services/api/src/app.py": "",
    "services/billing/.claude/keeper.yaml": "save_every: 6\n",
    "services/web/index.html": "",
}


@pytest.mark.needs("git")
def test_a_folder_with_keeper_yaml_is_a_sub_project_and_the_rest_belongs_to_the_top(tmp_path: Path) -> None:
    mono = new_repo(tmp_path / "mono", MONOREPO)
    api, web = mono / "services" / "api", mono / "services" / "web"
    assert {identity.find_project_root(str(p)) for p in (api, api / "src")} == {real(api)}
    assert {identity.find_project_root(str(p)) for p in (web, web.parent, mono)} == {real(mono)}
    ids = {resolve(str(mono / p), "s", strict=True).project.id for p in ("services/api", "services/billing", ".")}
    assert len(ids) == 3  # two sub-projects never share, nor with the top level
    assert resolve(str(mono / "services" / "api" / "src"), "s", strict=True).cfg.save_every == 5


@pytest.mark.needs("git")
def test_a_sub_project_in_a_worktree_is_the_same_sub_project_with_the_worktrees_settings(tmp_path: Path) -> None:
    mono = new_repo(tmp_path / "mono", MONOREPO)
    wt = add_worktree(mono, "mono-feature")
    (wt / "services" / "api" / ".claude" / "keeper.yaml").write_text("save_every: 9\n", encoding="utf-8")
    here = resolve(str(wt / "services" / "api" / "src"), "s", strict=True)
    there = resolve(str(mono / "services" / "api"), "s", strict=True)
    assert here.project.root == there.project.root == real(mono / "services" / "api")
    assert here.project.id == there.project.id
    assert (here.cfg.save_every, there.cfg.save_every) == (9, 5)  # the checkout in use decides
    top = resolve(str(wt / "services" / "web"), "s", strict=True)  # a top-level keeper.yaml names no sub-project
    assert top.project.root == real(mono) and top.cfg.save_every == 4


def test_outside_git_keeper_yaml_above_is_not_looked_for(tmp_path: Path) -> None:
    (tmp_path / "plain" / ".claude").mkdir(parents=True)
    (tmp_path / "plain" / ".claude" / "keeper.yaml").write_text("save_every: 5\n")
    (tmp_path / "plain" / "sub").mkdir()
    assert identity.find_project_root(str(tmp_path / "plain" / "sub")) == real(tmp_path / "plain" / "sub")


@pytest.mark.needs("git")
def test_claude_codes_own_folder_never_makes_home_a_project() -> None:
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text("{}")
    (home / ".claude" / "keeper.yaml").write_text("save_every: 5\n")
    (home / "notes" / "drafts").mkdir(parents=True)
    assert identity.find_project_root(str(home / "notes" / "drafts")) == real(home / "notes" / "drafts")
    repo = new_repo(home / "code" / "shop")
    assert identity.find_project_root(str(repo)) == real(repo)


@pytest.mark.needs("git")
def test_a_hook_in_a_worktree_counts_into_the_shared_project(shop: tuple[Path, Path], store: Path) -> None:
    main, wt = shop
    payload = json.dumps({"session_id": "s1", "cwd": str(wt / "."), "tool_name": "Read"}).encode()
    assert entry.handle("post-tool-use", payload) == {}
    shared = identity.make_project(real(main))
    assert os.path.exists(shared.session_file("s1", "tally"))
    assert sorted(os.listdir(store / "projects")) == [shared.id]


@pytest.mark.needs("git")
def test_status_in_a_worktree_shows_the_main_trees_root(
    shop: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    main, wt = shop
    assert cli.main(["status", "--project-dir", str(wt), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["project"]["root"] == real(main) and data["project"]["id"] == identity.project_id(real(main))
    assert cli.main(["status", "--project-dir", str(wt)]) == 0
    assert f"project root  {real(main)}" in capsys.readouterr().out


# -- taking over stores made under the old rule -----------------------------------------------


def old_store(store: Path, folder: Path, files: dict[str, str]) -> Path:
    """A store as the old rule made it: its id hashed the nearest ``.git`` folder, here ``folder``."""
    old = store / "projects" / identity.project_id(real(folder))
    for name, text in files.items():
        (old / name).parent.mkdir(parents=True, exist_ok=True)
        (old / name).write_text(text, encoding="utf-8")
    return old


@pytest.mark.needs("git")
def test_a_worktrees_old_store_is_moved_once_with_a_log_line(shop: tuple[Path, Path], store: Path) -> None:
    main, wt = shop
    old = old_store(
        store,
        wt,
        {"memory.md": "# Project Memory: shop-feature\n", "sessions/2026-01-02_1030.md": "s1", "state/s.json": "{}"},
    )
    (old / ".lock").write_text("")
    before = inventory(old)
    at = resolve(str(wt), "s", strict=True)
    assert not old.exists()
    after = inventory(Path(at.project.dir))
    assert json.loads(after.pop("state/project.json"))["root"] == real(main)  # the root, noted for `keeper projects`
    assert after == before
    moved = [line for line in log_lines(store, "INFO") if " migrate " in line]
    assert len(moved) == 1 and old.name in moved[0] and at.project.id in moved[0]
    resolve(str(wt), "s", strict=True)
    resolve(str(main), "s", strict=True)
    assert len([line for line in log_lines(store, "INFO") if " migrate " in line]) == 1


@pytest.mark.needs("git")
def test_when_both_stores_exist_every_old_file_is_kept(
    shop: tuple[Path, Path], store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main, wt = shop
    old = old_store(
        store,
        wt,
        {
            "memory.md": "# Project Memory: shop-feature\n\n## Core Decisions\n- use zanzibar tokens\n",
            "sessions/2026-01-02_1030.md": "old clash",
            "sessions/2026-01-02_1030-2.md": "old clash two",
            "sessions/2026-01-03_0900.md": "old only",
            "state/s.json": '{"file": "2026-01-02_1030.md"}',
            "state/index.sqlite3": "db",
            "notes.txt": "a person's file",
        },
    )
    new = old_store(
        store,
        main,
        {"memory.md": "# Project Memory: shop\n", "sessions/2026-01-02_1030.md": "new", "state/s.json": "{}"},
    )
    before_old, before_new = inventory(old), inventory(new)
    resolve(str(wt), "s", strict=True)
    assert not old.exists()
    after, trashed = inventory(new), inventory(store / "trash" / old.name)
    everything = [*after.values(), *trashed.values()]
    assert all(everything.count(data) >= list(before_old.values()).count(data) for data in before_old.values())
    assert all(after[name] == data for name, data in before_new.items())  # the new store's files are untouched
    day = time.strftime("%Y-%m-%d")
    assert json.loads(after.pop("state/project.json"))["root"] == real(main)
    assert {name: after[name] for name in after if name not in before_new} == {
        "notes.txt": b"a person's file",  # no clash: moved across as it was
        "sessions/2026-01-02_1030-2.md": b"old clash two",  # its own name was free
        "sessions/2026-01-02_1030-3.md": b"old clash",  # taken twice over: the next free suffix
        "sessions/2026-01-03_0900.md": b"old only",
        f"sessions/{day}_0000-migrated-{old.name}.md": before_old["memory.md"],
    }
    assert sorted(name.split("/", 1)[1] for name in trashed) == ["state/index.sqlite3", "state/s.json"]
    assert cli.main(["recall", "zanzibar", "--project-dir", str(main), "--json"]) == 0
    assert any("_0000-migrated-" in hit["path"] for hit in json.loads(capsys.readouterr().out))
    assert len([line for line in log_lines(store, "INFO") if " migrate " in line]) == 1


@pytest.mark.needs("git")
def test_a_sub_project_never_takes_the_top_levels_store(tmp_path: Path, store: Path) -> None:
    mono = new_repo(tmp_path / "mono", MONOREPO)
    top = old_store(store, mono, {"memory.md": "top\n"})
    at = resolve(str(mono / "services" / "api"), "s", strict=True)
    assert at.project.root == real(mono / "services" / "api")
    assert inventory(top) == {"memory.md": b"top\n"} and not os.path.exists(at.project.dir)


@pytest.mark.needs("git")
def test_a_pinned_project_takes_over_nothing(shop: tuple[Path, Path], store: Path) -> None:
    _, wt = shop
    old = old_store(store, wt, {"memory.md": "mine\n"})
    (wt / ".claude").mkdir()
    (wt / ".claude" / "keeper.yaml").write_text("project: shop-pinned\n", encoding="utf-8")
    pins.allow("shop-pinned", str(wt.resolve()))
    assert resolve(str(wt), "s", strict=True).project.id == "shop-pinned"
    assert inventory(old) == {"memory.md": b"mine\n"}


@pytest.mark.needs("git")
def test_a_failed_move_is_logged_and_retried_and_the_hook_goes_on(
    shop: tuple[Path, Path], store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, wt = shop
    old = old_store(store, wt, {"memory.md": "mine\n", "sessions/2026-01-02_1030.md": "s"})

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied", src)

    payload = json.dumps({"session_id": "s1", "cwd": str(wt), "tool_name": "Read"}).encode()
    with monkeypatch.context() as patched:
        patched.setattr(migrate.os, "rename", refuse)
        assert entry.handle("post-tool-use", payload) == {}
    assert inventory(old) == {"memory.md": b"mine\n", "sessions/2026-01-02_1030.md": b"s"}
    assert any(" migrate WARN " in line and "will retry" in line for line in log_lines(store, "WARN"))
    at = resolve(str(wt), "s1", strict=False)
    assert os.path.exists(at.project.session_file("s1", "tally"))  # the hook counted meanwhile
    assert not old.exists() and (Path(at.project.dir) / "memory.md").read_text() == "mine\n"
