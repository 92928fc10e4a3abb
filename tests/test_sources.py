"""Memory sources as untrusted input: Claude Code's auto memory folder, and the derived index.

Only regular files inside the auto memory folder are read, bounded and without blocking; a tampered
or replaced index never leads recall to a file outside the sources nor runs SQL it brings; and a
large store's index is built in steps that keep their progress.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from keeper.cli import main
from keeper.recall import index, search, sources
from keeper.store import identity, paths
from tests.helpers import run_hook

SECRET_WORDS = "zanzibar quokka marmalade"


def _native(project_dir: Path) -> Path:
    root = identity.find_project_root(str(project_dir))
    folder = Path(sources.native_dir(identity.make_project(root)))
    folder.mkdir(parents=True)
    (folder / "feedback_deploy.md").write_text("# Deploy\n\nStaging deploys need the corporate VPN up.\n")
    return folder


def _recall(capsys: pytest.CaptureFixture[str], query: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["recall", query, "--json"]) == 0
    found: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return found


@pytest.mark.parametrize("target", ["other-project", "outside-file", "folder-link"])
def test_links_out_of_the_auto_memory_folder_are_not_followed(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    folder = _native(project_dir)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "memory.md").write_text(f"# Another project\n\n- {SECRET_WORDS}\n")
    if target == "other-project":
        (folder / "leak.md").symlink_to(outside / "memory.md")
    elif target == "outside-file":
        (folder / "passwd.md").symlink_to(outside / "memory.md")
    else:
        (folder / "sub.md").symlink_to(outside, target_is_directory=True)
    assert _recall(capsys, SECRET_WORDS) == []
    assert _recall(capsys, "staging VPN")[0]["scope"] == "native"  # the real file is still found


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="Windows has no FIFO (nor /dev/zero)")
def test_a_folder_named_like_a_file_a_fifo_and_a_huge_file_do_not_break_recall(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _native(project_dir)
    (folder / "x.md").mkdir()
    os.mkfifo(folder / "pipe.md")
    with open(folder / "sparse.md", "wb") as fh:  # 2 GiB that take no disk: read, it would take the memory
        fh.truncate(2 << 30)
    (folder / "zero.md").symlink_to("/dev/zero")
    code = "import sys; from keeper.cli import main; sys.exit(main(['recall', 'staging VPN', '--json']))"
    limit = 1 << 30  # 1 GiB of address space: reading the sparse file whole would fail

    def cap() -> None:
        import resource  # POSIX only: the test is skipped on Windows, which has no FIFO

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, preexec_fn=cap, cwd=project_dir, check=False
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    found = json.loads(done.stdout)
    assert found and found[0]["id"].startswith("native/feedback_deploy.md:")
    assert {os.path.basename(str(r["path"])) for r in found} <= {"feedback_deploy.md", "sparse.md"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="Windows has no FIFO")
def test_source_reads_are_bounded_and_never_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # opening a FIFO for reading blocks until a writer comes
    assert sources.read(str(tmp_path / "pipe.md")) is None
    (tmp_path / "big.md").write_text("line of text\n" * 1000)
    text = sources.read(str(tmp_path / "big.md"), limit=100)
    assert text is not None and len(text) <= 100 and text.endswith("\n")
    (tmp_path / "link.md").symlink_to(tmp_path / "big.md")
    assert sources.read(str(tmp_path / "link.md")) is None


@pytest.mark.parametrize(
    "name",
    ["../outside.md", "sessions/../../outside.md", "native/../../outside.md", "/etc/passwd", "global/../x.md", "x"],
)
def test_no_index_name_leads_out_of_the_sources(project_dir: Path, name: str) -> None:
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    assert sources.path_of(project, name) is None


def _built(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> paths.Project:
    main(["save", "--decision", "Money is integer cents everywhere"])
    assert _recall(capsys, "integer cents")
    return identity.make_project(identity.find_project_root(str(project_dir)))


def test_rows_planted_in_the_index_never_show_a_file_outside_the_sources(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _built(project_dir, capsys)
    secret = tmp_path / "outside.md"
    secret.write_text(f"# Outside\n\n{SECRET_WORDS}\n")
    con = sqlite3.connect(project.index)
    planted = os.path.relpath(secret, project.dir)
    con.execute("INSERT INTO files VALUES (9000, ?, 0, 0)", (planted,))
    terms = "zanzibar quokka marmalad"
    con.execute("INSERT INTO sections VALUES (9000, 9000, 1, 'Outside', 3, ?, '')", (terms,))
    con.execute("INSERT INTO fts(rowid, terms) VALUES (9000, ?)", (terms,))
    con.commit()
    con.close()
    assert _recall(capsys, SECRET_WORDS) == []
    assert search.search(project, SECRET_WORDS, thorough=False) == []


@pytest.mark.parametrize(
    "planted",
    [
        "CREATE TRIGGER spy AFTER INSERT ON files BEGIN INSERT INTO meta VALUES ('pwned', new.name); END",
        "CREATE VIEW v AS SELECT * FROM files",
        "CREATE TABLE extra(x)",
        "CREATE INDEX odd ON files(size)",
    ],
    ids=["trigger", "view", "table", "index"],
)
def test_an_index_with_anything_but_keepers_schema_is_rebuilt(
    project_dir: Path, capsys: pytest.CaptureFixture[str], planted: str
) -> None:
    project = _built(project_dir, capsys)
    con = sqlite3.connect(project.index)
    con.execute(planted)
    con.commit()
    con.close()
    main(["save", "--decision", "Orders ship from the nearest warehouse"])  # a change: the index is written
    assert _recall(capsys, "nearest warehouse")[0]["snippet"]
    con = sqlite3.connect(project.index)
    schema = {name for (name,) in con.execute("SELECT name FROM sqlite_master")}
    pwned = con.execute("SELECT count(*) FROM meta WHERE key = 'pwned'").fetchone()[0]
    con.close()
    assert not {"spy", "v", "extra", "odd"} & schema and pwned == 0


def test_an_index_of_keepers_schema_opens_without_making_the_schema_in_memory(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each prompt opens the index: its schema is told Keeper's by the rows written down
    (``index._WRITTEN``), which are the rows this SQLite makes, not by a database made in memory."""
    project = _built(project_dir, capsys)
    assert index._reference_schema() == index._WRITTEN
    index._REFERENCE.clear()
    con = index.open_index(project)
    assert con is not None
    con.close()
    assert not index._REFERENCE


def _sessions(project: paths.Project, count: int) -> None:
    folder = Path(project.sessions)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        day = f"2026-{1 + i // 280 % 12:02d}-{1 + i // 10 % 28:02d}"
        (folder / f"{day}_{i % 10:02d}{i // 3360:02d}-{i}.md").write_text(
            f"# Session {day}\n\n## Saves\n\n- worked on widget {i} and the flux capacitor\n"
        )


def _indexed(project: paths.Project) -> int:
    con = sqlite3.connect(project.index)
    try:
        return int(con.execute("SELECT count(*) FROM files WHERE name LIKE 'sessions/%'").fetchone()[0])
    finally:
        con.close()


def test_automatic_recall_builds_a_large_index_in_steps_that_keep_their_progress(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    _sessions(project, 230)
    monkeypatch.setattr(index, "BATCH", 50)
    monkeypatch.setattr(index, "PROMPT_BUDGET", 0.0)  # every prompt runs past it: one batch a prompt
    prompt = {"session_id": "s1", "prompt": "what did we do about the flux capacitor widget", "cwd": str(project_dir)}
    seen = []
    for _ in range(6):
        run_hook("user-prompt-submit", prompt, monkeypatch, capsys)
        seen.append(_indexed(project))
    assert seen == [50, 100, 150, 200, 230, 230]
    assert search.search(project, "flux capacitor widget 229", limit=1)[0].chunk.path.endswith("-229.md")


def test_a_build_cut_short_keeps_every_batch_it_finished(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    _sessions(project, 120)
    monkeypatch.setattr(index, "BATCH", 50)
    real_write = index._write
    calls = []

    def killed_on_the_third(*args: object, **kwargs: object) -> int:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # what a hook killed at its time limit leaves behind
        return real_write(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_write", killed_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        search.search(project, "flux capacitor")
    assert _indexed(project) == 100
    monkeypatch.setattr(index, "_write", real_write)
    assert search.search(project, "widget 119 flux", limit=1)[0].chunk.path.endswith("-119.md")
    assert _indexed(project) == 120


def test_automatic_recall_does_not_read_a_large_store_file_by_file(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an index (a Python without FTS5, an index that cannot be opened), automatic recall
    in a store larger than it can read in a prompt's time finds nothing rather than being killed."""
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    _sessions(project, 30)
    monkeypatch.setattr(index, "open_index", lambda _project: None)
    monkeypatch.setattr(search, "SCAN_AT_PROMPT_UP_TO", 20)
    assert search.search(project, "flux capacitor", thorough=False) == []
    assert search.search(project, "flux capacitor widget 7", limit=1)[0].chunk.path.endswith("-7.md")


def test_a_new_index_file_that_brings_a_trigger_is_not_built_on(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file of user_version 0 passes for a new index; it may hold only the meta table Keeper makes first."""
    main(["save", "--decision", "Money is integer cents everywhere"])
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    Path(project.state).mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(project.index)
    con.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID")
    # named like the table: a check that looked at names alone let it through, and it ran in the build
    con.execute("CREATE TRIGGER meta AFTER INSERT ON meta BEGIN INSERT INTO files(name) VALUES ('pwned'); END")
    con.commit()
    con.close()
    assert _recall(capsys, "integer cents")
    con = sqlite3.connect(project.index)
    names = {name for (name,) in con.execute("SELECT name FROM files")}
    triggers = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()[0]
    con.close()
    assert "pwned" not in names and triggers == 0


def test_tampered_counts_in_the_index_do_not_break_recall(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _built(project_dir, capsys)
    con = sqlite3.connect(project.index)
    con.execute("UPDATE meta SET value = '-5' WHERE key IN ('sections', 'terms')")
    con.commit()
    con.close()
    assert _recall(capsys, "integer cents")[0]["snippet"]


def test_an_auto_memory_folder_that_is_a_link_is_not_read(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link where the project's auto memory folder should be leads to another project's files."""
    root = identity.find_project_root(str(project_dir))
    folder = Path(sources.native_dir(identity.make_project(root)))
    elsewhere = tmp_path / "other-project-memory"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text(f"# Other\n\n{SECRET_WORDS}\n")
    folder.parent.mkdir(parents=True)
    folder.symlink_to(elsewhere, target_is_directory=True)
    main(["save", "--decision", "Money is integer cents"])
    assert _recall(capsys, SECRET_WORDS) == []
