"""Keeper inside the real OpenCode, its plugin installed as an OpenCode user installs it, sharing one store.

One machine for the module: OpenCode (version pinned in conftest) with ``opencode plugin
<repository>/opencode -g``, the plugin's environment set up the way its first hook sets it up, and
no ``keeper`` on PATH. The model is a local fake of an OpenAI-compatible API that plays a script and
follows Keeper's save request literally. OpenCode has no Stop a plugin can hold, so the save request
comes with the tool results (every ``save_every`` tool uses), and the session file is written when
the session goes idle.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import Claude, OpenCode, git_project, set_up
from tests.e2e.fakeapi import FakeAPI, bash, text
from tests.e2e.fakeapi import texts_of as claude_texts
from tests.e2e.fakeopenai import FakeOpenAI, say, shell, texts_of

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="Keeper's launcher here is sh")]

REQUEST = re.compile(r"^(keeper save <<'(KEEPER_[0-9A-F]{12})')$", re.MULTILINE)


def follows_the_save_request(body: str) -> Any:
    def turn(request: dict[str, Any]) -> dict[str, Any]:
        asked = REQUEST.findall(texts_of(request))
        assert asked, "no save request reached the model"
        command, end = asked[-1]
        return shell(f"{command}\n{body}\n{end}")

    return turn


def installed(opencode_bin: str, base: Path, store: Path) -> OpenCode:
    """OpenCode with Keeper's plugin installed as the README says and set up by the set-up its first hook starts
    (``set_up``)."""
    opencode = OpenCode(opencode_bin, base / "home", store)
    opencode.install()
    set_up(REPO, opencode.data, opencode.env())
    return opencode


@pytest.fixture(scope="module")
def machine(opencode_bin: str, tmp_path_factory: pytest.TempPathFactory) -> OpenCode:
    base = tmp_path_factory.mktemp("opencode machine")
    return installed(opencode_bin, base, base / "store")


def opencode_session(
    opencode: OpenCode, prompt: str, project: Path, script: list, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    with FakeOpenAI(script) as api:
        done = opencode.run(prompt, project, api.url, env)
    assert done.returncode == 0, done.stderr
    assert "Error" not in done.stderr, done.stderr
    log = json.dumps([p.read_text(encoding="utf-8") for p in (opencode.store / "logs").glob("*.log")])
    assert "ERROR" not in log
    return api.requests


def test_opencode_saves_claude_code_remembers_and_the_other_way_round(
    machine: OpenCode, claude: Claude, tmp_path: Path
) -> None:
    project = git_project(tmp_path, "shop")
    claude.store = machine.store  # one machine, one store
    saved = "summary: Wired checkout to the pricing service\ndecisions:\n  - Checkout rounds prices half to even"
    script = [shell("echo one"), shell("echo two"), follows_the_save_request(saved), say("All done.")]
    seen = opencode_session(machine, "wire up checkout", project, script, {"KEEPER_SAVE_EVERY": "2"})
    assert "Keeper memory for project 'shop' is empty so far" in texts_of(seen[0])  # a system message
    assert "Saved to" in texts_of(seen[3]) and "+ 1 decision" in texts_of(seen[3])
    sessions = list((machine.store / "projects").glob("shop-*/sessions/*.md"))
    record = sessions[0].read_text(encoding="utf-8")
    assert len(sessions) == 1 and "Checkout rounds prices half to even" in record  # the save found its session
    assert "`echo two`" in record and "wire up checkout" in record  # the messages read at session.idle

    with FakeAPI([bash(CLAUDE_SAVE), text("Noted.")]) as api:
        done = claude.run("what did OpenCode decide about checkout?", project, api.url)
    assert done.returncode == 0, done.stderr
    assert "Checkout rounds prices half to even" in claude_texts(api.requests[0])

    first = opencode_session(machine, "and refunds?", project, [say("Refunds next.")])[0]
    assert "Refunds go back to the original card" in texts_of(first)
    assert "Checkout rounds prices half to even" in texts_of(first)


CLAUDE_SAVE = """keeper save <<'KEEPER'
summary: Planned refunds
decisions:
  - Refunds go back to the original card
KEEPER"""
