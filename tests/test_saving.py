"""Saving: input parsing that never loses what was sent, and concurrent sessions that both land."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from keeper import config, paths, saving
from keeper.errors import KeeperError
from keeper.markdown import Document
from keeper.memory import SaveInput


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("summary: done\ndecisions:\n  - a\n", {"summary": "done", "decisions": ["a"]}),
        ('{"summary": "json", "issues": ["x"]}', {"summary": "json", "issues": ["x"]}),
        (
            "summary: Fixed it: the cache was stale\ndecisions:\n  - Use: redis\n",
            {"summary": "Fixed it: the cache was stale", "decisions": ["Use: redis"]},
        ),
        ("summary: |\n  line one\n  line two\nstate:\n  - ok\n", {"summary": "line one\nline two\n", "state": ["ok"]}),
        ("just some notes without keys", {"summary": "just some notes without keys"}),
        ("", {}),
    ],
)
def test_input_parsing_keeps_everything(text: str, expected: dict) -> None:
    data, _ = saving.parse_input(text)
    assert data == expected


def test_types_are_normalised_and_unknown_keys_reported() -> None:
    save, warnings = saving.to_save_input(
        {"summary": ["a", "b"], "decisions": "one\n- two", "state": 5, "colour": "red"}, []
    )
    assert (save.summary, save.decisions, save.state) == ("a\nb", ["one", "two"], ["5"])
    assert warnings == ["unknown key 'colour' ignored (use: summary, decisions, state, issues, resolved)"]


def test_an_empty_save_is_refused() -> None:
    project = paths.make_project(os.getcwd())
    with pytest.raises(KeeperError, match="nothing to save"):
        saving.save(project, config.load(None), SaveInput(), "s1")


def _save_many(root: str, home: str, worker: int, count: int) -> None:
    os.environ["KEEPER_HOME"] = home
    project = paths.make_project(root)
    cfg = config.load(root)
    for i in range(count):
        saving.save(
            project,
            cfg,
            SaveInput(decisions=[f"Decision {worker}-{i} from worker {worker}"], summary=f"w{worker} i{i}"),
            f"sess{worker}",
        )


def test_concurrent_saves_from_several_processes_all_land(project_dir: Path) -> None:
    workers, count = 4, 6
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_save_many, args=(str(project_dir), os.environ["KEEPER_HOME"], w, count))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    project = paths.make_project(str(project_dir))
    text = Path(project.memory).read_text()
    decisions = Document.parse(text).find(("core decisions",))
    assert decisions is not None and len(decisions.bullets()) == workers * count
    assert len(list(Path(project.sessions).glob("*.md"))) == workers
    assert not list(Path(project.dir).rglob("*.tmp"))


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes; Windows profiles are per-user already")
def test_everything_keeper_creates_is_private(project_dir: Path) -> None:
    home = Path(os.environ["KEEPER_HOME"])
    assert not home.exists()
    project = paths.make_project(str(project_dir))
    saving.save(project, config.load(None), SaveInput(decisions=["private"], summary="s"), "s1")
    created = [home, *home.rglob("*")]
    loose = [p for p in created if p.stat().st_mode & 0o077]
    assert not loose, [f"{p}: {oct(p.stat().st_mode)}" for p in loose]


def test_saves_sweep_temp_files_left_by_killed_writers(project_dir: Path) -> None:
    project = paths.make_project(str(project_dir))
    saving.save(project, config.load(None), SaveInput(summary="first"), "s1")
    stale = Path(project.dir) / ".memory.md.abc123.tmp"
    fresh = Path(project.dir) / ".memory.md.def456.tmp"
    stale.write_text("half a file")
    fresh.write_text("a writer at work right now")
    os.utime(stale, (1, 1))
    saving.save(project, config.load(None), SaveInput(summary="second"), "s1")
    assert not stale.exists() and fresh.exists()
