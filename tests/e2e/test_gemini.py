"""Keeper inside the real Gemini CLI, installed as a Gemini user installs it, sharing one store with Claude Code.

One machine for the module: Gemini CLI (version pinned in conftest) with this repository installed
by ``gemini extensions install``, the extension's environment set up the way its first session's
end sets it up (which also completes its hooks), and no ``keeper`` on PATH. The model is a local
fake of the Gemini API that plays a script and follows Keeper's save request literally: the command
line it was given, its own values.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import (
    Claude,
    Gemini,
    claude_takes_over,
    git_project,
    keeper_errors,
    save_follower,
    set_up_plugin,
)
from tests.e2e.fakegemini import FakeGemini, last_user_turn, say, shell, texts_of

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="Keeper's Gemini hooks run under sh")]

# the model follows the save request as given: the launcher by path, the session named
follows_the_save_request = save_follower(r"^(\S.* save --session \S+ <<'(KEEPER_[0-9A-F]{12})')$", texts_of, shell)
HOOK_TROUBLE = ("Hook(s)", "Hook execution", "failed for event", "timed out", "Traceback")


def installed(gemini_bin: str, base: Path, store: Path) -> Gemini:
    """Gemini CLI with Keeper installed as the README says and set up as its first session's end sets it up."""
    return Gemini(gemini_bin, base / "home", store).installed()


@pytest.fixture(scope="module")
def machine(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Gemini:
    base = tmp_path_factory.mktemp("gemini machine")  # a space in every path: the hooks run through sh
    return installed(gemini_bin, base, base / "store")


def gemini_session(
    gemini: Gemini, prompt: str, project: Path, script: list, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    with FakeGemini(script) as api:
        done = gemini.run(prompt, project, api.url, env)
    assert done.returncode == 0, done.stderr
    trouble = [line for line in done.stderr.splitlines() if any(t in line for t in HOOK_TROUBLE)]
    assert not trouble, done.stderr
    assert not keeper_errors(gemini.store)
    return api.requests


def test_the_install_completes_the_extension_hooks_for_gemini_only(machine: Gemini) -> None:
    installed = json.loads((machine.extension / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert installed == json.loads((machine.extension / "hooks" / "gemini.json").read_text(encoding="utf-8"))
    shared = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert "AfterAgent" not in shared["hooks"]  # the repository's own file stays Claude Code's
    doctor = subprocess.run(
        [sys.executable, "-m", "keeper", "doctor"], env=machine.env(), capture_output=True, text=True, check=False
    ).stdout
    assert "its hooks complete" in next(line for line in doctor.splitlines() if " gemini " in line)


def test_gemini_saves_at_the_stop_claude_code_remembers_and_the_other_way_round(
    machine: Gemini, claude: Claude, tmp_path: Path
) -> None:
    project = git_project(tmp_path, "shop")
    claude.store = machine.store  # one machine, one store
    saved = "summary: Wired checkout to the pricing service\ndecisions:\n  - Checkout rounds prices half to even"
    script = [shell("echo one"), say("Finished."), follows_the_save_request(saved), say("Saved; all done.")]
    env = {"KEEPER_SAVE_EVERY": "50", "KEEPER_FINAL_SAVE_MIN": "1"}
    seen = gemini_session(machine, "wire up checkout", project, script, env)
    assert "Keeper memory for project 'shop' is empty so far" in texts_of(seen[0])
    asked = last_user_turn(seen[2])  # what the model answers after its "Finished.": AfterAgent's request
    assert len(asked) >= 1 and asked[0]["text"].startswith("Keeper memory: 1 tool uses in this session")
    assert "<hook_context>" not in asked[0]["text"]  # a user turn, not data the system prompt says to ignore
    launcher = str(machine.extension / "bin" / "keeper")
    assert f"'{launcher}' save --session " in asked[0]["text"]  # the launcher by path, and the session named
    assert "Saved to" in texts_of(seen[3]) and "+ 1 decision" in texts_of(seen[3])
    assert len(seen) == 4  # asked once: the reply after the save ends the turn
    sessions = list((machine.store / "projects").glob("shop-*/sessions/*.md"))
    record = sessions[0].read_text(encoding="utf-8")
    assert len(sessions) == 1 and "Checkout rounds prices half to even" in record
    assert "`echo one`" in record and "wire up checkout" in record  # read from Gemini's own chat file

    claude_takes_over(claude, project, "Gemini", "Checkout rounds prices half to even")

    first = gemini_session(machine, "and refunds?", project, [say("Refunds next.")])[0]
    assert "Refunds go back to the original card" in texts_of(first)
    assert "Checkout rounds prices half to even" in texts_of(first)


def test_a_fresh_install_sets_itself_up_at_the_first_sessions_end_with_no_hook_error(
    gemini_bin: str, tmp_path: Path
) -> None:
    """The README's one line and one session: the SessionEnd entry of the shared hooks file runs the
    launcher, which finds no environment yet and starts the set-up; its first step completes the hooks."""
    gemini = Gemini(gemini_bin, tmp_path / "home", tmp_path / "store")
    gemini.install()
    project = git_project(tmp_path, "fresh")
    gemini_session(gemini, "hello", project, [say("Hi.")])  # no hook error, no Keeper error
    hooks = gemini.extension / "hooks" / "hooks.json"
    wanted = (gemini.extension / "hooks" / "gemini.json").read_bytes()
    log = gemini.gemini_home / "keeper" / "setup.log"  # beside the extension, not in it
    for _ in range(600):  # the set-up runs in the background; its first step completes the hooks,
        if hooks.read_bytes() == wanted and log.exists():  # said in its log just before
            break
        time.sleep(0.1)
    assert hooks.read_bytes() == wanted
    assert log.exists()


def test_a_first_session_that_ends_before_keeper_is_ready_gets_its_session_file(
    gemini_bin: str, tmp_path: Path
) -> None:
    """The first session of a fresh install runs one hook of Keeper's, SessionEnd, which starts the set-up:
    the session had no session file. Its SessionEnd is kept, and run when the set-up is done."""
    gemini = Gemini(gemini_bin, tmp_path / "home", tmp_path / "store")
    gemini.install()
    data = gemini.gemini_home / "keeper"
    (data / "setup.lock").mkdir(parents=True)  # the set-up, held here until the session is over
    project = git_project(tmp_path, "fresh")
    gemini_session(gemini, "what is in this folder?", project, [shell("ls"), say("Nothing yet.")])
    sessions = gemini.store / "projects"
    assert not list(sessions.glob("fresh-*/sessions/*.md"))
    (data / "setup.lock").rmdir()
    set_up_plugin(gemini.extension, data, gemini.env())
    found = list(sessions.glob("fresh-*/sessions/*.md"))
    assert len(found) == 1, found
    record = found[0].read_text(encoding="utf-8")
    assert "what is in this folder?" in record and "`ls`" in record
    assert not keeper_errors(gemini.store)
