"""The derived index follows the markdown: edits, additions, deletions, its own loss, many users."""

from __future__ import annotations

import json
import multiprocessing
import os
from datetime import date
from pathlib import Path

import pytest

from keeper.capture import record, saving
from keeper.cli import main
from keeper.hooks import entry
from keeper.memory.document import SaveInput
from keeper.recall import index, search, sources
from keeper.store import config, identity, paths
from tests.transcripts import realistic

TODAY = date(2026, 11, 21)


def project_with(tmp_path: Path, count: int = 30) -> paths.Project:
    project = paths.Project(
        root=str(tmp_path / "repo"), id="repo-1", dir=str(tmp_path / "store" / "projects" / "repo-1")
    )
    folder = Path(project.sessions)
    folder.mkdir(parents=True)
    topics = ["billing export", "websocket reconnect", "image thumbnails", "search ranking", "login throttling"]
    for i in range(count):
        topic = topics[i % len(topics)]
        (folder / f"2026-10-{1 + i % 28:02d}_{1000 + i}.md").write_text(
            f"# Session 2026-10-{1 + i % 28:02d} · repo\n\n## Saves\n\n### 10:00 save\n\nWorked on {topic} step {i}.\n",
            encoding="utf-8",
        )
    Path(project.memory).write_text(
        "# Project Memory: repo\n\n## Core Decisions\n\n- Keep money in cents\n", encoding="utf-8"
    )
    return project


def top(project: paths.Project, query: str, thorough: bool = True) -> list[str]:
    return [r.chunk.text for r in search.search(project, query, today=TODAY, thorough=thorough)]


def test_edits_additions_and_deletions_are_seen_at_once(tmp_path: Path) -> None:
    project = project_with(tmp_path)
    assert top(project, "websocket reconnect")
    session = Path(project.sessions) / "2026-10-05_1004.md"
    session.write_text(session.read_text() + "\nAlso fixed the zeppelin parser.\n", encoding="utf-8")  # in place
    assert any("zeppelin" in t for t in top(project, "zeppelin"))
    (Path(project.sessions) / "2026-11-01_0900.md").write_text("# Session\n\n## Saves\n\nquokka migration done\n")
    assert any("quokka" in t for t in top(project, "quokka"))
    os.remove(Path(project.sessions) / "2026-11-01_0900.md")
    assert top(project, "quokka") == []
    Path(project.memory).write_text("# Project Memory: repo\n\n## Core Decisions\n\n- Keep money in yen\n")
    assert top(project, "cents") == [] and top(project, "yen")


def test_the_index_can_be_deleted_or_corrupted_and_rebuilds_itself(tmp_path: Path) -> None:
    project = project_with(tmp_path)
    before = top(project, "billing export")
    os.remove(project.index)
    assert top(project, "billing export") == before
    Path(project.index).write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(project.index + suffix).unlink(missing_ok=True)
    assert top(project, "billing export") == before


def test_without_fts5_the_scan_ranks_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = project_with(tmp_path)
    indexed = [(r.id, round(r.score, 6)) for r in search.search(project, "login throttlng step", today=TODAY)]
    monkeypatch.setattr(index, "open_index", lambda project: None)
    scanned = [(r.id, round(r.score, 6)) for r in search.search(project, "login throttlng step", today=TODAY)]
    assert indexed == scanned and indexed


def test_the_quick_check_sees_new_files_memory_and_recent_sessions(tmp_path: Path) -> None:
    project = project_with(tmp_path, count=400)
    top(project, "billing")  # build
    (Path(project.sessions) / "2026-12-01_0900.md").write_text("# Session\n\n## Saves\n\nnarwhal rollout\n")
    assert top(project, "narwhal", thorough=False)
    newest = sorted(Path(project.sessions).glob("*.md"))[-1]
    newest.write_text(newest.read_text() + "\nplatypus cleanup\n")
    assert top(project, "platypus", thorough=False)
    oldest = sorted(Path(project.sessions).glob("*.md"))[0]
    oldest.write_text(oldest.read_text() + "\naxolotl note\n")
    calls = next((i for i in range(1, 201) if top(project, "axolotl", thorough=False)), None)
    assert calls, "a window at a random place reaches every file within some calls (about 1 in 12 here)"
    assert top(project, "axolotl")  # and explicit recall sees it at once


@pytest.mark.parametrize("own", ["", "2026-10-01_1000.md"])
def test_the_quick_check_stats_memory_md_and_the_own_session_however_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own: str
) -> None:
    """memory.md at every quick check, and the session file ``own`` names (a resumed session's, the
    oldest here), edited in place (the folder's mtime unchanged): nothing else, with no random window."""
    project = project_with(tmp_path, count=400)
    where = sources.Sources(project, False)
    con = index.open_index(project)
    assert con is not None
    try:
        index.refresh(con, where)  # build
        monkeypatch.setattr(index, "WINDOW", 0)
        for path in (Path(project.memory), Path(project.sessions) / "2026-10-01_1000.md"):
            path.write_text(path.read_text(encoding="utf-8") + "\n- Also the narwhal\n", encoding="utf-8")
        assert index.refresh(con, where, thorough=False, own=own) == (2 if own else 1)
        assert index.refresh(con, where, thorough=False, own=own) == 0
    finally:
        con.close()


def test_a_search_that_finds_the_index_up_to_date_writes_nothing(tmp_path: Path) -> None:
    project = project_with(tmp_path, count=600)
    top(project, "billing")  # build
    db = Path(project.index)
    before = db.stat().st_mtime_ns, db.read_bytes()
    for thorough in (True, False, True):
        assert top(project, "websocket reconnect", thorough=thorough)
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before  # a write would reach it at the checkpoint


def _search_many(root: str, store_dir: str, rounds: int, queue: multiprocessing.Queue) -> None:
    project = paths.Project(root=root, id="repo-1", dir=store_dir)
    found = 0
    for i in range(rounds):
        Path(project.sessions, f"2026-12-{1 + i % 28:02d}_{os.getpid()}{i}.md").write_text(
            f"# S\n\nwombat {os.getpid()} {i}\n"
        )
        found += bool(search.search(project, "wombat"))
    queue.put(found)


def test_concurrent_searches_and_index_updates_are_safe(tmp_path: Path) -> None:
    project = project_with(tmp_path)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_search_many, args=(project.root, project.dir, 15, queue)) for _ in range(4)]
    for proc in procs:
        proc.start()
    found = [queue.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0
    assert found == [15, 15, 15, 15]
    assert len(search.search(project, "wombat", limit=100)) == 60


# -- automatic recall --------------------------------------------------------------------------


def prompt_reply(project_dir: Path, prompt: str, session: str = "now") -> str:
    payload = {"session_id": session, "cwd": str(project_dir), "prompt": prompt}
    reply = entry.handle("user-prompt-submit", json.dumps(payload).encode())
    return reply.get("hookSpecificOutput", {}).get("additionalContext", "")


def seed(project_dir: Path) -> paths.Project:
    project = identity.make_project(str(project_dir))
    cfg = config.load(None)
    saving.save(
        project,
        cfg,
        SaveInput(summary="Rate limiter for the login endpoint: token bucket, 5 per minute per IP"),
        "old-1",
    )
    saving.save(project, cfg, SaveInput(summary="Thumbnail generation moved to a background worker queue"), "old-2")
    return project


def test_a_relevant_prompt_gets_past_sessions_and_an_unrelated_one_nothing(project_dir: Path) -> None:
    seed(project_dir)
    text = prompt_reply(project_dir, "the login rate limiter blocks real users, can we raise the bucket?")
    assert "automatic recall" in text and "token bucket" in text and len(text) <= 1500
    assert prompt_reply(project_dir, "write a haiku about autumn leaves and rivers") == ""
    assert prompt_reply(project_dir, "login please") == ""  # short prompts are skipped
    assert prompt_reply(project_dir, "/keeper:status now please thanks") == ""


def test_automatic_recall_leaves_out_this_session_and_can_be_turned_off(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project_dir)
    assert prompt_reply(project_dir, "thumbnail generation worker queue again", session="old-2") == ""
    assert "Thumbnail generation" in prompt_reply(project_dir, "thumbnail generation worker queue again")
    monkeypatch.setenv("KEEPER_AUTO_RECALL", "false")
    assert prompt_reply(project_dir, "thumbnail generation worker queue again") == ""


# -- going deeper ------------------------------------------------------------------------------


def test_expand_prints_the_whole_section_and_the_session_anchor(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seed(project_dir)
    t = realistic(tmp_path / "t.jsonl")
    record.update(project, config.load(None), "old-1", {}, str(t.path))
    ident = next(r.id for r in search.search(project, "token bucket"))
    assert main(["expand", ident]) == 0
    out = capsys.readouterr().out
    assert "Rate limiter for the login endpoint" in out and f"keeper transcript {t.path}" in out
    for bad in ("../../etc/passwd:1", "sessions/../memory.md:1", "memory.md", "sessions/x.md:abc"):
        assert main(["expand", bad]) == 1
        assert "is not a result id" in capsys.readouterr().err


def test_expand_refuses_a_line_past_the_end_and_prints_json(
    project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seed(project_dir)
    t = realistic(tmp_path / "t.jsonl")
    record.update(project, config.load(None), "old-1", {}, str(t.path))
    lines = len(Path(project.memory).read_text(encoding="utf-8").splitlines())
    assert main(["expand", "memory.md:999"]) == 1  # was exit 0 with the last section
    assert f"has {lines} lines, so no line 999" in capsys.readouterr().err
    ident = next(r.id for r in search.search(project, "token bucket"))
    assert main(["expand", ident, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert "Rate limiter for the login endpoint" in found["text"] and found["transcript"] == str(t.path)
    assert Path(found["path"]).as_posix().endswith(ident.rsplit(":", 1)[0]) and found["heading"]


def test_transcript_prints_turns_and_focuses_on_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = realistic(tmp_path / "t.jsonl")
    assert main(["transcript", str(t.path)]) == 0
    out = capsys.readouterr().out
    assert out.count("-- turn ") == 4 and "User: Fix the discount stacking bug" in out
    assert "  -> Bash: pytest -q tests/test_cart.py" in out and "!! Bash failed: 1 failed" in out
    turns = json.loads((main(["transcript", str(t.path), "--json"]), capsys.readouterr().out)[1])
    third = turns[2]["uuid"]
    assert main(["transcript", str(t.path), "--turn", third, "--context", "0"]) == 0
    focused = capsys.readouterr().out
    assert focused.count("-- turn ") == 1 and "/keeper:recall discount rounding" in focused
    assert main(["transcript", "/dev/zero"]) == 1 and "not a readable .jsonl" in capsys.readouterr().err


def test_recall_output_is_grouped_by_file_and_dated(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(project_dir)
    assert main(["recall", "thumbnail", "worker"]) == 0
    out = capsys.readouterr().out
    assert "matches in" in out and ".md (20" in out and "keeper expand <id>" in out


def test_a_window_that_runs_off_the_end_wraps_round_to_the_first_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows lists a folder sorted, so the oldest sessions get the first ids; a window starting
    near the last id must go on from the first, or their in-place edits are almost never seen."""
    project = project_with(tmp_path, count=100)
    top(project, "billing")  # build
    con = index.open_index(project)
    assert con is not None
    first, last = con.execute(f"SELECT min(id), max(id) FROM files WHERE {index._SESSIONS}").fetchone()
    (name,) = con.execute("SELECT name FROM files WHERE id = ?", (first,)).fetchone()
    con.close()
    path = Path(project.dir, name)
    path.write_text(path.read_text(encoding="utf-8") + "\naxolotl note\n", encoding="utf-8")
    monkeypatch.setattr(index.os, "urandom", lambda n: last.to_bytes(n, "little"))  # the window starts at the end
    assert top(project, "axolotl", thorough=False)


def test_a_build_in_batches_stores_each_written_word_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch of a first build meets most of the corpus's words again: each is stored once (the
    table keeps a word's first term, so storing it again would change nothing), and the table is
    the one a build in one batch makes."""
    project = project_with(tmp_path, count=30)
    where = sources.Sources(project, False)

    def surface(batch: int) -> tuple[list[tuple[str, str]], list[str]]:
        for suffix in ("", "-wal", "-shm"):
            Path(project.index + suffix).unlink(missing_ok=True)
        monkeypatch.setattr(index, "BATCH", batch)
        con = index.open_index(project)
        assert con is not None
        stored: list[str] = []
        con.set_trace_callback(lambda sql: stored.append(sql) if "INTO surface" in sql else None)
        try:
            index.refresh(con, where)
            con.set_trace_callback(None)
            return list(con.execute("SELECT word, term FROM surface ORDER BY word")), stored
        finally:
            con.close()

    whole, _ = surface(1000)
    batched, stored = surface(4)
    assert batched == whole
    assert len(stored) == len(whole)  # "step" and "worked" are in all 31 files: stored once, not 8 times
