"""Provenance: where each memory item came from, what happened to it since, and stale marks at start.

Real files in a real git repository, sessions whose transcripts edit them, the real hooks; the
record never changes what memory.md holds.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.capture import saving
from keeper.cli import main
from keeper.memory.document import SaveInput
from keeper.store import config, identity, paths, provenance
from tests.helpers import run_hook
from tests.syncstores import Machine, git
from tests.transcripts import Transcript

WORK = "9a0c3e51-1d2b-4c7a-8f00-5b1e2d3c4f56"
NEXT = "1f2e3d4c-5b6a-4978-8a6b-5c4d3e2f1a0b"
DAY = 86400.0


@pytest.fixture
def repo(project_dir: Path) -> Path:
    """The project as a real git repository with a few files, committed."""
    git("init", "-q", "-b", "main", cwd=project_dir)
    (project_dir / "src").mkdir()
    for name, text in {"src/cache.py": "TTL = 30\n", "src/api.py": "ROUTES = []\n", "README.md": "# api\n"}.items():
        (project_dir / name).write_text(text, encoding="utf-8")
    git("add", ".", cwd=project_dir)
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "start", cwd=project_dir)
    return project_dir


def project_of(root: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(root)))


def start(
    root: Path, session: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], transcript: str = ""
) -> dict[str, Any]:
    payload = {"session_id": session, "transcript_path": transcript, "cwd": str(root), "source": "startup"}
    return run_hook("session-start", payload, monkeypatch, capsys)


def context_of(reply: dict[str, Any]) -> str:
    return str(reply.get("hookSpecificOutput", {}).get("additionalContext", ""))


def work_session(
    root: Path,
    edited: list[str],
    data: SaveInput,
    saved: datetime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    session: str = WORK,
) -> None:
    """A session that edits ``edited`` (writing ``WRITTEN`` into each, through its transcript, as Claude
    Code records it) and saves ``data``."""
    transcript = Transcript(root.parent / f"{session}.jsonl", cwd=str(root)).prompt("Cache the prices")
    for name in edited:
        path = root / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(old + WRITTEN, encoding="utf-8")
        transcript.tool("Edit", {"file_path": str(path), "old_string": old, "new_string": old + WRITTEN})
    start(root, session, monkeypatch, capsys, str(transcript.path))
    project = project_of(root)
    saving.save(project, config.load(project.root), data, session, now=saved)


def prices_session(
    repo: Path, saved: datetime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The usual case: a session edits src/cache.py and saves a decision about it."""
    data = SaveInput(decisions=["Prices are cached for 30 seconds"])
    work_session(repo, ["src/cache.py"], data, saved, monkeypatch, capsys)


WRITTEN = (
    "prices_cache = build_cache(ttl=TTL)\nroutes_cache = build_cache(ttl=TTL * 2)\n"
    "sessions_cache = None\nusers_cache = build_cache(ttl=TTL * 4)\n"
)
REWRITTEN = "most lines its session wrote in src/cache.py were rewritten (0 of 4 left)"


def rewrite_cache(repo: Path) -> None:
    """Someone rewrites what the session wrote in src/cache.py."""
    (repo / "src" / "cache.py").write_text("TTL = 30\ncache = LRU(maxsize=1024, ttl=TTL)\n", encoding="utf-8")


def saved_then_changed(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``prices_session`` five days ago, then the lines it wrote in src/cache.py rewritten."""
    prices_session(repo, datetime.now() - timedelta(days=5), monkeypatch, capsys)
    rewrite_cache(repo)


def age(path: Path, when: float) -> None:
    os.utime(path, (when, when))


# -- stale marks at session start ----------------------------------------------------------------


@pytest.mark.needs("git")
def test_lines_the_saving_session_wrote_rewritten_later_mark_the_item(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved_then_changed(repo, monkeypatch, capsys)
    reply = start(repo, NEXT, monkeypatch, capsys)
    text = context_of(reply)
    line = next(ln for ln in text.splitlines() if "Prices are cached" in ln)
    assert line.endswith(f"[may be stale: {REWRITTEN}]")
    assert "1 may be stale" in reply["systemMessage"]


@pytest.mark.needs("git")
def test_nothing_is_marked_when_nothing_changed(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = datetime.now() - timedelta(days=5)
    age(repo / "src" / "cache.py", time.time() - 9 * DAY)
    age(repo / "src" / "api.py", time.time() - 9 * DAY)
    data = SaveInput(decisions=["Prices are cached for 30 seconds", "Routes live in src/api.py"])
    work_session(repo, ["src/cache.py"], data, saved, monkeypatch, capsys)
    age(repo / "src" / "cache.py", time.time() - 9 * DAY)  # the edit itself is older than the save
    reply = start(repo, NEXT, monkeypatch, capsys)
    assert "may be stale" not in context_of(reply) and "stale" not in reply["systemMessage"]
    assert "Routes live in src/api.py" in context_of(reply)


@pytest.mark.parametrize("how", ["deleted", "renamed"])
@pytest.mark.needs("git")
def test_a_file_the_session_edited_that_is_gone_marks_the_item(
    how: str, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = datetime.now() - timedelta(days=4)
    prices_session(repo, saved, monkeypatch, capsys)
    if how == "deleted":
        git("rm", "-qf", "src/cache.py", cwd=repo)
    else:
        git("mv", "src/cache.py", "src/prices.py", cwd=repo)
    text = context_of(start(repo, NEXT, monkeypatch, capsys))
    line = next(ln for ln in text.splitlines() if "Prices are cached" in ln)
    assert line.endswith("[may be stale: src/cache.py, where its session wrote, is gone]")


@pytest.mark.needs("git")
def test_a_path_named_in_the_item_marks_it_when_it_is_gone_not_when_it_changed(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No session edited these: the paths are only named in the items' text."""
    project = project_of(repo)
    saved = datetime.now() - timedelta(days=6)
    items = [
        "Routes are declared in `src/api.py`, one per line",
        "The old loader src/loader.py reads the config",  # no such file when saved: never judged
        "Docs go to docs/guide.md when written",
        "Nothing here names a path",
    ]
    saving.save(project, config.load(project.root), SaveInput(decisions=items), "manual", now=saved)
    (repo / "src" / "api.py").write_text("ROUTES = ['/health']\n", encoding="utf-8")  # changed: no reason
    text = context_of(start(repo, NEXT, monkeypatch, capsys))
    assert "may be stale" not in text
    (repo / "src" / "api.py").unlink()
    text = context_of(start(repo, NEXT, monkeypatch, capsys))
    lines = {ln.split(" (", 1)[0][2:]: ln for ln in text.splitlines() if ln.startswith("- ")}
    assert lines["Routes are declared in `src/api.py`, one per line"].endswith(
        "[may be stale: src/api.py is gone (moved or deleted)]"
    )
    assert all("may be stale" not in lines[item] for item in items[1:])


@pytest.mark.needs("git")
def test_a_change_elsewhere_in_a_file_the_session_wrote_is_no_news(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = datetime.now() - timedelta(days=3)
    prices_session(repo, saved, monkeypatch, capsys)
    cache = repo / "src" / "cache.py"
    cache.write_text("import time\n" + cache.read_text(encoding="utf-8") + "def clear():\n    CACHE.clear()\n")
    age(cache, time.time() - DAY)  # newer than the save: no date takes part
    assert "may be stale" not in context_of(start(repo, NEXT, monkeypatch, capsys))
    rewrite_cache(repo)  # a rewrite of the lines it wrote is news
    assert f"may be stale: {REWRITTEN}" in context_of(start(repo, NEXT, monkeypatch, capsys))


@pytest.mark.needs("git")
def test_the_staleness_check_looks_at_a_bounded_number_of_files(repo: Path) -> None:
    from keeper.store import stale

    reader = stale.Reader(str(repo), limit=3)
    said = [{"kind": "path", "name": f"f{i}.py", "in": [f"f{i}.py"]} for i in range(50)]
    told = {"at": "2020-01-01T00:00:00", "event": "session", "item": "", "session": "s"}
    told["wrote"] = {f"g{i}.py": ["a" * 10, "b" * 10, "c" * 10] for i in range(50)}
    record = [{"at": "2020-01-01T00:00:00", "event": "added", "item": "x", "session": "s", "claims": said}, told]
    events = provenance.parse("".join(json.dumps(e) + "\n" for e in record))
    history, sessions = provenance.by_item(events)["x"], provenance.session_facts(events)
    assert stale.reason(history, sessions, reader) is not None  # the first three are gone
    assert len(reader.inputs) == 3


# -- keeper why ------------------------------------------------------------------------------------


@pytest.mark.needs("git")
def test_keeper_why_names_the_session_machine_branch_commit_files_and_transcript(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = datetime.now() - timedelta(days=2)
    data = SaveInput(decisions=["Prices are cached for 30 seconds"])
    work_session(repo, ["src/cache.py", "src/api.py"], data, saved, monkeypatch, capsys)
    for name in ("src/cache.py", "src/api.py"):
        age(repo / name, time.time() - 4 * DAY)  # edited before the save
    commit = git("rev-parse", "HEAD", cwd=repo).strip()
    capsys.readouterr()
    assert main(["why", "cached", "prices", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    origin = found["origin"]
    assert found["text"] == "Prices are cached for 30 seconds" and found["status"] == "current"
    assert (origin["event"], origin["session"], origin["branch"], origin["commit"]) == ("added", WORK, "main", commit)
    assert origin["files"] == ["src/api.py", "src/cache.py"] and origin["machine"]
    assert found["session_file"] and Path(found["session_file"]).is_file()
    assert found["transcript"] == str(repo.parent / f"{WORK}.jsonl")
    assert found["stale"] is None
    assert main(["why", found["id"]]) == 0
    out = capsys.readouterr().out
    assert f"by session {WORK}" in out and "branch main" in out and f"commit {commit[:12]}" in out
    assert "Files that session changed: src/api.py, src/cache.py" in out
    assert f"keeper transcript {repo.parent / f'{WORK}.jsonl'}" in out
    assert "Not stale" in out


@pytest.mark.needs("git")
def test_keeper_why_lists_candidates_when_words_name_several(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["save", "--decision", "Cache prices", "--decision", "Cache routes"]) == 0
    capsys.readouterr()
    assert main(["why", "cache"]) == 1
    err = capsys.readouterr().err
    assert "2 items match 'cache'" in err and "Cache prices" in err and "Cache routes" in err
    assert main(["why", "nothing like it"]) == 1


@pytest.mark.needs("git")
def test_a_retired_decision_shows_why_and_when_and_restore_item_brings_it_back(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["save", "--decision", "Store sessions in Redis"]) == 0
    assert main(["save", "--retired", "Store sessions in Redis", "--decision", "Store sessions in Postgres"]) == 0
    project = project_of(repo)
    assert "Redis" not in Path(project.memory).read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["why", "redis", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["status"] == "retired"
    assert [e["event"] for e in found["history"]] == ["added", "retired"]
    assert main(["restore", "--item", found["id"]]) == 0
    assert "Store sessions in Redis" in Path(project.memory).read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["why", "redis", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["status"] == "current" and [e["event"] for e in again["history"]] == ["added", "retired", "restored"]


def test_a_retired_global_item_is_shown_in_its_section(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["save", "--global", "--feedback", "Never force-push"]) == 0
    assert main(["save", "--global", "--retired", "Never force-push"]) == 0
    capsys.readouterr()
    assert main(["why", "force-push"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(", Feedback (global memory, retired)")


@pytest.mark.needs("git")
def test_a_resolved_issue_is_kept_in_its_history(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["save", "--issue", "Checkout times out under load"]) == 0
    assert main(["save", "--resolved", "Checkout times out under load"]) == 0
    capsys.readouterr()
    assert main(["why", "checkout", "times", "out"]) == 0
    out = capsys.readouterr().out
    assert "resolved)" in out.splitlines()[1] and " resolved by session " in out


# -- echoes ----------------------------------------------------------------------------------------


@pytest.mark.needs("git")
def test_restating_what_keeper_showed_is_an_echo_not_new_evidence(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved_then_changed(repo, monkeypatch, capsys)
    start(repo, NEXT, monkeypatch, capsys)  # shows the item
    project = project_of(repo)
    data = SaveInput(decisions=["Prices are cached for 30 seconds"])
    saving.save(project, config.load(project.root), data, NEXT)
    events = provenance.by_item(provenance.read(project.dir))["prices are cached for 30 seconds"]
    assert [e.kind for e in events] == ["added", "echoed"]
    assert "not new evidence" in str(events[-1].why)
    text = context_of(start(repo, "a-third-session", monkeypatch, capsys))
    assert REWRITTEN in text  # the echo did not make it fresh
    saving.save(project, config.load(project.root), data, "one-that-was-not-shown-it")
    events = provenance.by_item(provenance.read(project.dir))["prices are cached for 30 seconds"]
    assert events[-1].kind == "confirmed"


# -- the record survives -------------------------------------------------------------------------


@pytest.mark.needs("git")
def test_a_hand_edit_that_reorders_memory_md_keeps_every_items_provenance(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = datetime.now() - timedelta(days=5)
    data = SaveInput(decisions=["First decision", "Prices are cached for 30 seconds", "Third decision"])
    work_session(repo, ["src/cache.py"], data, saved, monkeypatch, capsys)
    project = project_of(repo)
    memory = Path(project.memory)
    lines = memory.read_text(encoding="utf-8").splitlines(keepends=True)
    items = [i for i, line in enumerate(lines) if line.startswith("- ") and ("ecision" in line or "Prices" in line)]
    picked = [lines[i] for i in items]
    for i, line in zip(items, reversed(picked)):
        lines[i] = line
    memory.write_text("".join(lines), encoding="utf-8")
    rewrite_cache(repo)
    text = context_of(start(repo, NEXT, monkeypatch, capsys))
    assert REWRITTEN in next(ln for ln in text.splitlines() if "Prices" in ln)
    capsys.readouterr()
    assert main(["why", "Third decision", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin"]["session"] == WORK


@pytest.mark.needs("git")
def test_provenance_survives_export_and_import_into_another_store(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work_session(
        repo, ["src/cache.py"], SaveInput(decisions=["Prices are cached"]), datetime.now(), monkeypatch, capsys
    )
    assert main(["save", "--global", "--feedback", "Answer briefly"]) == 0
    archive = tmp_path / "out.zip"
    assert main(["export", "--out", str(archive)]) == 0
    monkeypatch.setenv("KEEPER_HOME", str(tmp_path / "other-store"))
    assert main(["import", str(archive)]) == 0
    capsys.readouterr()
    assert main(["why", "prices", "--json"]) == 0
    origin = json.loads(capsys.readouterr().out)["origin"]
    assert origin["session"] == WORK and origin["files"] == ["src/cache.py"]
    assert main(["why", "answer briefly", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin"]["event"] == "added"
    assert main(["import", str(archive)]) == 0  # again: nothing doubles
    record = Path(project_of(repo).provenance).read_text(encoding="utf-8")
    assert record.count("prices are cached") == 1


ORIGIN = "https://github.com/me/provenance-proj.git"


@pytest.mark.needs("git")
def test_provenance_survives_keeper_sync_between_two_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote))
    a, b = (Machine(tmp_path, name, monkeypatch, ORIGIN) for name in "ab")
    for m in (a, b):
        assert m.sync("--remote", str(remote)) == 0
        m.start_session("connect")
    a.save("--session", "on-a", "--decision", "Prices are cached")
    b.save("--session", "on-b", "--decision", "Routes are generated")
    assert a.sync() == 0 and b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        capsys.readouterr()
        for words, maker in (("prices", a), ("routes", b)):
            assert m.run("why", words, "--json", "--project-dir", str(m.project)) == 0
            found = json.loads(capsys.readouterr().out)
            assert found["origin"]["event"] == "added" and found["status"] == "current", (m.name, words)
            assert Path(found["session_file"]).is_file(), (m.name, words)  # its own, or the one sync brought
            assert ("@" in Path(found["session_file"]).name) == (m is not maker)
    a_record = next((a.store / "projects").glob("*/provenance.jsonl")).read_bytes()
    b_record = next((b.store / "projects").glob("*/provenance.jsonl")).read_bytes()
    assert a_record == b_record


# -- the record itself ---------------------------------------------------------------------------


EVENTS = st.lists(
    st.fixed_dictionaries(
        {
            "at": st.sampled_from(["2026-11-20T10:00:00", "2026-11-21T09:30:00", "2026-11-22T18:00:00"]),
            "event": st.sampled_from(["added", "confirmed", "retired"]),
            "item": st.text(min_size=1, max_size=8),
        }
    ),
    max_size=6,
)


@given(EVENTS, EVENTS, EVENTS)
def test_records_merge_by_union_in_any_order(
    a: list[dict[str, Any]], b: list[dict[str, Any]], c: list[dict[str, Any]]
) -> None:
    texts = ["".join(json.dumps(e) + "\n" for e in x) for x in (a, b, c)]
    one = provenance.merge(provenance.merge(texts[0], texts[1]), texts[2])
    assert one == provenance.merge(texts[2], provenance.merge(texts[1], texts[0]))
    assert one == provenance.merge(one, texts[1]) == provenance.merge(*texts)
    assert {json.dumps(e, sort_keys=True) for x in (a, b, c) for e in x} == {
        json.dumps(e.as_dict(), sort_keys=True) for e in provenance.parse(one)
    }


SAVES = st.lists(
    st.tuples(
        st.sampled_from(["decisions", "issues", "resolved", "retired"]),
        st.lists(
            st.sampled_from(["Cache in src/cache.py", "Use Postgres", "Flaky test", "x/y.py"]), min_size=1, max_size=3
        ),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(saves=SAVES)
def test_provenance_never_changes_what_memory_md_holds(
    saves: list[tuple[str, list[str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same saves with the record kept and with the record never written: the same memory.md bytes."""
    results = []
    for kept in (True, False):
        store = tmp_path / f"store-{kept}"
        shutil.rmtree(store, ignore_errors=True)
        with monkeypatch.context() as patch:
            patch.setenv("KEEPER_HOME", str(store))
            if not kept:
                patch.setattr(provenance, "append", lambda folder, events, patterns=(): None)
            project = identity.make_project(str(tmp_path / "work" / "api"))
            now = datetime(2026, 11, 20, 10, 0)
            for step, (kind, texts) in enumerate(saves):
                data = SaveInput(**{kind: texts})
                saving.save(project, config.load(None), data, "s", now=now + timedelta(hours=step))
            results.append(Path(project.memory).read_bytes() if Path(project.memory).exists() else b"")
            wrote = any(kind in ("decisions", "issues") for kind, _ in saves)
            assert Path(project.provenance).exists() == (kept and wrote)
    assert results[0] == results[1]


# -- where it shows --------------------------------------------------------------------------------


@pytest.mark.needs("git")
def test_keeper_status_counts_the_items_that_may_be_stale(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = datetime.now() - timedelta(days=5)
    data = SaveInput(decisions=["Prices are cached for 30 seconds", "Use plain SQL"])
    work_session(repo, ["src/cache.py"], data, saved, monkeypatch, capsys)
    rewrite_cache(repo)
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    stale = json.loads(capsys.readouterr().out)["memory"]["stale"]
    assert sorted(s["text"] for s in stale) == ["Prices are cached for 30 seconds", "Use plain SQL"]  # both rest on it
    assert main(["status"]) == 0
    assert "may be stale  2 items" in capsys.readouterr().out


@pytest.mark.needs("git")
def test_the_hub_shows_each_items_origin_and_lists_the_stale_ones(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_hub import Dom, run_chromium

    saved = datetime.now() - timedelta(days=5)
    data = SaveInput(decisions=["Prices are cached for 30 seconds", "Use plain SQL"])
    work_session(repo, ["src/cache.py"], data, saved, monkeypatch, capsys)
    rewrite_cache(repo)
    page = tmp_path / "hub.html"
    assert main(["hub", "--out", str(page)]) == 0
    project = project_of(repo)
    dom = Dom(run_chromium(page, f"project={project.id}", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom"))
    origins = dom.texts("div", **{"class": "origin"})
    assert len(origins) == 2 and all(f"added {saved:%Y-%m-%d} " in o and f"by session {WORK}" in o for o in origins)
    assert all("changed src/cache.py" in o and "keeper why " in o for o in origins)
    reason = REWRITTEN
    marks = dom.texts("div", **{"class": "stale"})
    assert marks.count("may be stale: " + reason) == 2  # on each item, both saved by the session that edited it
    assert sorted(m for m in marks if not m.startswith("may")) == sorted(
        f"{reason} · keeper why {o.split()[-1]}" for o in origins
    )
    assert "May be stale" in dom.texts("h2")


@pytest.mark.needs("git")
def test_recall_results_carry_the_provenance_of_their_items(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = SaveInput(decisions=["Prices are cached for 30 seconds", "Use plain SQL"])
    work_session(repo, ["src/cache.py"], data, datetime.now(), monkeypatch, capsys)
    capsys.readouterr()
    assert main(["recall", "prices", "cached", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    memory = next(r for r in results if r["path"] == project_of(repo).memory)
    carried = {p["id"]: p for p in memory["provenance"]}
    assert len(carried) == 2 and {p["last"] for p in carried.values()} == {"added"}
    assert all(p["origin"]["session"] == WORK and p["origin"]["files"] == ["src/cache.py"] for p in carried.values())
    session_file = next(r for r in results if r["path"] != project_of(repo).memory)
    assert session_file["provenance"] == []


@pytest.mark.needs("git")
def test_an_item_edited_by_hand_keeps_its_origin_and_says_it_was_edited(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work_session(
        repo,
        ["src/cache.py"],
        SaveInput(decisions=["Prices are cached for 30 seconds"]),
        datetime.now(),
        monkeypatch,
        capsys,
    )
    memory = Path(project_of(repo).memory)
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("cached for 30", "cached for 30 whole"), encoding="utf-8"
    )
    assert main(["save", "--state", "Working on the cache"]) == 0  # the next save notices the hand edit
    capsys.readouterr()
    assert main(["why", "prices", "whole", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["text"] == "Prices are cached for 30 whole seconds"
    assert [e["event"] for e in found["history"]] == ["added", "edited"]
    assert found["origin"]["session"] == WORK and found["history"][-1]["from"] == "prices are cached for 30 seconds"


@pytest.mark.needs("git")
def test_marks_stay_within_the_context_budget_however_many_items_are_stale(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = project_of(repo)
    items = [f"Module {i} lives in src/gone_{i}.py and keeps its own retry budget" for i in range(300)]
    for i in range(300):
        (repo / "src" / f"gone_{i}.py").write_text("RETRIES = 3\n", encoding="utf-8")
    saving.save(
        project, config.load(project.root), SaveInput(decisions=items), "bulk", now=datetime.now() - timedelta(days=2)
    )
    for i in range(300):
        (repo / "src" / f"gone_{i}.py").unlink()
    monkeypatch.setenv("KEEPER_CONTEXT_CHARS", "4000")
    reply = start(repo, NEXT, monkeypatch, capsys)
    text = context_of(reply)
    assert len(text) <= 4000
    marked = text.count("[may be stale: src/gone_")
    assert 1 <= marked <= 12 and "300 may be stale" in reply["systemMessage"]
    shown = Path(project.session_file(NEXT, "shown")).read_text(encoding="utf-8").split()
    assert len(shown) == text.count("\n- Module ")


# -- seams: redaction of the record, a live session's own edits ------------------------------------

SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.needs("git")
def test_a_secret_in_the_branch_never_reaches_the_record_why_or_an_export(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git("symbolic-ref", "HEAD", f"refs/heads/feat-{SECRET}", cwd=repo)
    assert main(["save", "--decision", "Epsilon thing"]) == 0
    record = Path(project_of(repo).provenance).read_text(encoding="utf-8")
    assert "Epsilon thing" in record and '"branch": "feat-' in record and SECRET not in record
    capsys.readouterr()
    assert main(["why", "epsilon", "--json"]) == 0
    assert SECRET not in capsys.readouterr().out
    archive = tmp_path / "b.zip"
    assert main(["export", "--out", str(archive)]) == 0
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        assert all(SECRET.encode() not in zf.read(name) for name in zf.namelist())


@pytest.mark.needs("git")
def test_importing_an_archive_redacts_its_record(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import zipfile

    assert main(["save", "--decision", "Epsilon thing"]) == 0
    clean, dirty = tmp_path / "clean.zip", tmp_path / "dirty.zip"
    assert main(["export", "--out", str(clean)]) == 0
    with zipfile.ZipFile(clean) as src, zipfile.ZipFile(dirty, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith(paths.PROVENANCE_FILE):
                data = data.replace(b'"branch": "main"', f'"branch": "feat-{SECRET}"'.encode())
                assert SECRET.encode() in data
            out.writestr(name, data)
    monkeypatch.setenv("KEEPER_HOME", str(tmp_path / "other-store"))
    assert main(["import", str(dirty)]) == 0
    record = Path(project_of(repo).provenance).read_text(encoding="utf-8")
    assert "Epsilon thing" in record and SECRET not in record


def session_start_of(
    root: Path, session: str, source: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    payload = {"session_id": session, "transcript_path": "", "cwd": str(root), "source": source}
    return context_of(run_hook("session-start", payload, monkeypatch, capsys))


@pytest.mark.parametrize("source", ["compact", "resume", "clear"])
@pytest.mark.needs("git")
def test_a_live_sessions_own_edit_elsewhere_after_its_save_marks_nothing_at_any_start(
    source: str, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = SaveInput(decisions=["Greeting says hello in src/cache.py"])
    work_session(repo, ["src/cache.py"], data, datetime.now() - timedelta(seconds=5), monkeypatch, capsys)
    cache = repo / "src" / "cache.py"
    cache.write_text(cache.read_text(encoding="utf-8").replace("TTL = 30", "TTL = 31"), encoding="utf-8")
    text = session_start_of(repo, WORK, source, monkeypatch, capsys)
    assert "Greeting says hello" in text and "may be stale" not in text
    assert "may be stale" not in session_start_of(repo, NEXT, "startup", monkeypatch, capsys)


WORDS = ["session", "a", "b", "a b", 'say "session"', "from", "item"]
RAW_EVENT = st.fixed_dictionaries(
    {"at": st.sampled_from(["2026-11-20T10:00:00", "2026-11-21"]), "event": st.sampled_from(["added", "session"])},
    optional={
        "item": st.sampled_from(WORDS),
        "session": st.sampled_from(WORDS),
        "from": st.sampled_from(WORDS),
        "note": st.sampled_from(WORDS) | st.lists(st.sampled_from(WORDS), max_size=2),
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    events=st.lists(RAW_EVENT, max_size=8),
    spacing=st.lists(st.sampled_from([(", ", ": "), (",", ":"), (", ", " : "), (",", ":\t")]), min_size=8, max_size=8),
    items=st.sets(st.sampled_from(WORDS), max_size=2),
)
def test_a_record_read_for_a_few_items_tells_what_the_whole_one_tells_of_them(
    events: list[dict[str, Any]], spacing: list[tuple[str, str]], items: set[str]
) -> None:
    """``read`` with items parses only the lines that may concern them (``_about``: "session" as a
    value, the items' names, a backslash), however the JSON is spaced: the same facts for them."""
    with tempfile.TemporaryDirectory() as folder:
        text = "".join(json.dumps(e, separators=s) + "\n" for e, s in zip(events, spacing))
        Path(provenance.record_file(folder)).write_text(text, encoding="utf-8")
        whole, few = provenance.read(folder), provenance.read(folder, items)
    history, told = provenance.by_item(whole), provenance.by_item(few)
    assert {k: history.get(k) for k in items} == {k: told.get(k) for k in items}
    assert provenance.session_facts(whole) == provenance.session_facts(few)
