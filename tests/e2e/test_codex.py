"""Keeper inside the real Codex CLI, installed as a Codex user installs it, sharing one store with Claude Code.

One machine for the module: Codex (version pinned in conftest) with this repository added as a
marketplace and ``keeper@keeper`` installed through ``codex plugin``, the plugin's environment set
up the way its first session sets it up, no ``keeper`` on PATH, and Keeper's hooks trusted the
way /hooks trusts them. The model is a local fake of the Responses API that plays a script, and
follows Keeper's save request literally: the command line it was given, its own values.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Claude, Codex, git_project, set_up
from tests.e2e.fakeapi import FakeAPI, bash, text
from tests.e2e.fakeapi import texts_of as claude_texts
from tests.e2e.fakeresponses import FakeResponses, message, shell, texts_of

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="Codex runs hooks under bash")]

REQUEST = re.compile(r"^(\S.* save <<'(KEEPER_[0-9A-F]{12})')$", re.MULTILINE)


def follows_the_save_request(body: str) -> Any:
    """The scripted model's save: the command line Keeper's latest request gave, with this session's values."""

    def turn(request: dict[str, Any]) -> dict[str, Any]:
        asked = REQUEST.findall(texts_of(request))
        assert asked, "no save request reached the model"
        command, end = asked[-1]
        return shell(f"{command}\n{body}\n{end}")

    return turn


def installed(codex_bin: str, base: Path, store: Path) -> Codex:
    """Codex with Keeper installed as the README says and set up by the set-up its first session starts (``set_up``)."""
    codex = Codex(codex_bin, "", base / "home", store)
    codex.install()
    plugin = next((codex.codex_home / "plugins" / "cache" / "keeper" / "keeper").iterdir())
    data = codex.codex_home / "plugins" / "data" / "keeper-keeper"
    set_up(plugin, data, codex.env())
    return codex


@pytest.fixture(scope="module")
def machine(codex_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Codex:
    base = tmp_path_factory.mktemp("codex machine")  # a space in every path: Codex runs hooks through bash
    codex = installed(codex_bin, base, base / "store")
    codex.fresh = (codex.hooks(base), keeper(codex, "doctor"))  # as installed, before anyone trusted a hook
    return codex


def keeper(codex: Codex, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "keeper", *args],
        env=codex.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout


def codex_session(codex: Codex, prompt: str, project: Path, script: list, env: dict[str, str] | None = None) -> list:
    with FakeResponses(script) as api:
        done = codex.run(prompt, project, api.url, env)
    assert done.returncode == 0, done.stderr
    assert "hook: SessionStart Completed" in done.stderr, done.stderr
    assert " Failed" not in done.stderr and "UserPromptSubmit Blocked" not in done.stderr, done.stderr
    return [texts_of(r) for r in api.requests]


def test_doctor_names_the_hooks_codex_does_not_trust_until_they_are(machine: Codex, tmp_path: Path) -> None:
    hooks, doctor = machine.fresh
    assert {h["trustStatus"] for h in hooks} == {"untrusted"}
    events = {h["eventName"][0].upper() + h["eventName"][1:] for h in hooks}
    named = next(line for line in doctor.splitlines() if " codex " in line)
    assert "FAIL" in named and set(named.split(" hooks for ")[1].split(":")[0].split(", ")) == events
    machine.trust(git_project(tmp_path, "svc"))
    listed = {h["eventName"]: h for h in machine.hooks(tmp_path)}
    assert {h["trustStatus"] for h in listed.values()} == {"trusted"}
    assert listed["sessionStart"]["additionalContextLimit"] == 0  # Keeper's bounded context passes whole
    assert "its hooks trusted" in keeper(machine, "doctor")


def test_codex_saves_claude_code_remembers_and_the_other_way_round(
    machine: Codex, claude: Claude, tmp_path: Path
) -> None:
    project = git_project(tmp_path, "shop")
    machine.trust(project)
    claude.store = machine.store  # one machine, one store
    saved = "summary: Wired checkout to the pricing service\ndecisions:\n  - Checkout rounds prices half to even"
    script = [shell("echo one"), shell("echo two"), follows_the_save_request(saved), message("All done.")]
    seen = codex_session(machine, "wire up checkout", project, script, {"KEEPER_SAVE_EVERY": "2"})
    assert "Keeper memory for project 'shop' is empty so far" in seen[0]
    assert "Saved to" in seen[3] and "+ 1 decision" in seen[3]  # the save ran in Codex's sandboxed shell
    sessions = list((machine.store / "projects").glob("shop-*/sessions/*.md"))
    record = sessions[0].read_text(encoding="utf-8")
    assert len(sessions) == 1 and "- Ended: " in record  # the save is in that session's own file, with
    assert "Checkout rounds prices half to even" in record and "`echo two`" in record  # what the rollout shows

    with FakeAPI([bash(CLAUDE_SAVE), text("Noted.")]) as api:
        done = claude.run("what did Codex decide about checkout?", project, api.url)
    assert done.returncode == 0, done.stderr
    assert "Checkout rounds prices half to even" in claude_texts(api.requests[0])

    first = codex_session(machine, "and refunds?", project, [message("Refunds next.")])[0]
    assert "Refunds go back to the original card" in first and "Checkout rounds prices half to even" in first


CLAUDE_SAVE = """keeper save <<'KEEPER'
summary: Planned refunds
decisions:
  - Refunds go back to the original card
KEEPER"""


def test_a_stop_request_is_followed_once_and_never_loops(machine: Codex, tmp_path: Path) -> None:
    project = git_project(tmp_path, "tool")
    machine.trust(project)
    env = {"KEEPER_SAVE_EVERY": "50", "KEEPER_FINAL_SAVE_MIN": "1"}
    script = [shell("echo work"), message("Finished."), message("Finished; not saving."), message("Unexpected.")]
    seen = codex_session(machine, "do one thing", project, script, env)
    assert len(seen) == 3, "Stop should continue the turn exactly once"
    assert seen[2].count("tool uses in this session are not yet in memory") == 1  # a Stop block's reason
    log = json.dumps([p.read_text(encoding="utf-8") for p in (machine.store / "logs").glob("*.log")])
    assert "ERROR" not in log


def test_a_full_memory_reaches_the_model_whole_not_as_codex_preview(machine: Codex, tmp_path: Path) -> None:
    """Codex previews additionalContext over ~2,500 tokens (head and tail); Keeper's is bounded by itself."""
    project = git_project(tmp_path, "wide")
    machine.trust(project)
    decisions = [f"--decision=決定 {i}: 価格は半分を偶数に丸める、理由はテスト {i} 番で確認済み" for i in range(120)]
    saved = subprocess.run(
        [sys.executable, "-m", "keeper", "save", "--summary", "filled", *decisions, "--project-dir", str(project)],
        env=machine.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert saved.returncode == 0, saved.stderr
    first = codex_session(machine, "hello", project, [message("Hi.")])[0]
    assert "truncated output" not in first and "Full hook output saved to" not in first
    start = first.index("Keeper memory for project 'wide'")
    context = first[start : first.index("\nhello", start)]  # the developer message, up to the user's prompt
    assert len(context.encode("utf-8")) > 10_000  # past the size Codex would preview as head and tail
    assert "決定 119:" in context and "決定 60:" in context  # the newest decisions first, then older ones
    assert context.rstrip().endswith("searches them and memory.md.")  # and its last line: nothing cut out
