"""Saving: input parsing that never loses what was sent, and concurrent sessions that both land."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from keeper.capture import saving
from keeper.errors import KeeperError
from keeper.markdown import Document
from keeper.memory import document
from keeper.memory.document import SaveInput
from keeper.store import config, identity


def read(text: str) -> tuple[SaveInput, list[str]]:
    return saving.read_input(text, [])


def test_the_save_request_example_reads_as_it_shows() -> None:
    from keeper.capture import saveformat
    from keeper.hooks import context

    body = context.save_command(end="KEEPER").split("\n", 1)[1].rsplit("\nKEEPER", 1)[0] + "\n"
    assert body == saveformat.template()
    save, problems = read(body)
    assert problems == []
    assert save.summary.startswith("What this session did") and "\n" in save.summary
    assert save.decisions == ["A durable choice and its reason"]
    assert save.retired == ["A decision that no longer holds"] and save.resolved == ["A known issue that is now fixed"]


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("state: PR #42 open, waiting on review\n", "state", ["PR #42 open, waiting on review"]),
        (
            "decisions:\n  - Use Redis SCAN, not KEYS: KEYS blocks the server\n",
            "decisions",
            ["Use Redis SCAN, not KEYS: KEYS blocks the server"],
        ),
        ("issues:\n  - yes\n  - 1.10\n  - null\n  - ~\n", "issues", ["yes", "1.10", "null", "~"]),
        ("summary: [unclosed\n", "summary", "[unclosed"),
        ("summary: {a\n", "summary", "{a"),
        ("decisions:\n  - Logs live in C:\\Users\\ana\\logs\n", "decisions", ["Logs live in C:\\Users\\ana\\logs"]),
        ('{"summary": "json", "issues": ["x"]}', "issues", ["x"]),
        ("summary: |\n  line one\n  line two\nstate:\n  - ok\n", "summary", "line one\nline two"),
        ("just some notes without keys", "summary", "just some notes without keys"),
    ],
)
def test_saves_keep_what_was_written(text: str, field: str, expected: object) -> None:
    save, _ = read(text)
    assert getattr(save, field) == expected


def test_unknown_keys_and_loose_text_are_kept_and_reported() -> None:
    save, problems = read("summry: did the cart\ndecisions:\n  - Cents, not floats\ncolour: red\n")
    assert save.summary == "" and save.decisions == ["Cents, not floats"]
    assert ("summry", "did the cart") in save.unplaced and ("colour", "red") in save.unplaced
    assert any("'summry'" in p and "did you mean 'summary'" in p for p in problems)


def test_an_unknown_key_is_reported_to_the_model_and_kept_in_the_session_file(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    from keeper.cli import main

    stdin = io.TextIOWrapper(io.BytesIO(b"summry: Reworked the cart\nstate:\n  - cart done\n"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["save", "--session", "s1"]) == 0
    out = capsys.readouterr().out
    assert "could not read all of this save" in out and "unknown key 'summry'" in out
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    record = next(Path(project.sessions).glob("*.md")).read_text(encoding="utf-8")
    assert "- Not merged (summry): Reworked the cart" in record


def test_a_save_of_unknown_keys_alone_says_nothing_was_saved_and_keeps_the_text(project_dir: Path) -> None:
    """``printf 'summry: typo key' | keeper save`` saved nothing: it does not claim "Saved", exits 1 so
    the model saves again, keeps the hint, keeps the text in the session file (the contract), and the
    counter still waits for a real save."""
    import subprocess
    import sys

    def save(text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "keeper", "save", "--session", "s1"],
            input=text,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = save("summry: typo key\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Saved" not in done.stdout and done.stdout.startswith("Nothing was saved to memory")
    assert "did you mean 'summary'?" in done.stdout
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    assert not os.path.exists(project.memory)
    (record,) = Path(project.sessions).glob("*.md")
    assert "- Not merged (summry): typo key" in record.read_text(encoding="utf-8")
    status = subprocess.run([sys.executable, "-m", "keeper", "status", "--json"], capture_output=True, text=True)
    assert json.loads(status.stdout)["last_save"] is None
    assert save("summary: typo key\n").returncode == 0


def test_typed_lists_and_their_scope_are_read() -> None:
    save, problems = read(
        "summary: x\nscope: global\nfeedback:\n  - Never bypass hooks\ntool:\n  - psql lives in /opt/pg16/bin\n"
    )
    assert problems == [] and save.scope == "global"
    assert save.typed == {"feedback": ["Never bypass hooks"], "tool": ["psql lives in /opt/pg16/bin"]}
    save, problems = read("scope: everywhere\nuser:\n  - Ana reviews on Fridays\n")
    assert save.scope == "project" and any("not 'project', 'global' or 'team'" in p for p in problems)


def full_report(n: int) -> document.MergeReport:
    """A report of every kind of change, ``n`` of each (a name ``n`` times repeated per list)."""
    report = document.MergeReport()
    for field in ("added_decisions", "known_decisions", "added_issues", "known_issues", "reconfirmed", "retired"):
        setattr(report, field, [f"{field} {i}" for i in range(n)])
    report.unmatched_retired, report.resolved, report.unmatched = ["Use Redis"], ["Flaky login"] * n, ["Old bug"]
    report.state_lines, report.recent, report.tidied = n, True, n
    report.added_typed = {"feedback": ["Be brief"] * n, "reference (global)": [], "project": ["Ship 1.0"]}
    report.known_typed = {"feedback": ["Be kind"] * n, "user": []}
    report.candidates = [("Use Redis", ["Use Redis for caching", "Use Redis for sessions"])]
    report.similar = [("Cache for 60s", "Cache for 30s")]
    return report


def test_a_save_reports_each_kind_of_change_in_one_line_in_a_fixed_order() -> None:
    assert saving.report_lines(full_report(2)) == [
        "+ 2 decisions: added_decisions 0; added_decisions 1",
        "= 2 decisions already known: known_decisions 0; known_decisions 1",
        "~ current state replaced (2 lines)",
        "~ recent context updated for this session",
        "+ 2 issues: added_issues 0; added_issues 1",
        "= 2 issues already known",
        "+ 2 feedback items: Be brief; Be brief",
        "+ 1 project item: Ship 1.0",
        "= 2 feedback items already known",
        "~ 2 decisions re-confirmed today: reconfirmed 0; reconfirmed 1",
        "- 2 decisions retired: retired 0; retired 1",
        "? nothing retired for (no single match): Use Redis",
        "- 2 issues resolved: Flaky login; Flaky login",
        "? nothing resolved for (no single match): Old bug",
        "  'Use Redis' could be: 'Use Redis for caching'; 'Use Redis for sessions'",
        "  name one exactly (its text as memory.md shows it, without the date) to remove it",
        "  'Cache for 60s' is similar to existing: 'Cache for 30s' (both kept; retire one if they say the same)",
        "~ 2 items a git merge left twice or retired tidied away",
    ]
    one = saving.report_lines(full_report(1))
    assert one[:3] == [
        "+ 1 decision: added_decisions 0",
        "= 1 decision already known: known_decisions 0",
        "~ current state replaced (1 line)",
    ]
    assert one[-1] == "~ 1 item a git merge left twice or retired tidied away"


@pytest.mark.parametrize("field", ["unmatched_retired", "unmatched"])
def test_a_name_that_matched_nothing_asks_for_an_exact_one(field: str) -> None:
    report = document.MergeReport()
    setattr(report, field, ["Use Redis"])
    lines = saving.report_lines(report)
    assert len(lines) == 2 and lines[1].startswith("  name one exactly")


def test_a_save_that_changed_nothing_says_so() -> None:
    report = document.MergeReport()
    report.added_typed, report.known_typed = {"feedback": []}, {"user": []}
    assert saving.report_lines(report) == ["= nothing new for memory.md"]


def test_an_empty_save_is_refused() -> None:
    project = identity.make_project(os.getcwd())
    with pytest.raises(KeeperError, match="nothing to save"):
        saving.save(project, config.load(None), SaveInput(), "s1")


def _save_many(root: str, home: str, worker: int, count: int) -> None:
    os.environ["KEEPER_HOME"] = home
    project = identity.make_project(root)
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
    project = identity.make_project(str(project_dir))
    text = Path(project.memory).read_text()
    decisions = Document.parse(text).find(("core decisions",))
    assert decisions is not None and len(decisions.bullets()) == workers * count
    assert len(list(Path(project.sessions).glob("*.md"))) == workers
    assert not list(Path(project.dir).rglob("*.tmp"))


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes; Windows profiles are per-user already")
def test_everything_keeper_creates_is_private(project_dir: Path) -> None:
    home = Path(os.environ["KEEPER_HOME"])
    assert not home.exists()
    project = identity.make_project(str(project_dir))
    saving.save(project, config.load(None), SaveInput(decisions=["private"], summary="s"), "s1")
    created = [home, *home.rglob("*")]
    loose = [p for p in created if p.stat().st_mode & 0o077]
    assert not loose, [f"{p}: {oct(p.stat().st_mode)}" for p in loose]


def test_saves_sweep_temp_files_left_by_killed_writers(project_dir: Path) -> None:
    project = identity.make_project(str(project_dir))
    saving.save(project, config.load(None), SaveInput(summary="first"), "s1")
    stale = Path(project.dir) / ".memory.md.abc123.tmp"
    fresh = Path(project.dir) / ".memory.md.def456.tmp"
    stale.write_text("half a file")
    fresh.write_text("a writer at work right now")
    os.utime(stale, (1, 1))
    saving.save(project, config.load(None), SaveInput(summary="second"), "s1")
    assert not stale.exists() and fresh.exists()
