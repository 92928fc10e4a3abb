"""A Stop with nothing new costs no Python: bin/keeper answers it (launcher/stop.bash) when Keeper's
record vouches for it, and exactly when Keeper itself would find nothing to record and nothing to ask.

Runs the real launcher against a real environment (tests/test_launcher_counter.py's ``World``, whose
python notes each start), beside Keeper alone on a store of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.test_launcher_counter import LAUNCHER, LONG, World, payload, python_starts, two_projects, two_repos
from tests.test_launcher_counter import pytestmark as counter_marks

pytestmark = counter_marks
SESSION = "s-1"
REPLIES = [
    "All tests pass.",
    'Fixed "the" bug\nin two places.',
    "Caf\u00e9 \u2028 done \U0001f600",
    "Tab\there \x01",
    "",
]
# Keeper's own answer for whether this Stop has nothing to record and nothing to ask (keeper.hooks.entry.stop)
DECIDE = """
import json, os, sys
from keeper.hooks import idle
from keeper.plugin import agents
from keeper.store import counters
from keeper.store.resolve import resolve, start_folder
p = json.loads(sys.stdin.read())
at = resolve(start_folder([os.environ.get("CLAUDE_PROJECT_DIR", ""), p["cwd"]], strict=False), p["session_id"], strict=False)
seen = counters.read(counters.tally_path(at.project, at.session))
key = idle.stop_key(at.project, at.session, seen, p["last_assistant_message"], p["transcript_path"])
quiet = key is not None and idle.unchanged(at.project, at.session, key) and not p.get("stop_hook_active")
print(json.dumps(quiet and agents.can_hold_stop() and not counters.final_ask_due(seen, at.cfg.final_save_min, at.cfg.save_every)))
"""


def spelled(body: dict[str, Any]) -> str:
    """A payload as Claude Code writes it (JSON.stringify: compact, letters as they are)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def stop_payload(transcript: Path, cwd: Path, reply: str, active: bool = False, **more: Any) -> str:
    head = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(cwd), "permission_mode": "default"}
    return spelled(
        {**head, "hook_event_name": "Stop", "stop_hook_active": active, "last_assistant_message": reply, **more}
    )


def aged(path: Path, seconds: float = 60) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


class Stops:
    """One project's session driven through the launcher and through Keeper alone, one transcript."""

    def __init__(self, base: Path, project: Path) -> None:
        self.project, self.transcript = project, base / "transcript.jsonl"
        self.launcher = World(base / "launcher", project, launcher=True)
        self.alone = World(base / "alone", project, launcher=False)
        self.reply, self.step_no = REPLIES[0], 0
        self.rekeyed = False  # settings or environment changed since the last Stop
        self.settled: str | None = None  # the settings file's text at the last Stop
        self.grow()
        aged(self.transcript)

    def grow(self) -> None:
        self.step_no += 1
        line = {"type": "user", "timestamp": f"2026-11-22T10:{self.step_no % 60:02d}:00Z", "message": {"content": "go"}}
        with self.transcript.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def state(self, world: World) -> Path:
        return next(world.store.glob("projects/*/state"))

    def decide(self, body: str) -> bool:
        done = subprocess.run(
            [sys.executable, "-c", DECIDE], input=body.encode(), env=self.launcher.env, capture_output=True, check=True
        )
        return bool(json.loads(done.stdout))

    def stop(self, active: bool = False, check: bool = True) -> dict[str, Any]:
        """The same Stop through both; asserts the launcher answered alone exactly when Keeper would
        have found nothing to do, and that both replies agree."""
        body = stop_payload(self.transcript, self.project, self.reply, active)
        quiet = self.decide(body) if check else None
        starts = python_starts(self.launcher.data)
        through = self.launcher.hook("stop", body)
        answered_alone = python_starts(self.launcher.data) == starts
        alone = self.alone.hook("stop", body)
        assert through == alone
        if check:  # after new settings Keeper is called once: the launcher cannot tell what they change
            expected = quiet and not self.rekeyed
            assert answered_alone == expected, f"launcher answered: {answered_alone}, Keeper finds nothing new: {quiet}"
        self.rekeyed = False
        config = self.project / ".claude" / "keeper.yaml"
        self.settled = config.read_text() if config.exists() else None
        return through


@pytest.fixture
def stops(tmp_path: Path, project_dir: Path) -> Stops:
    return Stops(tmp_path, project_dir)


def test_a_stop_repeated_with_nothing_new_starts_no_python(stops: Stops) -> None:
    for _ in range(5):
        assert stops.stop() == {}
        time.sleep(0.1)  # past the record's clock slack: what Keeper last wrote is older than its record
    # Python records the first, finds nothing new in the second (and vouches), the launcher answers the rest
    assert python_starts(stops.launcher.data) == 2
    stats = (stops.state(stops.launcher) / "hooks.stats").read_text().splitlines()
    assert [line.split("\t")[0] for line in stats] == ["stop"] * 5  # keeper status counts every call
    assert stops.launcher.record() == stops.alone.record()


def test_the_stop_record_is_keepers_own(stops: Stops) -> None:
    stops.reply = REPLIES[1]
    stops.stop(check=False)
    stops.stop(check=False)
    record = stops.launcher.data / "counter" / f"{SESSION}.stop"
    lines = record.read_bytes().split(b"\n")
    state = stops.state(stops.launcher)
    assert lines[0] == b"keeper-stop 1"
    assert lines[2:7] == [
        os.fsencode(stops.transcript),
        b'Fixed \\"the\\" bug\\nin two places.',  # as the payload spells it
        os.fsencode(state / "sessions" / f"{SESSION}.tally"),
        b"0",
        os.fsencode(state / "hooks.stats"),
    ]
    assert lines[8:11] == [b"-" + os.fsencode(path) for path in settings_files(stops)]
    version = (REPO / "keeper" / "__init__.py").read_bytes()  # Keeper's own: an upgrade in place is another Keeper
    assert lines[11].endswith(b"/site-packages/keeper/__init__.py") and lines[12] == b"=%d" % len(version)
    at = 13 + len(version.split(b"\n"))  # its bytes, then a line break
    assert lines[13:at] == version.split(b"\n")
    assert lines[at] == b"+" + os.fsencode(stops.transcript)
    assert lines[at + 1].startswith(b"@" + os.fsencode(record) + b".")
    assert lines[-2:] == [b"end", b""]
    twins = sorted(p for p in record.parent.iterdir() if p.name.startswith(f"{SESSION}.stop."))
    assert twins and all(line[1:] in {os.fsencode(p) for p in twins} for line in lines if line.startswith(b"@"))
    assert os.stat(twins[0]).st_mtime_ns == os.stat(stops.transcript).st_mtime_ns
    stops.reply = REPLIES[0]
    stops.stop(check=False)
    stops.stop(check=False)  # the next record's twins replace the last one's
    assert not [p for p in twins if p.exists()]


def settings_files(stops: Stops) -> list[Path]:
    return [
        stops.launcher.store / "config.yaml",
        stops.project / ".claude" / "keeper.yaml",
        stops.launcher.store / "pins.json",
    ]


def _settings(stops: Stops, text: str, older: bool = False) -> None:
    project = stops.project
    config = project / ".claude" / "keeper.yaml"
    config.parent.mkdir(exist_ok=True)
    # the launcher holds the bytes Keeper read at the last Stop: those put back with an older mtime are its settings
    stops.rekeyed = not older or text != stops.settled
    if older:  # replaced by a file of the same size with an older mtime, as mv and rsync -a leave it
        other = project / "other.yaml"
        other.write_text(text)
        aged(other, 3600)
        os.replace(other, config)
    else:
        config.write_text(text)


def _replaced_by_an_older(path: Path, how: str) -> None:
    other = path.parent / f"{path.name}.older"
    other.write_bytes(path.read_bytes())  # the same bytes: only the file and its mtime are others
    aged(other, 3600)
    if how == "cp -p":
        shutil.copy2(other, path)  # over the file: the same inode, an older mtime
        other.unlink()
    else:
        os.replace(other, path)


def _in_both(stops: Stops, act: Callable[[World], object]) -> None:
    for world in (stops.launcher, stops.alone):
        act(world)


def _session_file(stops: Stops, world: World) -> Path:
    """The session's record (``<store>/none`` before there is one)."""
    return next(iter(world.store.glob(f"projects/*/state/sessions/{SESSION}.json")), world.store / "none")


def _hook(stops: Stops, event: str, name: str, **fields: str) -> Callable[[World], object]:
    body = {"session_id": SESSION, "cwd": str(stops.project), "transcript_path": str(stops.transcript)}
    return lambda world: world.hook(event, {**body, "hook_event_name": name, **fields})


def _another_save_every(stops: Stops) -> None:
    stops.rekeyed = True
    _in_both(stops, lambda world: world.env.update(KEEPER_SAVE_EVERY="3"))


CHANGE: dict[str, Callable[[Stops], object]] = {
    "another reply": lambda stops: setattr(stops, "reply", REPLIES[2]),
    "the transcript grew": Stops.grow,
    "the session file was touched": lambda stops: _in_both(stops, lambda w: os.utime(_session_file(stops, w))),
    "a tool use": lambda stops: _in_both(
        stops, lambda world: world.hook("post-tool-use", payload(SESSION, stops.project, tool_name="Read"))
    ),
    "a prompt": lambda stops: _in_both(stops, _hook(stops, "user-prompt-submit", "UserPromptSubmit", prompt="go")),
    "memory saved": lambda stops: _in_both(stops, lambda world: world.save(SESSION, "Saved the work.")),
    "settings changed": lambda stops: _settings(stops, "final_save_min: 1\n"),
    "settings replaced by an older file": lambda stops: _settings(stops, "final_save_min: 9\n", older=True),
    "the transcript replaced by an older one": lambda stops: _replaced_by_an_older(stops.transcript, "mv"),
    "the transcript replaced by an older one, cp -p": lambda stops: _replaced_by_an_older(stops.transcript, "cp -p"),
    "the session's record replaced by an older one": lambda stops: _in_both(
        stops, lambda world: _replaced_by_an_older(_session_file(stops, world), "cp -p")
    ),
    "the session ended": lambda stops: _in_both(stops, _hook(stops, "session-end", "SessionEnd", reason="other")),
    "another KEEPER_SAVE_EVERY": _another_save_every,
}


def _change(stops: Stops, how: str) -> None:
    """One thing that must reach Keeper before the next Stop is answered."""
    CHANGE[how](stops)


CHANGES = list(CHANGE)


@pytest.mark.parametrize("how", CHANGES)
def test_what_a_stop_rests_on_changed_reaches_keeper(stops: Stops, how: str) -> None:
    _settings(stops, "final_save_min: 2\n")
    aged(stops.project / ".claude" / "keeper.yaml")
    for _ in range(3):
        stops.stop()
        time.sleep(0.1)
    assert python_starts(stops.launcher.data) == 2
    _change(stops, how)
    time.sleep(0.1)
    starts = python_starts(stops.launcher.data)
    stops.stop()  # Keeper is called, and finds something to record or to ask
    assert python_starts(stops.launcher.data) > starts
    assert stops.launcher.record() == stops.alone.record()


def _unusual(stops: Stops) -> dict[str, str]:
    """The vouched-for Stop in a shape the launcher leaves to Keeper, which finds nothing new in it."""
    plain = json.loads(stop_payload(stops.transcript, stops.project, stops.reply))
    body = stop_payload(stops.transcript, stops.project, stops.reply)
    return {
        "letters escaped": json.dumps(plain, separators=(",", ":")),
        "the reply spelled otherwise": body.replace("\\n", "\\u000a"),
        "pretty-printed": json.dumps(plain, indent=1, ensure_ascii=False),
        "another field first": spelled({"cwd": plain["cwd"], **plain}),
        "the session id twice": body[:-1] + f',"session_id":"{SESSION}"}}',
        "the reply twice": body[:-1] + ',"last_assistant_message":"other"}',
        "Gemini's reply field": body[:-1] + ',"prompt_response":"other"}',
        "a list after the reply": body[:-1] + ',"background_tasks":[{"id":"b1"}]}',
        "a continuation": body.replace('"stop_hook_active":false', '"stop_hook_active":true'),
        "not JSON at the end": body[:-1],
    }


UNUSUAL = ["letters escaped", "the reply spelled otherwise", "pretty-printed", "another field first"]
UNUSUAL += ["the session id twice", "the reply twice", "Gemini's reply field"]
UNUSUAL += ["a list after the reply", "a continuation", "not JSON at the end"]


@pytest.mark.parametrize("case", UNUSUAL)
def test_an_unusual_stop_goes_to_keeper(stops: Stops, case: str) -> None:
    stops.reply = 'Fixed "the" caf\u00e9\nbug.'
    for _ in range(3):
        stops.stop()
        time.sleep(0.1)
    starts = python_starts(stops.launcher.data)
    body = _unusual(stops)[case]
    assert stops.launcher.hook("stop", body) == stops.alone.hook("stop", body)
    assert python_starts(stops.launcher.data) == starts + 1
    assert stops.launcher.record() == stops.alone.record()


STEPS = st.sampled_from(
    ["same", "same", "same", "reply", "active", "grow", "touch", "use", "prompt", "save", "settings", "older"]
)


@settings(
    max_examples=60 if LONG else 4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(st.tuples(STEPS, st.integers(0, 4)), min_size=1, max_size=30 if LONG else 12))
@example(steps=[("reply", 4), ("active", 0)])  # a continuation after an empty reply: the same key, vouched
def test_the_launcher_answers_a_stop_exactly_when_keeper_finds_nothing_new(
    tmp_path: Path, project_dir: Path, steps: list[tuple[str, int]]
) -> None:
    """Random sequences of what happens in a session; before each Stop, Keeper's own decision: the
    launcher answers alone exactly when it is "nothing to record, nothing to ask", and replies and
    records are Keeper's alone."""
    stops = Stops(Path(tempfile.mkdtemp(dir=tmp_path)), project_dir)
    _settings(stops, "final_save_min: 2\nsave_every: 4\n")
    aged(project_dir / ".claude" / "keeper.yaml")
    for i, (kind, pick) in enumerate(steps):
        if kind in ("same", "reply", "active"):
            stops.reply = REPLIES[pick] if kind == "reply" else stops.reply
            stops.stop(active=kind == "active")
        elif kind == "grow":
            stops.grow()
        elif kind == "touch":
            if all(_session_file(stops, world).exists() for world in (stops.launcher, stops.alone)):
                _change(stops, "the session file was touched")
        elif kind in ("use", "prompt"):
            _change(stops, "a tool use" if kind == "use" else "a prompt")
        elif kind == "save":
            _change(stops, "memory saved")
        elif kind == "settings":
            _settings(stops, f"final_save_min: {pick + 1}\nsave_every: 4\n")
        elif pick % 2 == 0:
            _change(stops, "the transcript replaced by an older one")
        else:  # bytes no record held before: older bytes a record holds would rightly still hold
            _settings(stops, f"final_save_min: 9\n# {i}\n", older=True)
        time.sleep(0.1)  # past the record's clock slack (what Keeper last wrote is older than its record)
    stops.stop()
    assert stops.launcher.record() == stops.alone.record()


def test_plain_fields_after_the_reply_are_read_as_claude_code_writes_them(stops: Stops) -> None:
    for _ in range(3):
        stops.stop()
        time.sleep(0.1)
    starts = python_starts(stops.launcher.data)
    body = stop_payload(stops.transcript, stops.project, stops.reply, background_tasks=[], session_crons={})
    assert stops.launcher.hook("stop", body) == {}
    assert python_starts(stops.launcher.data) == starts


def test_records_of_sessions_gone_a_week_are_removed_with_their_twins(stops: Stops) -> None:
    counter = stops.launcher.data / "counter"
    counter.mkdir()
    week = time.time() - 8 * 86400
    for name in ("gone-1.stop", "gone-1.stop.ab12cd34.0", "live-1.stop", "live-1.stop.ef56ab78.0"):
        (counter / name).write_text("keeper-stop 1\n")
    for name in ("gone-1.stop", "live-1.stop.ef56ab78.0"):  # a twin carries the mtime of the file it stands for
        os.utime(counter / name, (week, week))
    for _ in range(2):
        stops.stop()  # the second finds nothing new: the session's first Stop record, and a sweep
        time.sleep(0.1)
    assert (counter / f"{SESSION}.stop").exists()
    left = {p.name for p in counter.iterdir() if not p.name.startswith(f"{SESSION}.stop")}
    assert left == {"live-1.stop", "live-1.stop.ef56ab78.0"}


@pytest.mark.parametrize("cwd", ["", "."])
def test_a_stop_whose_project_the_payload_does_not_name_goes_to_keeper(tmp_path: Path, cwd: str) -> None:
    """A payload whose cwd is empty or relative (and no CLAUDE_PROJECT_DIR) leaves the project to the
    hook's own working directory, which the launcher's key does not hold: a record vouched for in one
    project must not answer for the same payload run in another (its session was never recorded there)."""
    first, other, world = two_projects(tmp_path)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "go"}}) + "\n", encoding="utf-8")
    aged(transcript)
    body = stop_payload(transcript, tmp_path, REPLIES[0]).replace(f'"cwd":"{tmp_path}"', f'"cwd":"{cwd}"')

    def stop(folder: Path) -> bool:
        starts = python_starts(world.data)
        command = [str(LAUNCHER), "hook", "stop"]
        done = subprocess.run(command, input=body.encode(), env=world.env, cwd=folder, capture_output=True, check=True)
        assert json.loads(done.stdout) == {}
        return python_starts(world.data) == starts

    for _ in range(3):
        stop(first)
        time.sleep(0.1)  # past the record's clock slack
    assert not stop(other)  # Keeper records the session in the other project
    assert len(list(world.store.glob("projects/*/sessions/*.md"))) == 2


def test_a_file_dated_to_the_second_is_not_vouched_for(stops: Stops) -> None:
    """A file system that keeps whole seconds (FAT, HFS+, some network shares) dates an append made just
    after Keeper read the file as it dated the file then, and as older than the record when the record
    lies on a finer one: the launcher could not see it. Keeper vouches for no such file."""
    second = int(time.time()) - 60
    os.utime(stops.transcript, (second, second))
    for _ in range(3):
        stops.stop(check=False)  # Keeper finds nothing new, and the launcher cannot tell: Keeper answers
        time.sleep(0.1)  # past the record's clock slack
    stops.grow()  # in the same second, as such a file system dates it
    os.utime(stops.transcript, (second, second))
    stops.stop()


def test_a_stop_in_a_folder_reached_through_a_link_goes_to_keeper(tmp_path: Path) -> None:
    """Keeper finds the project from the folder's real path: a link retargeted under a running session
    moves the session to another project while the launcher's key (the path as given) stays the same."""
    (first, other), link = two_repos(tmp_path), tmp_path / "current"
    link.symlink_to(first)
    world = World(tmp_path / "launcher", link, launcher=True)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "go"}}) + "\n", encoding="utf-8")
    aged(transcript)
    body = stop_payload(transcript, link, REPLIES[0])
    for _ in range(3):
        world.hook("stop", body)
        time.sleep(0.1)  # past the record's clock slack
    link.unlink()
    link.symlink_to(other)
    starts = python_starts(world.data)
    world.hook("stop", body)
    assert python_starts(world.data) == starts + 1  # Keeper records the session in the other project
    assert len(list(world.store.glob("projects/*/sessions/*.md"))) == 2
