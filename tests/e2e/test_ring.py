"""One memory for every agent: Claude Code, Codex, Gemini CLI and OpenCode on one machine, one store, in a ring.

Each agent is installed the way its own README line installs it (the fixtures of its own test
module), all four share one store, and each session's model is a scripted fake that follows
Keeper's save request literally. A decision saved in one agent is in the next session of the next
agent, around the ring and back to the first: Claude Code -> Codex -> Gemini CLI -> OpenCode -> Claude Code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e import test_codex, test_gemini, test_opencode
from tests.e2e.conftest import Claude, git_project
from tests.e2e.fakeapi import FakeAPI, bash, text
from tests.e2e.fakeapi import texts_of as claude_texts
from tests.e2e.fakegemini import say as gemini_says
from tests.e2e.fakegemini import shell as gemini_shell
from tests.e2e.fakegemini import texts_of as gemini_texts
from tests.e2e.fakeopenai import say as opencode_says
from tests.e2e.fakeopenai import shell as opencode_shell
from tests.e2e.fakeopenai import texts_of as opencode_texts
from tests.e2e.fakeresponses import message, shell

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="Codex and Gemini hooks run in sh")]

DECISIONS = {
    "claude": "Prices are stored in cents",
    "codex": "Checkout rounds prices half to even",
    "gemini": "Refunds go back to the original card",
    "opencode": "Receipts are mailed within a minute",
}


def body(agent: str) -> str:
    return f"summary: {agent} worked on checkout\ndecisions:\n  - {DECISIONS[agent]}"


def test_a_decision_saved_in_each_agent_is_in_the_next_agents_session(
    codex_bin: str, gemini_bin: str, opencode_bin: str, claude: Claude, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    codex = test_codex.installed(codex_bin, tmp_path / "codex machine", store)
    gemini = test_gemini.installed(gemini_bin, tmp_path / "gemini machine", store)
    opencode = test_opencode.installed(opencode_bin, tmp_path / "opencode machine", store)
    claude.store = store
    project = git_project(tmp_path, "shop")
    codex.trust(project)

    save = f"keeper save <<'KEEPER'\n{body('claude')}\nKEEPER"
    with FakeAPI([bash(save), text("Saved.")]) as api:
        assert claude.run("start on checkout", project, api.url).returncode == 0

    script = [shell("echo one"), test_codex.follows_the_save_request(body("codex")), message("Done.")]
    seen = test_codex.codex_session(codex, "go on", project, script, {"KEEPER_SAVE_EVERY": "1"})
    assert DECISIONS["claude"] in seen[0]

    script = [gemini_shell("echo two"), gemini_says("Finished."), test_gemini.follows_the_save_request(body("gemini"))]
    env = {"KEEPER_SAVE_EVERY": "50", "KEEPER_FINAL_SAVE_MIN": "1"}
    first = gemini_texts(test_gemini.gemini_session(gemini, "go on", project, [*script, gemini_says("Saved.")], env)[0])
    assert DECISIONS["claude"] in first and DECISIONS["codex"] in first

    script = [opencode_shell("echo three"), test_opencode.follows_the_save_request(body("opencode"))]
    seen_oc = test_opencode.opencode_session(
        opencode, "go on", project, [*script, opencode_says("Done.")], {"KEEPER_SAVE_EVERY": "1"}
    )
    first = opencode_texts(seen_oc[0])
    assert all(DECISIONS[a] in first for a in ("claude", "codex", "gemini"))

    with FakeAPI([text("Hello.")]) as api:
        assert claude.run("where are we?", project, api.url).returncode == 0
    first = claude_texts(api.requests[0])
    assert all(decision in first for decision in DECISIONS.values())  # around the ring and back
