"""``keeper doctor --live`` against the real Claude Code and Codex CLIs, installed as a user installs them.

The model is a local fake that answers the check as a model that reads its context does: the check
word when it was shown one, else NONE; or a fake that never repeats it, or one that never answers.
Each run must leave nothing of itself behind: no check word in the user's store, no throwaway store.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Claude, Codex, claude_installed, git_project
from tests.e2e.fakeapi import CHECK_WORD, FakeAPI, check_word, repeats_check_word, text
from tests.e2e.fakeresponses import FakeResponses, message
from tests.e2e.fakeresponses import texts_of as codex_texts

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(sys.platform == "win32", reason="POSIX launchers and paths")]


def doctor(env: dict[str, str], project: Path, *args: str) -> tuple[int, str]:
    """``keeper doctor --live`` as a user types it in the project; its exit code and what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "doctor", "--live", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def live_line(said: str) -> str:
    lines = said.splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith(("ok    live", "FAIL  live")))
    fix = lines[at + 1].strip() if at + 1 < len(lines) and lines[at + 1].strip().startswith("fix:") else ""
    return f"{lines[at].strip()} {fix}".strip()


def left_behind(store: Path, tmp: Path) -> list[str]:
    """Any trace of a run: a check word in the user's store, a throwaway store not deleted."""
    words = [str(p) for p in store.rglob("*") if p.is_file() and CHECK_WORD.search(p.read_text(errors="replace"))]
    return words + [str(p) for p in tmp.glob("keeper-check-*")]


# -- Claude Code -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def machine(claude_bin: str, keeper_bin_dir: str, tmp_path_factory: pytest.TempPathFactory) -> Claude:
    base = tmp_path_factory.mktemp("claude machine")
    claude = claude_installed(Claude(claude_bin, keeper_bin_dir, base))
    (base / "tmp").mkdir()
    return claude


def claude_env(claude: Claude, api_url: str, **extra: str) -> dict[str, str]:
    env = claude.env(api_url, {"TMPDIR": str(claude.base / "tmp"), **extra})
    env["PATH"] = os.path.dirname(claude.binary) + os.pathsep + env["PATH"]
    return env


def test_claude_repeats_the_check_word_its_memory_holds_and_nothing_stays(machine: Claude, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    assert machine.keeper(["save", "--decision", "Prices are stored in cents"], project).returncode == 0
    with FakeAPI([repeats_check_word]) as api:
        code, said = doctor(claude_env(machine, api.url), project)
    assert said.startswith("Live check: starting `claude -p` once") and "one model turn" in said
    assert "costs one request" in said and "your own login" in said
    assert live_line(said).startswith("ok    live     Claude Code repeated this run's check word"), said
    assert code == 0, said
    assert len(api.requests) == 1 and api.requests[0]["tools"] == []  # one turn, no tool to look the word up with
    assert not left_behind(machine.store, machine.base / "tmp")
    assert "Prices are stored in cents" in machine.memory_of(project)  # the user's memory as it was


def test_a_model_that_does_not_repeat_the_word_is_reported_with_where_it_was_lost(
    machine: Claude, tmp_path: Path
) -> None:
    project = git_project(tmp_path, "shop")
    with FakeAPI([text("I have no memory of that.")]) as api:
        code, said = doctor(claude_env(machine, api.url), project)
    assert code == 1
    line = live_line(said)
    assert line.startswith("FAIL  live     Keeper gave Claude Code its memory (") and "did not hold" in line, said
    assert "fix: run the check again" in line
    assert CHECK_WORD.search(json.dumps(api.requests))  # the word was there: the model did not say it
    assert not left_behind(machine.store, machine.base / "tmp")


def test_claude_not_logged_in_is_said_with_how_to_log_in(machine: Claude, tmp_path: Path) -> None:
    env = claude_env(machine, "http://127.0.0.1:9")
    del env["ANTHROPIC_API_KEY"]
    code, said = doctor(env, git_project(tmp_path, "shop"))
    assert code == 1
    assert live_line(said).startswith("FAIL  live     Claude Code is not logged in (Not logged in"), said
    assert "/login" in live_line(said)


def test_an_agent_that_never_answers_is_stopped_at_the_time_limit(machine: Claude, tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts the connection and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        code, said = doctor(claude_env(machine, url), git_project(tmp_path, "shop"), "--timeout", "8")
    assert code == 1
    assert live_line(said).startswith("FAIL  live     Claude Code: claude did not finish within 8 s"), said
    assert "--timeout waits longer" in live_line(said)
    assert not left_behind(machine.store, machine.base / "tmp")


def test_without_the_plugin_claude_runs_no_hook_and_doctor_says_how_to_install(
    claude_bin: str, keeper_bin_dir: str, tmp_path: Path
) -> None:
    bare = Claude(claude_bin, keeper_bin_dir, tmp_path / "bare machine")
    (bare.base / "tmp").mkdir()
    with FakeAPI([repeats_check_word]) as api:
        code, said = doctor(claude_env(bare, api.url), git_project(tmp_path, "shop"), "--agent", "claude")
    assert code == 1
    line = live_line(said)
    assert line.startswith("FAIL  live     Keeper's hooks did not run in Claude Code"), said
    assert "claude plugin install keeper@keeper" in line
    assert api.requests and not CHECK_WORD.search(json.dumps(api.requests))


# -- Codex -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def codex(codex_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Codex:
    base = tmp_path_factory.mktemp("codex machine")
    codex = Codex(codex_bin, "", base / "home", base / "store").installed()
    config = codex.codex_home / "config.toml"
    config.write_text('model = "gpt-5.5"\nmodel_provider = "fake"\n' + config.read_text(encoding="utf-8"))
    (base / "tmp").mkdir()
    return codex


def codex_env(codex: Codex, api_url: str) -> dict[str, str]:
    """The user's environment, with ``codex`` on PATH and its config pointing at the fake at ``api_url``."""
    config = codex.codex_home / "config.toml"
    kept = re.sub(r"\n\[model_providers\.fake\]\n(?:[^\[\n].*\n)*", "\n", config.read_text(encoding="utf-8"))
    provider = {"name": "fake", "base_url": api_url, "wire_api": "responses", "env_key": "FAKE_API_KEY"}
    table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in provider.items())
    config.write_text(kept + "\n[model_providers.fake]\n" + table + "request_max_retries = 0\nstream_max_retries = 0\n")
    env = codex.env({"TMPDIR": str(codex.home.parent / "tmp")})
    env["PATH"] = os.path.dirname(codex.binary) + os.pathsep + env["PATH"]
    return env


def answers_check(body: dict[str, Any]) -> dict[str, Any]:
    return message(check_word(codex_texts(body)))


def test_codex_hooks_not_trusted_yet_are_named_as_why_memory_did_not_arrive(codex: Codex, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    with FakeResponses([answers_check]) as api:
        code, said = doctor(codex_env(codex, api.url), project, "--agent", "codex")
    assert code == 1
    assert said.startswith("Live check: starting `codex exec` once")
    line = live_line(said)
    assert line.startswith("FAIL  live     Keeper's hooks did not run in Codex"), said
    assert "type /hooks and trust Keeper's hooks" in line
    assert len(api.requests) == 1


def test_codex_repeats_the_check_word_once_its_hooks_are_trusted(codex: Codex, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    codex.trust(project)
    with FakeResponses([answers_check]) as api:
        _, said = doctor(codex_env(codex, api.url), project, "--agent", "codex")
    assert live_line(said).startswith("ok    live     Codex repeated this run's check word"), said
    assert len(api.requests) == 1
    assert not left_behind(codex.store, codex.home.parent / "tmp")
    assert not list((codex.codex_home / "sessions").rglob("*.jsonl"))  # --ephemeral: no rollout stays


def test_codex_model_that_does_not_repeat_the_word_is_reported(codex: Codex, tmp_path: Path) -> None:
    project = git_project(tmp_path, "shop")
    codex.trust(project)
    with FakeResponses([message("NONE")]) as api:
        code, said = doctor(codex_env(codex, api.url), project, "--agent", "codex")
    assert code == 1
    assert live_line(said).startswith("FAIL  live     Keeper gave Codex its memory ("), said
    assert CHECK_WORD.search(json.dumps(api.requests))
    assert not left_behind(codex.store, codex.home.parent / "tmp")
