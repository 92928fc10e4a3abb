"""What a session starts with: after months of saves, the right things within the budget."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from keeper.capture import saving
from keeper.hooks import briefing, context
from keeper.memory import document
from keeper.memory.document import SaveInput
from keeper.store import config, identity, paths
from tests.helpers import run_hook


def project_of(folder: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(folder)))


def test_after_300_saves_the_newest_decisions_and_open_issues_come_first(project_dir: Path) -> None:
    rng = random.Random(7)
    project, cfg = project_of(project_dir), config.load(None)
    start = datetime(2026, 1, 5, 9, 0)
    live_decisions: dict[str, datetime] = {}
    open_issues: dict[str, datetime] = {}
    retired: set[str] = set()
    resolved: set[str] = set()
    for n in range(300):
        now = start + timedelta(days=n // 2, minutes=n)
        decision = f"Decision {n}: module_{n} uses strategy {rng.randint(1000, 9999)}"
        data = SaveInput(summary=f"Save {n} of session {n // 8}", state=[f"Working on step {n}"], decisions=[decision])
        if n % 3 == 0:
            data.issues = [f"Issue {n}: flaky check_{n} in suite {rng.randint(100, 999)}"]
        if n % 5 == 0 and live_decisions:
            old = sorted(live_decisions)[rng.randrange(len(live_decisions))]
            data.retired = [old]
        if n % 4 == 0 and open_issues:
            fixed = sorted(open_issues)[rng.randrange(len(open_issues))]
            data.resolved = [fixed]
        report, _ = saving.save(project, cfg, data, f"session-{n // 8}", now=now)
        live_decisions[decision] = now
        for item in report.retired:
            text = document.item_text([f"- {item}"])
            retired.add(text)
            live_decisions.pop(text, None)
        for item in data.issues:
            open_issues[item] = now
        for item in report.resolved:
            text = document.item_text([f"- {item}"])
            resolved.add(text)
            open_issues.pop(text, None)
    assert retired and resolved and len(live_decisions) > 200 and len(open_issues) > 10
    text, _ = context.session_start(project, 6000, "startup", "new-session")
    assert len(text) <= 6000
    assert "Working on step 299" in text and "Save 299 of session 37" in text
    shown_decisions = set(re.findall(r"Decision \d+: module_\d+ uses strategy \d+", text))
    newest = sorted(live_decisions, key=live_decisions.__getitem__)[-len(shown_decisions) :]
    assert shown_decisions == set(newest) and len(shown_decisions) >= 5  # the newest ones, none older
    shown_issues = set(re.findall(r"Issue \d+: flaky check_\d+ in suite \d+", text))
    assert shown_issues == set(sorted(open_issues, key=open_issues.__getitem__)[-len(shown_issues) :])
    assert shown_issues  # never an empty Known Issues while the file has some
    assert not shown_decisions & retired and not shown_issues & resolved
    assert "older items of 'Core Decisions'" in text and "keeper recall <words>" in text
    assert re.search(r"\(20\d\d-\d\d-\d\d\)", text)  # dates stay visible


@pytest.mark.parametrize("limit", [500, 1200, 3000])
def test_every_known_section_with_lines_shows_at_least_its_newest_item(limit: int) -> None:
    text = document.template("api")
    for name, items in (
        ("decisions", [f"d{i} " + "x" * 80 for i in range(40)]),
        ("issues", [f"i{i} " + "y" * 80 for i in range(40)]),
        ("state", ["s"]),
    ):
        for i, item in enumerate(items):
            text, _, _ = document.merge(
                text,
                document.OwnedLines(),
                SaveInput(**{name: [item]}),
                project_name="api",
                session_id="s",
                now=datetime(2026, 1, 1) + timedelta(days=i),
                recent_sessions=3,
            )
    body, left = briefing.select(text, limit)
    assert len(body) <= limit
    assert "d39 " in body and "i39 " in body  # the newest of each
    assert left


def first_session_without_a_save(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A realistic session that worked (a transcript, a Stop) and never saved."""
    from tests.transcripts import realistic

    t = realistic(tmp_path / "t.jsonl")
    first = {"session_id": "first", "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**first, "source": "startup"}, monkeypatch, capsys)
    run_hook("stop", {**first, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)


def test_a_session_that_ended_without_a_save_is_shown_until_a_save_covers_it(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first_session_without_a_save(project_dir, tmp_path, monkeypatch, capsys)
    second = {"session_id": "second", "cwd": str(project_dir), "transcript_path": ""}
    reply = run_hook("session-start", {**second, "source": "startup"}, monkeypatch, capsys)
    given = reply["hookSpecificOutput"]["additionalContext"]
    assert "is empty so far" not in given
    assert "ended without a save" in given and 'first prompt: "Fix the discount stacking bug in checkout' in given
    assert "files: " in given and "src/checkout/discounts.py" in given
    assert "1 unsaved session" in reply["systemMessage"]
    saving.save(project_of(project_dir), config.load(None), SaveInput(summary="picked it up"), "second")
    given = run_hook("session-start", {**second, "source": "resume"}, monkeypatch, capsys)
    assert "ended without a save" not in given["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    ("prompt", "tools", "listed"),
    [
        ("What does the discount engine do when two coupons apply?", 0, False),  # it only talked
        ("/keeper:recall discount stacking", 0, False),  # a recall
        ("Run the checkout tests", 1, True),  # it worked: one tool use, never saved
    ],
    ids=["talk", "recall", "tool-use"],
)
def test_only_sessions_with_unsaved_work_are_listed_as_unsaved(
    project_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    prompt: str,
    tools: int,
    listed: bool,
) -> None:
    from tests.transcripts import Transcript

    t = Transcript(tmp_path / "t.jsonl", cwd=str(project_dir))
    if prompt.startswith("/"):
        t.slash(*prompt.split(" ", 1))
    else:
        t.prompt(prompt)
    first = {"session_id": "first", "cwd": str(project_dir), "transcript_path": str(t.path)}
    run_hook("session-start", {**first, "source": "startup"}, monkeypatch, capsys)
    run_hook("user-prompt-submit", {**first, "prompt": prompt}, monkeypatch, capsys)
    for _ in range(tools):
        command = {"command": "pytest -q tests/checkout", "description": "run tests"}
        t.tool("Bash", command, "3 passed")
        use = {"tool_name": "Bash", "tool_input": command, "tool_response": {"stdout": "3 passed"}}
        run_hook("post-tool-use", {**first, **use}, monkeypatch, capsys)
    t.reply("Done.")
    run_hook("stop", {**first, "stop_hook_active": False, "last_assistant_message": "Done."}, monkeypatch, capsys)
    run_hook("session-end", {**first, "reason": "other"}, monkeypatch, capsys)
    second = {"session_id": "second", "cwd": str(project_dir), "transcript_path": ""}
    reply = run_hook("session-start", {**second, "source": "startup"}, monkeypatch, capsys)
    given = reply["hookSpecificOutput"]["additionalContext"]
    assert ("ended without a save" in given) is listed, given
    assert ("unsaved session" in reply.get("systemMessage", "")) is listed


def test_a_session_start_lists_neither_the_sessions_nor_the_state_folder(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its cost must not grow with the store: the newest sessions and the open ones come from small lists."""
    import os

    first_session_without_a_save(project_dir, tmp_path, monkeypatch, capsys)
    project = project_of(project_dir)
    for i in range(40):  # older sessions, made the way Keeper makes them
        (Path(project.sessions) / f"2020-01-{1 + i % 28:02d}_{1000 + i}.md").write_text(f"# Session {i}\n")
    listed: list[str] = []
    real_listdir = os.listdir

    def listdir(path: object = ".") -> list[str]:
        listed.append(str(path))
        return real_listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", listdir)
    second = {"session_id": "second", "cwd": str(project_dir), "transcript_path": ""}
    reply = run_hook("session-start", {**second, "source": "startup"}, monkeypatch, capsys)
    assert "ended without a save" in reply["hookSpecificOutput"]["additionalContext"]
    assert project.sessions not in listed and project.state not in listed, listed


@pytest.mark.parametrize("which", ["project", "global"])
def test_a_huge_memory_file_is_read_only_as_far_as_a_briefing_needs(project_dir: Path, which: str) -> None:
    import tracemalloc

    project = identity.make_project(identity.find_project_root(str(project_dir)))
    saving.save(project, config.load(None), SaveInput(decisions=["Keep the first decision"]), "s0")
    target = Path(project.memory if which == "project" else paths.global_memory_file())
    target.parent.mkdir(parents=True, exist_ok=True)
    filler = "".join(f"- Decision {i} about retries and the cache layer, said at some length\n" for i in range(30_000))
    with target.open("a", encoding="utf-8") as fh:
        fh.write("# Project Memory: api\n\n## Core Decisions\n\n" if which == "global" else "")
        for _ in range(25):  # about 50 MB
            fh.write(filler)
    assert target.stat().st_size > 50e6
    tracemalloc.start()
    try:
        text, status = context.session_start(project, 6000, "startup", "s1")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6, f"SessionStart held {peak / 1e6:.0f} MB for a {target.stat().st_size / 1e6:.0f} MB file"
    assert f"{target} is 5" in text and "too large to read whole" in text and len(text) <= context.HARD_CAP
    assert "decision" in status


def test_a_start_reads_memory_md_once_and_counts_in_words(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The start parses memory.md once for the choice and the status line; plurals come from text.count."""
    from keeper import markdown

    project = project_of(project_dir)
    saving.save(
        project, config.load(None), SaveInput(decisions=["Retry budget is 3 in src/retry.py"], issues=["a", "b"]), "s0"
    )
    memory = Path(project.memory).read_text(encoding="utf-8")
    parsed: list[str] = []
    real = markdown.Document.parse.__func__  # type: ignore[attr-defined]

    def counted(cls: type[markdown.Document], text: str, split_level: int = 2) -> markdown.Document:
        parsed.append(text)
        return real(cls, text, split_level)  # type: ignore[no-any-return]

    monkeypatch.setattr(markdown.Document, "parse", classmethod(counted))
    _, status = context.session_start(project, 6000, "startup", "s1")
    assert parsed.count(memory) == 1, len(parsed)
    assert status.startswith("Keeper: 1 decision, 2 open issues, last saved")


HAND_WRITTEN = """# Project Memory: api

## Core Decisions

- Cache prices for 30 seconds (2026-01-02)
- Deploy with this config:
```yaml
replicas: 3

image: shop:1.4
```
| env | url |
|---|---|
| prod | https://shop.example |
- Releases are tagged from main

## Known Issues

- Login flakes on Safari:
  ```
  - retry once
  ```
"""


def test_a_code_fence_or_a_table_under_an_item_is_shown_whole_and_in_its_order() -> None:
    """What a model or a person writes under a decision (a fenced snippet, a table) reads with it:
    the newest-first order moved each of its lines alone, so Claude was given the table upside down
    and a fence closed before it opened, its lines read as items."""
    body, left = briefing.select(HAND_WRITTEN, 6000)
    assert not left
    block = (
        "- Deploy with this config:\n```yaml\nreplicas: 3\n\nimage: shop:1.4\n```\n"
        "| env | url |\n|---|---|\n| prod | https://shop.example |\n"
    )
    assert block in body
    assert body.index("- Cache prices") < body.index("- Releases are tagged") < body.index(block)
    assert "- Login flakes on Safari:\n  ```\n  - retry once\n  ```\n" in body
