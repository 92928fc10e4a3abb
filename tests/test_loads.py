"""Load by evidence: what sessions use comes first; what many were shown and none used is left to recall.

Real hooks, real files, transcripts as Claude Code writes them: sessions start (Keeper shows
memory.md), work, stop; their receipts and what they were shown feed the next start's choice.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from keeper.capture import saving
from keeper.cli import main
from keeper.hooks import context
from keeper.memory.document import SaveInput
from keeper.memory.items import key
from keeper.store import config, identity, loads, paths, provenance
from tests.helpers import run_hook
from tests.transcripts import Transcript

RETRY = "Retries go through `with_backoff()` in src/net/retry.py, capped at 5 attempts"
PORT = "The dev server listens on port 8731; never bind 8080"
PLAIN = "We prefer small commits and clear messages when we change the code"
ISSUE = "The `export_csv` job drops rows past 65535 on old Excel"
LEFT = "Left to recall: 1 item shown at the start of 5 or more sessions and used in none"


def project_of(root: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(root)))


def seeded(root: Path) -> paths.Project:
    project = project_of(root)
    data = SaveInput(decisions=[RETRY, PORT, PLAIN], issues=[ISSUE], state=["Working on the dev server"])
    saving.save(project, config.load(project.root), data, "an-earlier-session", now=datetime.now())
    return project


def start(root: Path, session: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    payload = {"session_id": session, "transcript_path": str(root.parent / f"{session}.jsonl"), "cwd": str(root)}
    reply = run_hook("session-start", {**payload, "source": "startup"}, monkeypatch, capsys)
    text = reply["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def work(
    root: Path, session: str, command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    """One session: it starts, runs ``command``, stops; what it started with."""
    shown = start(root, session, monkeypatch, capsys)
    transcript = Transcript(root.parent / f"{session}.jsonl", cwd=str(root))
    transcript.prompt("Start the app and look at the export")
    transcript.tool("Bash", {"command": command})
    payload: dict[str, Any] = {"session_id": session, "transcript_path": str(transcript.path), "cwd": str(root)}
    run_hook("stop", {**payload, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    return shown


def test_a_decision_shown_at_five_starts_and_never_used_is_left_to_recall_and_a_save_brings_it_back(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = seeded(project_dir)
    for n in range(loads.IDLE_AFTER):
        shown = work(project_dir, f"session-{n}", "npm run dev -- --port 8731", monkeypatch, capsys)
        assert RETRY in shown and LEFT not in shown  # not yet: fewer starts than IDLE_AFTER
    text = start(project_dir, "session-next", monkeypatch, capsys)
    assert PORT in text and PLAIN in text  # used; too plain to judge, so never left out
    assert ISSUE in text and "Working on the dev server" in text  # an open issue never used stays
    assert RETRY not in text and LEFT in text and "`keeper status` lists them" in text
    assert RETRY in Path(project.memory).read_text(encoding="utf-8")  # still in memory.md
    capsys.readouterr()
    monkeypatch.chdir(project_dir)
    assert main(["status", "--json"]) == 0
    idle = json.loads(capsys.readouterr().out)["memory"]["recall_only"]
    assert [(i["section"], i["text"]) for i in idle] == [("decisions", RETRY)]
    assert main(["status"]) == 0
    assert "recall only   1 item shown at the start of 5 or more sessions" in capsys.readouterr().out
    assert main(["recall", "with_backoff", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)  # still searchable
    saving.save(project, config.load(project.root), SaveInput(decisions=[RETRY]), "a-later-session")  # restated
    assert RETRY in start(project_dir, "session-after-save", monkeypatch, capsys)


def test_an_item_used_lately_comes_before_newer_ones_of_its_rank(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = project_of(project_dir)
    cfg = config.load(project.root)
    old = "Payments retry through `pay_retry()` in src/pay.py"
    saving.save(project, cfg, SaveInput(decisions=[old]), "s0", now=datetime(2026, 1, 1, 9, 0))
    newer = [f"Module mod_{n} keeps its cache in src/mod_{n}.py, capped at {n} entries" for n in range(40)]
    saving.save(project, cfg, SaveInput(decisions=newer), "s1", now=datetime(2026, 6, 1, 9, 0))
    budget = 1200
    text, _ = context.session_start(project, budget, "startup", "before")
    assert old not in text  # the oldest decision: the first to go for size
    loads.note(project, used=[key(old)])
    text, _ = context.session_start(project, budget, "startup", "after")
    assert old in text  # used lately: first among the decisions


def test_at_300_items_with_receipts_every_open_issue_and_the_current_state_are_kept(
    project_dir: Path,
) -> None:
    project = project_of(project_dir)
    cfg = config.load(project.root)
    decisions = [f"Service svc_{n} talks to queue q_{n} through src/svc/{n}.py" for n in range(270)]
    issues = [f"Issue {n}: check_{n} fails" for n in range(30)]
    state = ["Working on the queue rewrite", "Next: svc_12"]
    saving.save(project, cfg, SaveInput(decisions=decisions, issues=issues, state=state), "s0")
    listed = provenance.listed(Path(project.memory).read_text(encoding="utf-8"))
    assert len(listed) == 300
    every = [item_key for _, item_key, _, _ in listed]
    used = every[:20]  # the first twenty decisions are used now and then
    for n in range(8):
        loads.note(project, shown=every, used=used if n % 3 == 0 else [])
    text, status = context.session_start(project, 6000, "startup", "next")
    assert len(text) <= 6000
    assert all(issue in text for issue in issues) and all(line in text for line in state)
    assert all(decision in text for decision in decisions[:20])  # the ones used
    assert "Left to recall: 250 items" in text and "svc_200 " not in text
    assert "270 decisions, 30 open issues, 250 left to recall, last saved" in status


def test_a_damaged_or_missing_tally_is_no_evidence_and_never_an_error(project_dir: Path) -> None:
    project = seeded(project_dir)
    before, _ = context.session_start(project, 6000, "startup", "s1")
    Path(project.state, paths.LOADS).write_text('{"sessions": "x", "items": {"ab": [1, 2], "cd": "no"}}')
    assert context.session_start(project, 6000, "startup", "s1")[0] == before
    Path(project.state, paths.LOADS).write_text("[not json")
    assert context.session_start(project, 6000, "startup", "s1")[0] == before


def test_the_tally_keeps_the_newest_items_within_its_bound() -> None:
    tally = loads.Loads({"sessions": loads.MAX_ITEMS})  # the session count has no bound of its own
    tally.note(shown=[f"{n:08x}" for n in range(loads.MAX_ITEMS)])  # one session fills the tally
    for n in range(loads.MAX_ITEMS, loads.MAX_ITEMS + 10):  # each next session brings one new item
        tally.note(shown=[f"{n:08x}"])
    assert list(tally.items) == [f"{n:08x}" for n in range(10, loads.MAX_ITEMS + 10)]  # the 10 oldest went
    assert tally.sessions == loads.MAX_ITEMS + 11


@pytest.mark.needs("chromium")
def test_the_hub_marks_the_items_no_session_used(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_hub import Dom, run_chromium

    project = seeded(project_dir)
    for n in range(loads.IDLE_AFTER):
        work(project_dir, f"session-{n}", "npm run dev -- --port 8731", monkeypatch, capsys)
    for _ in range(loads.IDLE_AFTER):  # an open issue no session used: marked, never left to recall
        loads.note(project, shown=[key(ISSUE)])
    page = tmp_path / "hub.html"
    monkeypatch.chdir(project_dir)
    assert main(["hub", "--out", str(page)]) == 0
    dom = Dom(run_chromium(page, f"project={project.id}", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom"))
    marks = sorted(dom.texts("div", **{"class": "unused"}))
    assert marks == [
        "never used: shown at the start of 10 sessions, used in none",
        "never used: shown at the start of 5 sessions, used in none; left to recall at session start",
    ]
