"""Use receipts from real transcripts: scripted Claude Code and Codex sessions against the fake APIs.

Memory holds three decisions saved earlier: one with identifiers (a function, a path), one with a
port number, one in plain words. Each session starts with them in its context, works as its script
says, and ends; the receipts are then read from the project's provenance record, where Keeper wrote
them from the transcript (Claude Code's) or the rollout (Codex's) the agent really wrote.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Claude, Codex, git_project
from tests.e2e.fakeapi import FakeAPI, bash, text, texts_of
from tests.e2e.fakeresponses import FakeResponses, message, shell
from tests.e2e.fakeresponses import texts_of as codex_texts

pytestmark = pytest.mark.e2e

RETRY = "Retries go through `with_backoff()` in src/net/retry.py, capped at 5 attempts"
PORT = "The dev server listens on port 8731; never bind 8080"
PLAIN = "We prefer small commits and clear messages when we change the code"


def seeded(claude: Claude, project: Path) -> None:
    """The three decisions, saved by an earlier session."""
    args = ["save", "--summary", "Set up the dev server and the retries"]
    for decision in (RETRY, PORT, PLAIN):
        args += ["--decision", decision]
    assert claude.keeper(args, project).returncode == 0


def provenance(claude: Claude, project: Path) -> list[dict[str, Any]]:
    memory = Path(json.loads(claude.keeper(["status", "--json"], project).stdout)["memory"]["path"])
    record = memory.parent / "provenance.jsonl"
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]


def receipts(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each receipt as (the decision it is for, where the use was seen)."""
    named = {"with_backoff": "retry", "8731": "port", "small commits": "plain"}
    found = []
    for event in events:
        if event["event"] == "used":
            which = next(name for word, name in named.items() if word in event["item"])
            found.append((which, event["where"]))
    return found


def claude_session(claude: Claude, prompt: str, project: Path, script: list) -> list[str]:
    with FakeAPI(script) as api:
        done = claude.run(prompt, project, api.url)
    assert done.returncode == 0, done.stderr
    seen = [texts_of(r) for r in api.requests]
    assert "Keeper memory for project 'shop'" in seen[0] and "with_backoff()" in seen[0]  # shown at the start
    return seen


def test_a_tool_input_using_an_injected_decisions_identifiers_gets_a_receipt(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    seeded(claude, project)
    script = [bash("grep -n with_backoff src/net/retry.py || true", "find the retry helper"), text("Wrapped it.")]
    claude_session(claude, "The payment call fails now and then, make it sturdier", project, script)
    assert receipts(provenance(claude, project)) == [("retry", "tool:Bash")]


def test_a_session_sharing_only_common_words_gets_none(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    seeded(claude, project)
    script = [
        bash("echo small commits with clear messages for the server code", "say the plan"),
        text("We prefer small commits, so I will change the server code in clear steps and retry the tests."),
    ]
    claude_session(claude, "Tidy up the server code please", project, script)
    assert receipts(provenance(claude, project)) == []


def test_a_save_restating_an_item_is_one_use_and_no_new_evidence(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    seeded(claude, project)
    save = f"keeper save <<'KEEPER'\nsummary: Checked the dev server\ndecisions:\n  - {PORT}\nKEEPER"
    script = [
        bash(save, "save what we know"),
        bash("echo npm run dev -- --port 8731", "start it"),  # the port used again after the save
        text("Running on 8731."),
    ]
    seen = claude_session(claude, "Save what we know about the dev server, then start it", project, script)
    assert "Saved to" in seen[1]
    events = provenance(claude, project)
    assert receipts(events) == [("port", "save")]  # once, though the session went on to use it
    port = [e["event"] for e in events if "8731" in e.get("item", "") and e["event"] != "used"]
    assert port == ["added", "echoed"]  # restating what Keeper showed: no confirmation


# -- Codex -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def codex(codex_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Codex:
    if sys.platform == "win32":
        pytest.skip("Codex runs hooks under bash")
    base = tmp_path_factory.mktemp("codex machine")
    return Codex(codex_bin, "", base / "home", base / "store").installed()


def test_a_codex_session_gets_its_receipts_from_the_rollout(codex: Codex, claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    codex.trust(project)
    claude.store = codex.store  # one machine, one store: Claude's `keeper` reads it
    seeded(claude, project)
    script = [shell("grep -n with_backoff src/net/retry.py || true"), shell("echo small commits"), message("Done.")]
    with FakeResponses(script) as api:
        done = codex.run("make the payment call sturdier", project, api.url)
    assert done.returncode == 0, done.stderr
    assert "with_backoff()" in codex_texts(api.requests[0])
    assert receipts(provenance(claude, project)) == [("retry", "tool:Bash")]
