"""Keeper inside the real OpenCode, its plugin installed as an OpenCode user installs it, sharing one store.

One machine for the module: OpenCode (version pinned in conftest) with ``opencode plugin
<repository>/opencode -g``, the plugin's environment set up the way its first hook sets it up, and
no ``keeper`` on PATH. The model is a local fake of an OpenAI-compatible API that plays a script and
follows Keeper's save request literally. OpenCode has no Stop a plugin can hold, so the save request
comes with the tool results (every ``save_every`` tool uses), and the session file is written when
the session goes idle.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import (
    Claude,
    OpenCode,
    claude_takes_over,
    git_project,
    keeper_errors,
    save_follower,
    set_up_plugin,
)
from tests.e2e.fakeopenai import FakeOpenAI, say, shell, texts_of

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="Keeper's launcher here is sh")]

# the model follows the save request as given: the command line Keeper wrote
follows_the_save_request = save_follower(r"^(keeper save <<'(KEEPER_[0-9A-F]{12})')$", texts_of, shell)


def installed(opencode_bin: str, base: Path, store: Path) -> OpenCode:
    """OpenCode with Keeper's plugin installed as the README says and set up as its first hook sets it up."""
    return OpenCode(opencode_bin, base / "home", store).installed()


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
    assert not keeper_errors(opencode.store)
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

    claude_takes_over(claude, project, "OpenCode", "Checkout rounds prices half to even")

    first = opencode_session(machine, "and refunds?", project, [say("Refunds next.")])[0]
    assert "Refunds go back to the original card" in texts_of(first)
    assert "Checkout rounds prices half to even" in texts_of(first)


def test_a_first_session_that_ends_before_keeper_is_ready_gets_its_session_file(
    opencode_bin: str, tmp_path: Path
) -> None:
    """The README walk: OpenCode's first session went idle nine seconds before Keeper's set-up was done,
    and had no session file. Its Stop is kept, and run when the set-up is."""
    machine = OpenCode(opencode_bin, tmp_path / "home", tmp_path / "store")
    machine.install()  # not set up: the first hook starts the set-up, held here until the session is over
    (machine.data / "setup.lock").mkdir(parents=True)
    project = git_project(tmp_path, "shop")
    opencode_session(machine, "what is in this shop?", project, [shell("ls"), say("A price list.")])
    sessions = machine.store / "projects"
    assert not list(sessions.glob("shop-*/sessions/*.md"))
    (machine.data / "setup.lock").rmdir()
    set_up_plugin(REPO, machine.data, machine.env())
    found = list(sessions.glob("shop-*/sessions/*.md"))
    assert len(found) == 1, found
    record = found[0].read_text(encoding="utf-8")
    assert "what is in this shop?" in record and "`ls`" in record and "Tool uses: 1 (0 saves)" in record
    assert not keeper_errors(machine.store)
