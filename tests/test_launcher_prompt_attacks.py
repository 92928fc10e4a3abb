"""Attacks on the launcher's prompt answers (launcher/prompt.bash): inputs and changes under which it once
answered {} where Keeper alone would not have, each kept as a case."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.test_launcher_counter import World
from tests.test_launcher_counter import pytestmark as counter_marks
from tests.test_launcher_prompt import NOTE, SESSION, Prompts, prompt_payload, sessions  # noqa: F401  (the fixture)

pytestmark = counter_marks  # the POSIX launcher under bash, as tests/test_launcher_prompt.py

ASKED = "Renamed parser module yet again please"


def _vouched(sessions: Prompts) -> None:  # noqa: F811
    """Prompts until the launcher answers ``ASKED`` itself."""
    for _ in range(3):
        sessions.prompt(ASKED)
        time.sleep(0.1)
    assert sessions.prompt(ASKED)[1]


def test_another_claude_config_folder_reaches_keeper(sessions: Prompts, tmp_path: Path) -> None:  # noqa: F811
    """Claude Code's auto memory lives in $CLAUDE_CONFIG_DIR: another one is another memory to recall from."""
    _vouched(sessions)
    config = tmp_path / "claude-config"
    encoded = "".join(c if c.isalnum() else "-" for c in str(sessions.project.resolve()))
    native = config / "projects" / encoded / "memory"
    native.mkdir(parents=True)
    (native / "parser.md").write_text("# Parser\n\nRenamed the parser module yet again, into the CLI package.\n")
    sessions.both(lambda w: w.env.update(CLAUDE_CONFIG_DIR=str(config)))
    reply, bash = sessions.prompt(ASKED)
    assert "hookSpecificOutput" in reply and not bash
    assert sessions.launcher.record() == sessions.alone.record()


NOT_JSON = {"a sum": '"n":1-2', "a leading zero": '"n":01', "a bare sign": '"n":-', "a tab in a string": '"n":"a\tb"'}


@pytest.mark.parametrize("field", list(NOT_JSON))
def test_a_payload_that_is_not_json_reaches_keeper(sessions: Prompts, field: str) -> None:  # noqa: F811
    """A field JSON does not allow: Python reads no payload at all (no session: nothing counted)."""
    _vouched(sessions)
    body = prompt_payload(sessions.project, ASKED).replace('"permission_mode":"default"', NOT_JSON[field])
    assert sessions.launcher.hook("user-prompt-submit", body) == sessions.alone.hook("user-prompt-submit", body)
    assert sessions.launcher.record() == sessions.alone.record()


@pytest.mark.xfail(
    strict=True,
    reason="the launcher tells a held file by its mtime alone (bash has no size without a process); Keeper's "
    "gate by mtime and size: a file rewritten and dated back to the nanosecond (touch -r, a restore) differs",
)
def test_a_session_file_rewritten_at_the_same_mtime_reaches_keeper(sessions: Prompts) -> None:  # noqa: F811
    _vouched(sessions)

    def rewrite(world: World) -> None:
        path = next(p for p in world.store.glob("projects/*/sessions/*.md") if NOTE in p.read_text())
        held = path.stat().st_mtime_ns
        path.write_text(path.read_text() + "\n## Parser\n\n- Renamed the parser module yet again, into the CLI.\n")
        os.utime(path, ns=(held, held))

    sessions.both(rewrite)
    assert not sessions.prompt(ASKED)[1]  # Keeper's reply and the launcher's agree, by Python


def test_claude_codes_auto_memory_edited_reaches_keeper(sessions: Prompts) -> None:  # noqa: F811
    """A file of Claude Code's auto memory written in place (its folder's time unchanged) is recalled from."""
    encoded = "".join(c if c.isalnum() else "-" for c in str(sessions.project.resolve()))
    topic = Path(os.environ["HOME"]) / ".claude" / "projects" / encoded / "memory" / "topics.md"
    topic.parent.mkdir(parents=True)
    topic.write_text("# Topics\n\n- the invoice exporter\n")
    time.sleep(0.1)
    _vouched(sessions)
    with topic.open("a") as fh:
        fh.write("- Renamed the parser module yet again, into the CLI package.\n")
    reply, bash = sessions.prompt(ASKED)
    assert "hookSpecificOutput" in reply and not bash
