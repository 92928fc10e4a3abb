"""The launcher's records after an upgrade in place: a keeper that pip, pipx or uv installed anew runs on
the same Python, so a record the earlier release wrote (its rules: the least words a recall tries, the
terms it holds) must not answer for the new one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.releases import built_wheel, pip_installed, working_tree
from tests.test_launcher_counter import pytestmark as counter_marks

pytestmark = counter_marks
LAUNCHER = REPO / "bin" / "keeper"
SYSTEM_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))
PROMPT = "zebracorn ledger"  # two words: fewer than a recall tries, until the release below


def newer_release(tmp_path: Path) -> Path:
    """This tree as a later release that recalls for two-word prompts."""
    tree = working_tree(tmp_path / "newer")
    init = tree / "keeper" / "__init__.py"
    init.write_text(re.sub(r'__version__ = "([^"]+)"', r'__version__ = "\1.post1"', init.read_text()), "utf-8")
    prompts = tree / "keeper" / "hooks" / "prompts.py"
    text = prompts.read_text(encoding="utf-8")
    assert "AUTO_MIN_WORDS = 4\n" in text
    prompts.write_text(text.replace("AUTO_MIN_WORDS = 4\n", "AUTO_MIN_WORDS = 2\n"), encoding="utf-8")
    return built_wheel(tree)


@pytest.mark.slow  # two wheels built, and pip run twice
@pytest.mark.needs("pip")
def test_a_prompt_record_of_the_release_before_an_upgrade_in_place_answers_nothing(tmp_path: Path) -> None:
    venv = pip_installed(tmp_path)
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    data = tmp_path / "plugin-data"  # no environment of the plugin's own: the keeper on PATH answers
    data.mkdir()
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": f"{venv / 'bin'}{os.pathsep}{SYSTEM_PATH}",
        "KEEPER_HOME": str(tmp_path / "store"),
        "CLAUDE_PLUGIN_ROOT": str(REPO),
        "CLAUDE_PLUGIN_DATA": str(data),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    saved = {**env, "CLAUDE_CODE_SESSION_ID": "s-0"}
    subprocess.run(
        [str(venv / "bin" / "keeper"), "save", "--summary", "The zebracorn ledger balances nightly."],
        env=saved,
        check=True,
        capture_output=True,
    )

    def hook(event: str, body: dict[str, Any]) -> dict[str, Any]:
        done = subprocess.run(
            [str(LAUNCHER), "hook", event],
            input=json.dumps(
                {"session_id": "s-1", "transcript_path": "", "cwd": str(project), **body}, separators=(",", ":")
            ),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert done.stderr == ""
        reply = json.loads(done.stdout)
        assert isinstance(reply, dict)
        return reply

    hook("session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    assert hook("user-prompt-submit", prompt) == {}
    assert (data / "counter" / "s-1.prompt").is_file()  # the launcher answers the next one itself
    assert hook("user-prompt-submit", prompt) == {}

    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps"]
    pip += ["--quiet", "--disable-pip-version-check", "--force-reinstall", str(newer_release(tmp_path))]
    subprocess.run(pip, check=True)
    reply = hook("user-prompt-submit", prompt)
    assert "zebracorn ledger balances" in reply.get("hookSpecificOutput", {}).get("additionalContext", "")
