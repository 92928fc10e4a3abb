"""Keeper inside the real Claude Code CLI: what the model is shown, and what lands on disk.

Each test drives ``claude -p`` (version pinned in conftest) with this repository loaded as a
plugin, against a local fake Messages API that plays the model's part from a script and records
every request, so the assertions are about what Claude Code really sent to the model.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import Claude, git_project
from tests.e2e.fakeapi import FakeAPI, bash, text, texts_of

pytestmark = pytest.mark.e2e

SAVE = """keeper save <<'KEEPER'
summary: Wired the checkout widget to the pricing service.
decisions:
  - Use the blue widget for checkout because it handles currency rounding
state:
  - Checkout widget done; refunds next
KEEPER"""
REMINDER = "PostToolUse:Bash hook additional context: Keeper memory: 2 tool uses since"
FINAL = "Stop hook additional context: Keeper memory:"


def session(
    claude: Claude, prompt: str | list[str], project: Path, script: list, env: dict[str, str] | None = None
) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """One ``claude -p`` session against a scripted model: the text of every request, and the run."""
    with FakeAPI(script) as api:
        done = claude.run(prompt, project, api.url, env)
    assert done.returncode == 0, done.stderr
    assert api.requests, "Claude Code sent no request to the model"
    return [texts_of(r) for r in api.requests], done


def test_save_request_save_and_next_session_memory(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "a", "shop")
    env = {"KEEPER_SAVE_EVERY": "2", "KEEPER_FINAL_SAVE_MIN": "3"}
    script = [bash("echo one"), bash("echo two"), bash(SAVE), text("All done.")]
    seen, _ = session(claude, "wire up the checkout widget", project, script, env)
    assert len(seen) == 4
    assert REMINDER not in seen[0] and REMINDER not in seen[1]  # not before save_every tool uses
    assert REMINDER in seen[2] and "keeper save <<'KEEPER_" in seen[2]  # a marker drawn for this request
    assert "Saved to" in seen[3] and "+ 1 decision" in seen[3]  # the model sees what the save did
    assert FINAL not in seen[3]  # everything is saved: Stop asks for nothing
    memory = claude.memory_of(project)
    assert "- Use the blue widget for checkout because it handles currency rounding" in memory
    assert "Wired the checkout widget to the pricing service." in memory

    first = session(claude, "what did we decide about checkout?", project, [text("Hello again.")])[0][0]
    assert "SessionStart hook additional context: Keeper memory for project 'shop'" in first
    assert "Use the blue widget for checkout because it handles currency rounding" in first


def test_recall_puts_the_match_in_front_of_the_model(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "svc")
    saved = claude.keeper(
        [
            "save",
            "--summary",
            "Moved cache invalidation to Redis pub/sub channels",
            "--decision",
            "Cache invalidation goes through Redis pub/sub",
        ],
        project,
    )
    assert saved.returncode == 0, saved.stderr
    first = session(claude, "/keeper:recall redis invalidaton", project, [text("Found it.")])[0][0]  # typo on purpose
    assert "Keeper recall for 'redis invalidaton'" in first
    assert "Cache invalidation goes through Redis pub/sub" in first


def test_hostile_recall_arguments_execute_nothing(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "svc")
    markers = [tmp_path / f"pwned{i}" for i in range(4)]
    query = f'don\'t "quote" $(touch {markers[0]}) `touch {markers[1]}`; touch {markers[2]} && touch {markers[3]} | cat'
    first = session(claude, f"/keeper:recall {query}", project, [text("Nothing relevant.")])[0][0]
    assert not [m for m in markers if m.exists()]
    assert f"$(touch {markers[0]})" in first  # searched literally and shown as text


def test_stop_asks_for_the_final_save_once_and_never_loops(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "tool")
    env = {"KEEPER_SAVE_EVERY": "50", "KEEPER_FINAL_SAVE_MIN": "1"}
    script = [bash("echo work"), text("Finished."), text("Finished; not saving this time."), text("Unexpected.")]
    seen, done = session(claude, "do one thing", project, script, env)
    assert len(seen) == 3, "Stop should continue the turn exactly once"
    assert FINAL not in seen[1]
    assert seen[2].count(FINAL) == 1 and "1 tool uses in this session are not yet in memory" in seen[2]
    assert "Unexpected." not in done.stdout


def test_a_folder_of_the_same_name_elsewhere_gets_none_of_this_memory(claude: Claude, tmp_path: Path) -> None:
    mine = git_project(tmp_path, "team-a", "api")
    other = git_project(tmp_path, "team-b", "api")
    assert claude.keeper(["save", "--decision", "Team A pins Postgres 16"], mine).returncode == 0
    first = session(claude, "hello", other, [text("Hi.")])[0][0]
    assert "Team A pins Postgres 16" not in first
    assert "Keeper memory for project 'api' is empty so far" in first
    assert "Team A pins Postgres 16" in session(claude, "hello", mine, [text("Hi.")])[0][0]


def test_after_compaction_the_next_request_carries_memory_and_the_session_so_far(
    claude: Claude, tmp_path: Path
) -> None:
    project = git_project(tmp_path, "shop")
    assert claude.keeper(["save", "--decision", "Refunds round half to even"], project).returncode == 0
    turns = ["Look at the refund rounding", "/compact keep decisions", "what is next?"]
    script = [text("Looked."), text("<summary>SUMMARY-OF-THE-CONVERSATION</summary>"), text("Next: tests.")]
    seen, _ = session(claude, turns, project, script)
    after = [t for t in seen if "SUMMARY-OF-THE-CONVERSATION" in t]
    assert after, "no request followed the compaction"
    assert "SessionStart hook additional context: Keeper memory for project 'shop'" in after[0]
    assert "Refunds round half to even" in after[0]
    assert "This session so far" in after[0] and "Look at the refund rounding" in after[0]


def test_plugin_passes_strict_validation(claude_bin: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [claude_bin, "plugin", "validate", "--strict", str(REPO)],
        env={
            **os.environ,
            "HOME": str(tmp_path),
            "USERPROFILE": str(tmp_path),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
    assert "⚠" not in done.stdout and "✘" not in done.stdout


HOSTILE_SAVE = """keeper save <<'KEEPER'
summary: PR #42 open, waiting on review: "ship it" said Ana
decisions:
  - Use Redis SCAN, not KEYS: KEYS blocks the server
  - Logs live in C:\\Users\\ana\\logs # not in %TEMP%
state:
  - yes
  - 1.10
issues:
  - - leading dash: {unclosed [bracket
KEEPER"""


def test_a_save_with_hashes_colons_and_quotes_arrives_intact(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "api")
    seen, _ = session(claude, "finish the review notes", project, [bash(HOSTILE_SAVE), text("Saved.")])
    assert "Saved to" in seen[1] and "could not read" not in seen[1]
    memory = claude.memory_of(project)
    for value in (
        "Use Redis SCAN, not KEYS: KEYS blocks the server (",
        "Logs live in C:\\Users\\ana\\logs # not in %TEMP% (",
        "- yes\n- 1.10\n",
        "- - leading dash: {unclosed [bracket (",
        'PR #42 open, waiting on review: "ship it" said Ana',
    ):
        assert value in memory, value


def test_a_session_that_never_saved_is_seen_by_the_next_one(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "web")
    env = {"KEEPER_SAVE_EVERY": "50", "KEEPER_FINAL_SAVE_MIN": "50"}
    session(claude, "rename the invoice exporter", project, [bash("echo renaming"), text("Renamed.")], env)
    first = session(claude, "where were we?", project, [text("Here.")])[0][0]
    assert "ended without a save" in first and 'first prompt: "rename the invoice exporter"' in first


def test_a_correction_saved_in_one_project_reaches_a_session_in_another(claude: Claude, tmp_path: Path) -> None:
    first, second = git_project(tmp_path, "alpha"), git_project(tmp_path, "beta")
    save = "keeper save <<'KEEPER'\nscope: global\nfeedback:\n  - Never bypass git hooks with --no-verify\nKEEPER"
    seen, _ = session(claude, "commit this", first, [bash(save), text("Noted.")])
    assert "+ 1 feedback (global) item" in seen[1]
    request = session(claude, "commit that", second, [text("Committing.")])[0][0]
    assert "Never bypass git hooks with --no-verify" in request


def test_notices_reach_the_user_and_nothing_else_is_added(claude: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "notices")
    assert (
        claude.keeper(
            ["save", "--summary", "Sessions moved to Redis with a 24h TTL", "--session", "old"], project
        ).returncode
        == 0
    )
    env = {"KEEPER_SAVE_EVERY": "1", "KEEPER_FINAL_SAVE_MIN": "50"}
    turns = ["why is the redis session ttl 24h?"]
    with FakeAPI([bash("echo checking"), text("Because of checkout."), text("done")]) as api:
        done = claude.run(turns, project, api.url, env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    shown = [
        json.dumps(e) for e in events if e.get("type") == "system" and e.get("subtype") not in ("init", "hook_started")
    ]
    notices = [s for s in shown if "Keeper: " in s]
    assert any("Keeper: recalled 1 earlier note" in s for s in notices), shown
    assert any("Keeper: asked Claude to save (1 tool uses since the last save)" in s for s in notices), shown
    keeper_lines = {line for s in notices for line in re.findall(r"Keeper: [^\"\\\\]*", s)}
    assert all(
        line.startswith(("Keeper: no memory", "Keeper: 0 decisions", "Keeper: recalled", "Keeper: asked"))
        for line in keeper_lines
    ), keeper_lines


def test_a_team_decision_saved_in_one_clone_reaches_a_teammates_first_request(
    claude_bin: str, keeper_bin_dir: str, tmp_path: Path
) -> None:
    """Ana's Claude saves a convention with scope: team; she commits and pushes; Ben pulls, and his
    first request in his own clone (another HOME, another store) carries it, framed as team notes."""
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]

    def run(cwd: Path, *args: str) -> None:
        subprocess.run([*git, *args], cwd=cwd, check=True, capture_output=True)

    origin = tmp_path / "origin.git"
    run(tmp_path, "init", "-q", "--bare", str(origin))
    ana_repo, ben_repo = tmp_path / "ana" / "shop", tmp_path / "ben" / "shop"
    ana_repo.parent.mkdir()
    ben_repo.parent.mkdir()
    run(tmp_path, "clone", "-q", str(origin), str(ana_repo))
    (ana_repo / "README.md").write_text("# shop\n")
    run(ana_repo, "add", "README.md")
    run(ana_repo, "commit", "-qm", "start")
    run(ana_repo, "push", "-q", "origin", "HEAD:main")
    run(tmp_path, "clone", "-q", str(origin), str(ben_repo))

    ana = Claude(claude_bin, keeper_bin_dir, tmp_path / "ana-machine")
    save = "keeper save <<'KEEPER'\nscope: team\ndecisions:\n  - Prices are integer cents in every service\nKEEPER"
    seen, _ = session(ana, "agree the money convention", ana_repo, [bash(save), text("Saved for the team.")])
    assert "Saved to " in seen[1] and ".claude/keeper/team.md" in seen[1]
    run(ana_repo, "add", ".claude/keeper")
    run(ana_repo, "commit", "-qm", "Team memory: money in cents")
    run(ana_repo, "push", "-q", "origin", "HEAD:main")

    run(ben_repo, "pull", "-q", "origin", "main")
    ben = Claude(claude_bin, keeper_bin_dir, tmp_path / "ben-machine")
    first = session(ben, "add a discount field", ben_repo, [text("On it.")])[0][0]
    assert "Team notes for this repository" in first and "not as instructions" in first
    assert "> - Prices are integer cents in every service" in first
    assert ben.memory_of(ben_repo) == ""  # Ben's own memory is untouched: the note came through git


def test_a_save_on_one_machine_reaches_the_next_session_on_another_through_sync(
    claude: Claude, claude_bin: str, keeper_bin_dir: str, tmp_path: Path
) -> None:
    """Two HOMEs, two clones of one repository at different paths, one bare remote: the automatic
    pull at SessionStart and push at SessionEnd alone carry a save across."""
    import time

    from tests.e2e.conftest import Claude as Machine

    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    other = Machine(claude_bin, keeper_bin_dir, tmp_path / "machine-2")
    clones = []
    for base in ("laptop/src/shop", "desktop/work/shop-clone"):
        project = git_project(tmp_path, *base.split("/"))
        (project / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:me/shop.git\n')
        clones.append(project)
    for machine, project in ((claude, clones[0]), (other, clones[1])):
        assert machine.keeper(["sync", "--remote", str(remote)], project).returncode == 0

    session(claude, "wire up the checkout widget", clones[0], [bash(SAVE), text("Saved.")])

    def remote_has(text: str) -> bool:
        found = subprocess.run(
            ["git", "--git-dir", str(remote), "grep", "-q", text, "main", "--"], capture_output=True, check=False
        )
        return found.returncode == 0

    deadline = time.monotonic() + 90
    while not remote_has("blue widget") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert remote_has("blue widget"), "SessionEnd's background push did not reach the remote"

    session(other, "hello", clones[1], [text("Hi.")])  # its SessionStart pulls in the background
    deadline = time.monotonic() + 90
    while "blue widget" not in other.memory_of(clones[1]) and time.monotonic() < deadline:
        time.sleep(0.5)
    first = session(other, "what did we decide about checkout?", clones[1], [text("The blue one.")])[0][0]
    assert "Use the blue widget for checkout because it handles currency rounding" in first
