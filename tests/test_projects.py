"""`keeper projects`: every project in the store, where it lives, and a way to clear one whose folder is gone."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from keeper.cli import main
from keeper.store import identity, paths
from keeper.store.resolve import resolve
from tests import hubstore


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The lived-in store, made once; each test gets its own copy (the project folders are shared)."""
    base = tmp_path_factory.mktemp("hubstore")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KEEPER_HOME", str(base / "store"))
        yield base / "store", hubstore.build(base)


@pytest.fixture
def made(built: tuple[Path, dict[str, Any]], store: Path) -> dict[str, Any]:
    shutil.copytree(built[0], store)
    return built[1]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def listed(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    code, out, _ = run(["projects", "--json"], capsys)
    assert code == 0
    return {p["name"]: p for p in json.loads(out)}


def test_projects_json_lists_every_project_with_its_root_size_and_issues(
    made: dict[str, Any], store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = listed(capsys)
    assert set(found) == {"shop-api", "billing", "old-proto"}  # names from memory.md's title
    for name, expected in made.items():
        p = found[name]
        assert p["id"] == expected["id"] and p["root"] == expected["root"]
        assert p["sessions"] == expected["sessions"]
        folder = store / "projects" / p["id"]
        assert p["store"] == str(folder)
        durable = [
            folder / "memory.md",
            folder / "provenance.jsonl",
            *(folder / "sessions").glob("*.md"),
        ]  # not its index
        assert p["bytes"] == sum(f.stat().st_size for f in durable if f.is_file())
        issues = (folder / "memory.md").read_text(encoding="utf-8").split("## Known Issues")[1]
        assert p["open_issues"] == issues.count("\n- ") > 0
        assert datetime.fromisoformat(p["last_activity"]) > datetime.now() - timedelta(days=1)  # files' mtimes
    assert found["shop-api"]["root_exists"] is True and found["shop-api"]["clear_command"] is None
    gone = found["old-proto"]
    assert gone["root_exists"] is False
    assert gone["clear_command"] == f"keeper clear all --project {gone['id']} --yes"


def test_projects_text_marks_a_gone_root_with_how_to_clear_it(
    made: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["projects"], capsys)
    assert code == 0 and "3 projects" in out
    block = out.split("old-proto  (", 1)[1]
    assert "[root folder gone]" in block.split("\n")[0] and "(no longer exists)" in block
    assert f"keeper clear all --project {made['old-proto']['id']} --yes" in block
    assert made["shop-api"]["root"] in out


def test_a_gone_project_is_cleared_and_restored_by_its_id(
    made: dict[str, Any], store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pid = made["old-proto"]["id"]
    derived = ("newest-sessions", "index.sqlite3")  # rebuilt by themselves: not part of what is restored

    def kept() -> list[Path]:
        found = (p for p in (store / "projects" / pid).rglob("*") if p.is_file())
        return sorted(p.relative_to(store) for p in found if not p.name.startswith(derived))

    before = kept()
    code, out, _ = run(["clear", "all", "--project", pid, "--yes"], capsys)
    assert code == 0 and f"--project {pid}" in out.split("Undo with:")[1]
    assert "old-proto" not in listed(capsys)  # an emptied folder is no project
    assert run(["restore", "--list", "--project", pid], capsys)[1].strip()
    code, out, _ = run(["restore", "--project", pid], capsys)
    assert code == 0
    assert kept() == before
    assert listed(capsys)["old-proto"]["sessions"] == made["old-proto"]["sessions"]


@pytest.mark.parametrize("bad", ["nope-0000000000", "..", ".", "../projects", ""])
def test_an_unknown_project_id_is_a_clear_error(
    made: dict[str, Any], bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["clear", "all", "--project", bad, "--yes"], capsys)
    assert code == 1
    if bad:
        assert "keeper projects" in err and made["billing"]["id"] in err
    assert all((Path(p["store"]) / "memory.md").exists() for p in listed(capsys).values())


def test_project_and_project_dir_together_are_refused(
    made: dict[str, Any], capsys: pytest.CaptureFixture[str], project_dir: Path
) -> None:
    code, _, err = run(["clear", "all", "--project", made["billing"]["id"], "--project-dir", str(project_dir)], capsys)
    assert code == 1 and "not both" in err


def test_an_empty_store_says_how_projects_appear(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["projects"], capsys)
    assert code == 0 and "No projects" in out
    assert run(["projects", "--json"], capsys)[1].strip() == "[]"


# -- the root record -------------------------------------------------------------------------


def test_the_root_is_recorded_once_the_project_has_a_store(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["status"], capsys)[0] == 0
    assert not (Path(os.environ["KEEPER_HOME"]) / "projects").exists()  # looking makes no project
    assert run(["save", "--summary", "first"], capsys)[0] == 0
    at = resolve(str(project_dir), "s", strict=True)
    record = json.loads(Path(at.project.root_record).read_text())
    assert record == {"root": at.project.root, "name": "api"}
    assert listed(capsys)["api"]["root"] == at.project.root


def test_a_missing_root_record_is_written_again_and_an_existing_one_costs_no_write(project_dir: Path) -> None:
    at = resolve(str(project_dir), "s", strict=True)
    os.makedirs(at.project.state)
    resolve(str(project_dir), "s", strict=True)
    record = Path(at.project.root_record)
    stamp = record.stat().st_mtime_ns
    os.utime(record, ns=(stamp - 10**9, stamp - 10**9))
    resolve(str(project_dir), "s", strict=True)
    assert record.stat().st_mtime_ns == stamp - 10**9  # not rewritten
    record.unlink()
    resolve(str(project_dir), "s", strict=True)
    assert json.loads(record.read_text())["root"] == at.project.root


def test_a_pinned_project_records_the_clone_last_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clones = [tmp_path / "a" / "svc", tmp_path / "b" / "svc"]
    for clone in clones:
        (clone / ".claude").mkdir(parents=True)
        (clone / ".claude" / "keeper.yaml").write_text("project: shared-svc\n")
    for clone in clones:
        assert run(["pin", "--project-dir", str(clone)], capsys)[0] == 0  # the user allows each clone
        assert run(["save", "--project-dir", str(clone), "--summary", "hi"], capsys)[0] == 0
        project = identity.make_project(str(clone), "shared-svc")
        assert json.loads(Path(project.root_record).read_text())["root"] == str(clone)


def test_a_store_without_a_root_record_is_listed_by_its_memory_title(
    made: dict[str, Any], store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pid = made["billing"]["id"]
    (store / "projects" / pid / "state" / paths.ROOT_RECORD).unlink()
    p = listed(capsys)["billing"]
    assert p["root"] is None and p["root_exists"] is None and p["clear_command"] is None
    code, out, _ = run(["projects"], capsys)
    assert code == 0 and "not recorded yet" in out.split("billing  (")[1].split("\n\n")[0]


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["status", "--json"],
        ["recall", "invoice", "export"],
        ["recall", "x", "--json"],
        ["expand", "memory.md:1"],
        ["projects"],
        ["hub"],
    ],
)
def test_a_read_only_command_in_a_new_folder_makes_no_project(
    command: list[str], tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "Downloads" / "somewhere"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    main(command)
    capsys.readouterr()
    assert not (store / "projects").exists() or os.listdir(store / "projects") == []
    code, out, _ = run(["projects", "--json"], capsys)
    assert code == 0 and json.loads(out) == []


def test_a_folder_holding_only_derived_files_is_no_project_and_size_counts_memory_only(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leftover = store / "projects" / "gone-0123456789"  # what a recall made before it stopped making projects
    (leftover / "state").mkdir(parents=True)
    (leftover / "state" / "index.sqlite3").write_bytes(b"\0" * 40_000)
    assert main(["save", "--decision", "Ship CSV first", "--issue", "PDF later"]) == 0
    capsys.readouterr()
    _, out, _ = run(["projects", "--json"], capsys)
    (listed,) = json.loads(out)
    project = Path(listed["store"])
    durable = sum(p.stat().st_size for p in [project / "memory.md", project / "provenance.jsonl"]) + sum(
        p.stat().st_size for p in (project / "sessions").glob("*.md")
    )
    (project / "state" / "index.sqlite3").write_bytes(b"\0" * 40_000)  # a big derived file counts for nothing
    _, out, _ = run(["projects", "--json"], capsys)
    assert json.loads(out)[0]["bytes"] == durable
    _, out, _ = run(["projects"], capsys)
    assert "1 project in" in out and "1 session," in out and "1 open issue;" in out
