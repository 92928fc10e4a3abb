"""A Stop with nothing new is answered from its kept key (``keeper.hooks.idle``) and leaves exactly
what a Stop that runs the whole update leaves: played side by side on two stores, one of which
never keeps a key."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.capture import saving
from keeper.memory.document import SaveInput
from keeper.store import config, identity, paths
from tests.helpers import run_hook

SESSION = "s-idle"
ACTIONS = st.sampled_from(["tool", "reply", "same", "active", "line", "save", "end", "gone", "prompt", "half"])
TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T_]\d{2}:?\d{2}(:\d{2})?|\b\d{2}:\d{2}\b")  # a save on either side of a minute
MARKER = re.compile(r"KEEPER_[0-9A-F]{12}")  # a save request's end marker, drawn for each request


class World:
    """One store and one transcript, driven through the real hook entry."""

    def __init__(self, base: Path, name: str, project_dir: Path, keeps_keys: bool) -> None:
        self.folder, self.keeps_keys, self.project_dir = base / name, keeps_keys, project_dir
        self.home, self.transcript = self.folder / "store", self.folder / "transcript.jsonl"
        self.folder.mkdir()
        self.transcript.write_text("")

    def project(self, monkeypatch: pytest.MonkeyPatch) -> paths.Project:
        monkeypatch.setenv("KEEPER_HOME", str(self.home))
        return identity.make_project(identity.find_project_root(str(self.project_dir)))

    def hook(self, event: str, monkeypatch: pytest.MonkeyPatch, capsys: Any, **fields: Any) -> dict:
        project = self.project(monkeypatch)
        if event == "stop" and not self.keeps_keys:
            Path(project.session_file(SESSION, "idle")).unlink(missing_ok=True)
        payload = {"session_id": SESSION, "cwd": str(self.project_dir), "transcript_path": str(self.transcript)}
        return run_hook(event, {**payload, **fields}, monkeypatch, capsys)

    def record(self, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
        """The session files and the session's state, times and the world's folder masked (the two
        stores run a moment apart, each with its own transcript)."""
        project = self.project(monkeypatch)

        def masked(text: str) -> str:
            escaped = json.dumps(str(self.folder))[1:-1]  # the folder as the session's JSON state holds it
            return TIME.sub("T", text.replace(escaped, "W").replace(str(self.folder), "W"))

        found = {masked(p.name): masked(p.read_text()) for p in Path(project.sessions).glob("*.md")}
        state = Path(project.session_file(SESSION, "json"))
        found["state"] = masked(state.read_text()) if state.exists() else ""
        return found


def act(world: World, action: str, step: int, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> dict:
    """One thing that happens in a session; the hook's reply, if it was a hook."""
    reply = f"Reply {step % 3}."
    if action == "tool":
        return world.hook("post-tool-use", monkeypatch, capsys, tool_name="Read", tool_input={})
    if action in ("reply", "same", "active"):
        said = {"reply": reply, "same": "Reply 0.", "active": "Saved."}[action]
        return world.hook("stop", monkeypatch, capsys, last_assistant_message=said, stop_hook_active=action == "active")
    if action in ("line", "half"):
        entry = {"type": "user", "timestamp": f"2026-11-22T10:{step % 60:02d}:00Z", "message": {"content": reply}}
        with world.transcript.open("a") as fh:  # "half": a line still being written
            fh.write(json.dumps(entry) + ("\n" if action == "line" else ""))
        return {}
    if action == "prompt":
        return world.hook("user-prompt-submit", monkeypatch, capsys, prompt="go on")
    if action == "end":
        return world.hook("session-end", monkeypatch, capsys, reason="other")
    project = world.project(monkeypatch)
    if action == "save":
        saving.save(project, config.load(None), SaveInput(summary=f"Step {step}"), SESSION)
    else:  # "gone": the session files deleted by hand
        for file in Path(project.sessions).glob("*.md"):
            file.unlink()
    return {}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(ACTIONS, min_size=1, max_size=14))
def test_a_stop_answered_from_its_key_leaves_what_the_whole_update_leaves(
    actions: list[str], project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        fast, full = World(base, "fast", project_dir, True), World(base, "full", project_dir, False)
        try:
            # every action followed by the same Stop: most of those find nothing new, and keep a key
            for step, action in enumerate(a for each in [*actions, "same"] for a in (each, "same")):
                replies = [act(world, action, step, monkeypatch, capsys) for world in (fast, full)]
                assert len({MARKER.sub("M", json.dumps(reply)) for reply in replies}) == 1, (step, action)
                assert fast.record(monkeypatch) == full.record(monkeypatch), (step, action)
        finally:
            monkeypatch.chdir(project_dir)  # Windows removes no folder a process stands in


def test_a_second_idle_stop_reads_no_more_than_its_key(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = World(tmp_path, "w", project_dir, True)
    for step, action in enumerate(["line", "tool", "same", "same"]):
        act(world, action, step, monkeypatch, capsys)
    key = Path(world.project(monkeypatch).session_file(SESSION, "idle"))
    assert key.read_text().startswith("keeper-idle 1\n")  # the second Stop found nothing to write
    record = world.record(monkeypatch)
    act(world, "line", 9, monkeypatch, capsys)  # new activity: the next Stop records it
    act(world, "same", 10, monkeypatch, capsys)
    assert world.record(monkeypatch) != record


def test_a_session_missing_from_the_open_ones_is_marked_open_by_its_stop_and_then_found_idle(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session that began while another one's start made ``state/open`` (or before Keeper was set
    up) has no marker there: its first Stop marks it, so the Stops after it can be idle."""
    world = World(tmp_path, "w", project_dir, True)
    opened = Path(world.project(monkeypatch).state) / paths.OPEN_SESSIONS
    opened.mkdir(parents=True)
    for step, action in enumerate(["line", "same", "same", "same"]):
        act(world, action, step, monkeypatch, capsys)
    assert (opened / SESSION).exists()
    assert Path(world.project(monkeypatch).session_file(SESSION, "idle")).exists()
