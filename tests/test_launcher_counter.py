"""A tool use that costs almost nothing: bin/keeper counts PostToolUse without Python while Keeper's
allowance lasts, and everything it answers and records is what Keeper alone would have.

Runs the real launcher (sh, then bash for these hooks) against a real environment in a temporary
CLAUDE_PLUGIN_DATA whose site-packages is this worktree's Keeper; its ``python`` is a wrapper that
notes each start, so a test sees whether Python ran.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.plugin import bootstrap
from keeper.store import paths
from tests.allowance_vectors import VECTORS, lay_out
from tests.conftest import LONG, REPO

pytestmark = [
    pytest.mark.skipif(
        sys.platform == "win32", reason="the POSIX launcher; tests/test_windows_launcher.py has keeper.exe"
    ),
    pytest.mark.skipif(
        shutil.which("bash") is None
        or (
            sys.platform == "darwin" and not any(map(os.path.exists, ("/usr/local/bin/bash", "/opt/homebrew/bin/bash")))
        ),
        reason="the counting path runs under bash 4.1 or newer (macOS's own is 3.2: every call goes to Keeper there)",
    ),
]
LAUNCHER = REPO / "bin" / "keeper"


def plugin_data(folder: Path) -> Path:
    """A plugin data folder holding a ready environment of this worktree's Keeper, whose python
    notes every start in ``python-starts.log`` beside it."""
    env = folder / "env" / bootstrap.env_key(str(REPO))
    site = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    (site / "keeper").symlink_to(REPO / "keeper")
    for name in ("yaml", "filelock", "platformdirs"):
        module = importlib.import_module(name)
        assert module.__file__ is not None
        (site / name).symlink_to(Path(module.__file__).parent)
    real = Path(os.path.realpath(sys.executable))
    wrapper = env / "bin" / "python"
    wrapper.parent.mkdir()
    wrapper.write_bytes(  # as itself (argv[0]): sys.executable names the environment, as in a real one
        os.fsencode(
            f'#!/bin/bash\necho "${{*//$\'\\n\'/ }}" >> "{folder}/python-starts.log"\nexec -a "$0" "{real}" "$@"\n'
        )
    )
    wrapper.chmod(0o755)
    (env / "keeper-env.json").write_text("{}", encoding="utf-8")
    return folder


def python_starts(data: Path) -> int:
    log = data / "python-starts.log"
    return len(log.read_bytes().splitlines()) if log.exists() else 0


def payload(session: str, cwd: Path, event: str = "PostToolUse", **fields: Any) -> dict[str, Any]:
    """A tool hook's payload in Claude Code's order: the common fields, then the tool's."""
    head: dict[str, Any] = {"session_id": session, "transcript_path": "", "cwd": str(cwd), "permission_mode": "default"}
    if fields.pop("subagent", False):
        head.update(agent_id="a1b2c3", agent_type="general-purpose")
    head.update(effort={"level": "medium"}, hook_event_name=event, tool_name=fields.pop("tool_name", "Bash"))
    outcome = {"error": "Exit code 1"} if event == "PostToolUseFailure" else {"tool_response": {"stdout": "ok"}}
    return {**head, "tool_input": {"command": "pytest -q"}, **outcome, **fields, "tool_use_id": "toolu_01"}


def reply_of(stdout: bytes) -> dict[str, Any]:
    """A hook's reply, as two stores' replies compare: without what differs by the clock alone."""
    out = re.sub(rb"KEEPER_[0-9A-F]{12}", b"KEEPER_MARK", stdout)  # a fresh heredoc mark
    # the clock's minute, which two worlds' saves may fall either side of (a session file's name and heading)
    out = re.sub(rb"\d{4}-\d\d-\d\d(_\d{4})?|\b\d\d:\d\d\b", b"WHEN", out)
    reply = json.loads(out)
    assert isinstance(reply, dict), stdout
    return reply


class World:
    """One store, reached either through the launcher (``launcher=True``) or through Keeper alone."""

    def __init__(self, base: Path, project: Path, launcher: bool) -> None:
        self.project, self.launcher = project, launcher
        self.store = base / "store"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE_"))}
        self.env.update(KEEPER_HOME=str(self.store), CLAUDE_PROJECT_DIR=str(project))
        if launcher:
            self.data = plugin_data(base / "plugin-data")
            self.env.update(CLAUDE_PLUGIN_ROOT=str(REPO), CLAUDE_PLUGIN_DATA=str(self.data))

    def hook(self, event: str, body: dict[str, Any] | str, args: list[str] | None = None) -> dict[str, Any]:
        command = [str(LAUNCHER)] if self.launcher else [sys.executable, "-m", "keeper"]
        command += ["hook", event] if args is None else args
        stdin = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
        done = subprocess.run(command, input=stdin.encode(), env=self.env, capture_output=True, timeout=60, check=True)
        return reply_of(done.stdout)

    def save(self, session: str, summary: str) -> None:
        env = {**self.env, "CLAUDE_CODE_SESSION_ID": session}
        subprocess.run(
            [sys.executable, "-m", "keeper", "save", "--summary", summary], env=env, check=True, capture_output=True
        )

    def record(self) -> dict[str, Any]:
        """What Keeper keeps for the sessions: each tally, each session file's counts, the hook calls."""
        found: dict[str, Any] = {}
        for state in self.store.glob("projects/*/state"):
            for tally in sorted(state.glob("sessions/*.tally")):
                found[tally.name] = tally.read_bytes()
                record = tally.with_suffix(".json")  # the session file, once a Stop or a save made it
                if record.exists():
                    session_file = state.parent / "sessions" / json.loads(record.read_text())["file"]
                    counts = [line for line in session_file.read_text().splitlines() if line.startswith("- Tool uses")]
                    found[f"{tally.stem} counts"] = counts
            calls = (state / "hooks.stats").read_text().splitlines()
            found["hook calls"] = [line.split("\t")[0] for line in calls]
        return found

    def step(self, kind: str, session: str, i: int) -> dict[str, Any]:
        """One event of a session, as Claude Code sends it."""
        common = {"session_id": session, "transcript_path": "", "cwd": str(self.project)}
        if kind == "use":
            return self.hook("post-tool-use", payload(session, self.project, tool_name="Read"))
        if kind == "failure":
            return self.hook("post-tool-use-failure", payload(session, self.project, "PostToolUseFailure"))
        if kind == "subagent":
            return self.hook("post-tool-use", payload(session, self.project, subagent=True))
        if kind == "save":
            self.save(session, f"Step {i} done.")
            command = {"command": f"keeper save --summary 'Step {i} done.'"}
            return self.hook("post-tool-use", payload(session, self.project, tool_input=command))
        if kind == "stop":
            stop = {
                **common,
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": f"Reply {i}.",
            }
            return self.hook("stop", stop)
        assert kind == "prompt"
        return self.hook(
            "user-prompt-submit", {**common, "hook_event_name": "UserPromptSubmit", "prompt": f"Go on {i}"}
        )


def compact(data: object) -> str:
    """JSON as Claude Code and Codex write it: no spaces."""
    return json.dumps(data, separators=(",", ":"))


def tally(world: World, session: str) -> bytes:
    return next(world.store.glob(f"projects/*/state/sessions/{session}.tally")).read_bytes()


@pytest.fixture
def world(tmp_path: Path, project_dir: Path) -> World:
    return World(tmp_path / "launcher", project_dir, launcher=True)


@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure"])
def test_tool_uses_within_the_allowance_start_no_python(world: World, project_dir: Path, event: str) -> None:
    world.env["KEEPER_SAVE_EVERY"] = "5"
    name = "post-tool-use" if event == "PostToolUse" else "post-tool-use-failure"
    replies = [world.hook(name, payload("s-1", project_dir, event)) for _ in range(9)]
    # Python runs for the first use (no allowance yet) and the fifth (a request is due), no other
    assert python_starts(world.data) == 2
    assert [bool(reply) for reply in replies] == [False] * 4 + [True] + [False] * 4
    assert replies[4]["hookSpecificOutput"]["hookEventName"] == event
    assert "5 tool uses since the last save" in replies[4]["systemMessage"]
    assert tally(world, "s-1") == b"uuuuuruuuu"
    stats = next(world.store.glob("projects/*/state/hooks.stats")).read_text().splitlines()
    assert [line.split("\t")[0] for line in stats] == [name] * 9  # keeper status counts every call


def test_the_allowance_record_is_keepers_own(world: World, project_dir: Path) -> None:
    world.env["KEEPER_SAVE_EVERY"] = "4"
    world.hook("post-tool-use", payload("s-1", project_dir))
    lines = (world.data / "counter" / "s-1").read_text(encoding="utf-8").splitlines()
    state = next(world.store.glob("projects/*/state"))
    assert lines[0] == "keeper-allowance 1"
    assert lines[2:5] == [
        "3",
        str(state / "sessions" / "s-1.tally"),
        str(state / "hooks.stats"),
    ]  # 1 used, 2 more allowed
    assert lines[5] == str(world.data / "env" / os.listdir(world.data / "env")[0] / "bin" / "python")
    version = REPO / "keeper" / "__init__.py"  # Keeper's own, as it runs: an upgrade in place is another Keeper
    site = lines[5].rsplit("/bin/", 1)[0] + f"/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    assert lines[6:] == [
        f"-{world.store / 'config.yaml'}",
        f"-{project_dir / '.claude' / 'keeper.yaml'}",
        f"-{world.store / paths.PINS_FILE}",
        f"+{site}/keeper/__init__.py",
        f"={len(version.read_bytes())}",
        *version.read_text(encoding="utf-8").split("\n"),  # its bytes, then a line break
        "end",
    ]
    assert "KEEPER_COUNTER" not in lines[1]  # the launcher's own variables are not part of its key


def test_records_of_sessions_gone_a_week_are_removed(world: World, project_dir: Path) -> None:
    counter = world.data / "counter"
    counter.mkdir()
    for name, days in (("old-1", 8), ("recent-1", 2)):
        (counter / name).write_text("keeper-allowance 1\n")
        os.utime(counter / name, (time.time() - days * 86400, time.time() - days * 86400))
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert sorted(p.name for p in counter.iterdir()) == ["recent-1", "s-1"]


def test_a_session_begun_before_session_state_had_its_folder_counts_on_after_the_update(
    world: World, project_dir: Path
) -> None:
    """0.3.0 kept the tally in ``state/`` and its allowance names it there: once the store's
    migration moves it into ``state/sessions/``, the launcher finds no tally, falls through to
    Keeper once, and the count goes on from the moved tally."""
    world.env["KEEPER_SAVE_EVERY"] = "5"
    for _ in range(2):
        world.hook("post-tool-use", payload("s-1", project_dir))
    state = next(world.store.glob("projects/*/state"))
    (state / "sessions" / "s-1.tally").rename(state / "s-1.tally")  # where 0.3.0 kept it, and what it named
    record = world.data / "counter" / "s-1"
    record.write_text(record.read_text().replace(str(state / "sessions" / "s-1.tally"), str(state / "s-1.tally")))
    (world.store / paths.STORE_FORMAT).write_text(json.dumps({"format": 1, "applied": ["removal_records"]}))
    start = {"session_id": "s-2", "cwd": str(project_dir), "hook_event_name": "SessionStart", "source": "startup"}
    world.hook("session-start", start)  # another session's start brings the store up to date
    assert not (state / "s-1.tally").exists() and tally(world, "s-1") == b"uu"
    starts = python_starts(world.data)
    replies = [world.hook("post-tool-use", payload("s-1", project_dir)) for _ in range(4)]
    assert python_starts(world.data) == starts + 2  # the old record's tally is gone; then the due request
    assert [bool(reply) for reply in replies] == [False, False, True, False]
    assert "5 tool uses since the last save" in replies[2]["systemMessage"]
    assert tally(world, "s-1") == b"uuuuuru"


def _unusual(project: Path) -> dict[str, str]:
    """Payloads the launcher leaves to Python, each with what Keeper then appends to the tally."""
    plain = payload("s-1", project)
    save = payload("s-1", project, tool_input={"command": "cd /x && ~/bin/keeper save --summary done"})
    return {
        "a subagent": compact(payload("s-1", project, subagent=True)),
        "a subagent named only after the tool": compact({**plain, "agent_id": "a1"}),
        "keeper save": compact(save),
        "keeper save with an escaped letter": compact(save).replace("keeper save", "k\\u0065eper save"),
        "a payload of 64 KiB or more": compact(payload("s-1", project, tool_response={"stdout": "x" * 70_000})),
        "pretty-printed": json.dumps(plain, indent=1),
        "another field first": compact({"cwd": plain["cwd"], **plain}),
        "an escape in a field before the tool's": compact({**plain, "transcript_path": "C:\\t.jsonl"}),
        "no cwd": compact({k: v for k, v in plain.items() if k != "cwd"}),
        "not JSON at the end": compact(plain)[:-1],
    }


@pytest.mark.parametrize("case", list(_unusual(Path("/p"))))
def test_an_unusual_payload_goes_to_keeper_with_its_bytes(world: World, project_dir: Path, case: str) -> None:
    world.hook("post-tool-use", payload("s-1", project_dir))
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 1  # the first use wrote the allowance; the second was counted without Python
    body = _unusual(project_dir)[case]
    keeper_alone = World(project_dir.parent / "alone", project_dir, launcher=False)
    keeper_alone.hook("post-tool-use", payload("s-1", project_dir))
    keeper_alone.hook("post-tool-use", payload("s-1", project_dir))
    assert world.hook("post-tool-use", body) == keeper_alone.hook("post-tool-use", body)
    assert python_starts(world.data) == 2
    assert tally(world, "s-1") == tally(keeper_alone, "s-1")


@pytest.mark.parametrize("session", ["s 1", "s/1", "s.1", "\\u0073-1", "s" * 65, ""])
def test_a_session_id_keeper_would_change_goes_to_keeper(world: World, project_dir: Path, session: str) -> None:
    body = compact(payload("s-1", project_dir)).replace('"s-1"', compact(session).replace("\\\\", "\\"), 1)
    world.hook("post-tool-use", body)
    world.hook("post-tool-use", body)
    assert python_starts(world.data) == 2
    assert not (world.data / "counter").exists() or not list((world.data / "counter").iterdir())


def _stale(world: World, project: Path, how: str) -> None:
    """A record made stale or foreign by what it is keyed by; a record's own faults are allowance vectors."""
    record = world.data / "counter" / "s-1"
    if how == "the record is missing":
        record.unlink()
    elif how == "another KEEPER_SAVE_EVERY":
        world.env["KEEPER_SAVE_EVERY"] = "2"
    elif how == "another KEEPER_HOME":
        world.env["KEEPER_HOME"] = str(world.store) + "-2"
    elif how == "another cwd":
        world.env["CLAUDE_PROJECT_DIR"] = str(project / "sub")
        (project / "sub").mkdir()
    elif how == "a settings file appeared":
        (project / ".claude").mkdir()
        (project / ".claude" / "keeper.yaml").write_text("save_every: 2\n")
    else:
        assert how == "the environment is gone"
        os.rename(world.data / "env", world.data / "env-old")
        world.env["PATH"] = str(project / "no-python-here")  # and no Python to set it up with


STALE = [
    "the record is missing",
    "another KEEPER_SAVE_EVERY",
    "another KEEPER_HOME",
    "another cwd",
    "a settings file appeared",
    "the environment is gone",
]


@pytest.mark.parametrize("how", STALE)
def test_a_stale_or_foreign_allowance_is_none(world: World, project_dir: Path, how: str) -> None:
    world.env["KEEPER_SAVE_EVERY"] = "10"
    world.hook("post-tool-use", payload("s-1", project_dir))
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 1
    _stale(world, project_dir, how)
    world.hook("post-tool-use", payload("s-1", project_dir))
    if how == "the environment is gone":  # no Keeper to run: nothing counted, the set-up starts (as before)
        os.rename(world.data / "env-old", world.data / "env")
        assert tally(world, "s-1") == b"uu"
        return
    assert python_starts(world.data) == 2


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_count_bash_reads_each_allowance_vector_as_written_down(
    world: World, project_dir: Path, vector: dict[str, Any]
) -> None:
    """docs/counter.md's allowance file, read by bin/keeper under bash: the record is the vector's,
    keyed as the launcher asked; whether Python started is the decision."""
    world.hook("post-tool-use", payload("s-1", project_dir))
    tally = lay_out(
        vector, project_dir.parent / "vector", world.data / "counter" / "s-1", _key(world, project_dir), str
    )
    before = tally.read_bytes() if tally.is_file() else None
    reply = world.hook("post-tool-use", payload("s-1", project_dir))
    assert ("count" if python_starts(world.data) == 1 else "keeper") == vector["decision"]
    assert reply == {} or vector["decision"] == "keeper"
    if before is not None and not vector.get("links"):
        assert tally.read_bytes() == before + b"u" * vector["appended"]


def _key(world: World, project: Path) -> str:
    """The launcher's key for this world's calls, as keeper/hooks/allowance.py wrote it."""
    return (world.data / "counter" / "s-1").read_text(encoding="utf-8").splitlines()[1]


def test_an_edited_settings_file_voids_the_allowance(world: World, project_dir: Path) -> None:
    config = project_dir / ".claude" / "keeper.yaml"
    config.parent.mkdir()
    config.write_text("save_every: 10\n")
    os.utime(config, (time.time() - 60, time.time() - 60))
    world.hook("post-tool-use", payload("s-1", project_dir))
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 1
    config.write_text("save_every: 3\n")
    reply = world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 2
    assert "3 tool uses since the last save" in reply["systemMessage"]


def test_a_settings_file_edited_while_keeper_read_the_settings_voids_the_allowance(
    world: World, project_dir: Path
) -> None:
    config = project_dir / ".claude" / "keeper.yaml"
    config.parent.mkdir()
    config.write_text("save_every: 10\n")
    os.utime(config, (time.time() - 60, time.time() - 60))
    world.hook("post-tool-use", payload("s-1", project_dir))
    dated = (world.data / "counter" / "s-1").stat().st_mtime_ns  # from before Keeper read the settings
    os.utime(config, ns=(dated - 1_000_000, dated - 1_000_000))  # edited before: Keeper read the edit
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 1
    os.utime(config, ns=(dated, dated))  # edited as Keeper ran: perhaps after it read the settings
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 2


def test_a_settings_change_reaches_the_next_tool_use(world: World, project_dir: Path) -> None:
    for _ in range(3):
        world.hook("post-tool-use", payload("s-1", project_dir))  # save_every 15: 12 more allowed
    config = project_dir / ".claude" / "keeper.yaml"
    config.parent.mkdir()
    config.write_text("save_every: 4\n")
    reply = world.hook("post-tool-use", payload("s-1", project_dir))
    assert "4 tool uses since the last save" in reply["systemMessage"]


@pytest.mark.parametrize("args", [[], ["hook"]])
def test_codex_without_arguments_is_counted_by_the_payloads_event(
    world: World, project_dir: Path, args: list[str]
) -> None:
    world.env["KEEPER_SAVE_EVERY"] = "3"
    replies = [world.hook("", payload("s-1", project_dir), args=args) for _ in range(4)]
    assert [bool(reply) for reply in replies] == [False, False, True, False]
    assert python_starts(world.data) == 2
    assert tally(world, "s-1") == b"uuuru"


def test_64_hooks_at_once_on_one_session_lose_no_tool_use(world: World, project_dir: Path) -> None:
    world.env["KEEPER_SAVE_EVERY"] = "10"
    body = json.dumps(payload("s-1", project_dir), separators=(",", ":")).encode()
    world.hook("post-tool-use", payload("s-1", project_dir))
    running = [
        subprocess.Popen(
            [str(LAUNCHER), "hook", "post-tool-use"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=world.env
        )
        for _ in range(64)
    ]
    replies = [json.loads(process.communicate(body, timeout=120)[0]) for process in running]
    log = tally(world, "s-1")
    assert log.count(b"u") == 65
    assert log.count(b"r") == sum(1 for reply in replies if reply) >= 1  # each request made once, and answered
    assert all(part.count(b"u") >= 10 for part in log.split(b"r")[:-1])  # never twice for the same 10 uses
    # the allowance that survived the storm is right: the next request comes after exactly 10 more uses
    more = [
        world.hook("post-tool-use", payload("s-1", project_dir))
        for _ in range(10 - log[log.rindex(b"r") + 1 :].count(b"u"))
    ]
    assert [bool(reply) for reply in more] == [False] * (len(more) - 1) + [True]


@pytest.mark.parametrize("launcher", [True, False], ids=["through the launcher", "keeper alone"])
def test_hooks_finishing_together_ask_once_for_the_same_uses(tmp_path: Path, project_dir: Path, launcher: bool) -> None:
    """Keeper decides on the whole tally under its lock: two hooks that both see a request due cannot both ask."""
    hooks = World(tmp_path / "w", project_dir, launcher=launcher)
    hooks.env["KEEPER_SAVE_EVERY"] = "3"
    command = [str(LAUNCHER)] if launcher else [sys.executable, "-m", "keeper"]
    body = compact(payload("s-1", project_dir)).encode()
    running = [
        subprocess.Popen(
            [*command, "hook", "post-tool-use"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=hooks.env
        )
        for _ in range(24)
    ]
    replies = [json.loads(process.communicate(body, timeout=120)[0]) for process in running]
    log = tally(hooks, "s-1")
    assert log.count(b"u") == 24 and log.count(b"r") == sum(1 for reply in replies if reply)
    assert all(part.count(b"u") >= 3 for part in log.split(b"r")[:-1])


SESSIONS = ("alpha-1", "beta_2")
STEP = st.one_of(
    st.tuples(
        st.sampled_from(["use", "use", "use", "failure", "subagent", "save", "stop", "prompt"]),
        st.sampled_from(SESSIONS),
    ),
    st.tuples(st.just("save_every"), st.sampled_from(["1", "2", "3", "5"])),
)


@settings(
    max_examples=150 if LONG else 5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=1, max_size=40 if LONG else 20))
def test_through_the_launcher_replies_and_records_are_keepers_alone(
    tmp_path: Path, project_dir: Path, steps: list[tuple[str, str]]
) -> None:
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    worlds = (World(base / "launcher", project_dir, launcher=True), World(base / "alone", project_dir, launcher=False))
    config = project_dir / ".claude" / "keeper.yaml"
    config.parent.mkdir(exist_ok=True)
    stamp = [0]

    def settings_file(save_every: str) -> None:  # a new mtime each time, as an editor leaves it
        config.write_text(f"save_every: {save_every}\nfinal_save_min: 2\nauto_recall: false\n", encoding="utf-8")
        stamp[0] = max(time.time_ns(), stamp[0] + 10_000_000)
        os.utime(config, ns=(stamp[0], stamp[0]))

    settings_file("3")
    for i, (kind, arg) in enumerate(steps):
        if kind == "save_every":
            settings_file(arg)
            continue
        through_launcher, alone = (world.step(kind, arg, i) for world in worlds)
        assert through_launcher == alone, (i, kind, arg)
    assert worlds[0].record() == worlds[1].record()


@pytest.mark.parametrize("how", ["mv", "cp -p", "rsync -a"])
def test_a_settings_file_replaced_with_an_older_mtime_voids_the_allowance(
    world: World, project_dir: Path, how: str
) -> None:
    """``mv``, ``cp -p`` and ``rsync -a`` keep a file's old mtime: the launcher compares the content too."""
    config = project_dir / ".claude" / "keeper.yaml"
    config.parent.mkdir()
    config.write_text("save_every: 10\n")
    old = time.time() - 3600
    os.utime(config, (old, old))
    world.hook("post-tool-use", payload("s-1", project_dir))
    world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 1
    other = project_dir / "other.yaml"
    other.write_text("save_every: 2\n")  # the same size
    os.utime(other, (old, old))
    if how == "cp -p":
        shutil.copy2(other, config)  # over the file: the same inode, its old mtime
    else:
        os.replace(other, config)  # rsync -a writes beside it, then renames, as mv does
    reply = world.hook("post-tool-use", payload("s-1", project_dir))
    assert python_starts(world.data) == 2
    assert "3 tool uses since the last save" in reply["systemMessage"]


def test_a_store_under_a_folder_whose_name_is_not_utf8_is_counted_by_the_launcher(
    tmp_path: Path, project_dir: Path
) -> None:
    base = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    world = World(base, project_dir, launcher=True)
    world.env["KEEPER_SAVE_EVERY"] = "4"
    world.env["HOME"] = os.fsdecode(bytes(tmp_path) + b"/home-\xff")
    replies = [world.hook("post-tool-use", payload("s-1", project_dir)) for _ in range(5)]
    assert python_starts(world.data) == 2  # the first use and the fourth (a request is due)
    assert [bool(reply) for reply in replies] == [False, False, False, True, False]
    assert not [p for p in (world.data / "counter").iterdir() if p.name.endswith(".tmp")]


def two_repos(tmp_path: Path) -> tuple[Path, Path]:
    """Two repositories, ``first`` and ``other``: two projects the launcher must never confuse."""
    first, other = tmp_path / "first", tmp_path / "other"
    for folder in (first, other):
        folder.mkdir()
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return first, other


def two_projects(tmp_path: Path) -> tuple[Path, Path, World]:
    """Two repositories and a launcher's world in the first, with no CLAUDE_PROJECT_DIR: the payload's
    cwd alone (or, failing that, the hook's own folder) names the project."""
    first, other = two_repos(tmp_path)
    world = World(tmp_path / "launcher", first, launcher=True)
    del world.env["CLAUDE_PROJECT_DIR"]
    return first, other, world


@pytest.mark.parametrize("cwd", ["", "."])
def test_a_tool_use_whose_project_the_payload_does_not_name_goes_to_keeper(tmp_path: Path, cwd: str) -> None:
    """An empty or relative cwd (and no CLAUDE_PROJECT_DIR) leaves the project to the hook's own working
    directory, which the key does not hold: an allowance granted in one project must not count a use
    made in another into the first one's tally."""
    first, other, world = two_projects(tmp_path)
    body = json.dumps(payload("s-1", first), separators=(",", ":")).replace(f'"cwd":"{first}"', f'"cwd":"{cwd}"')
    command = [str(LAUNCHER), "hook", "post-tool-use"]
    for folder in (first, first, other):
        subprocess.run(command, input=body.encode(), env=world.env, cwd=folder, capture_output=True, check=True)
    assert python_starts(world.data) == 3  # Keeper counts each, in the project it starts from
    assert sorted(path.read_bytes() for path in world.store.glob("projects/*/state/sessions/s-1.tally")) == [
        b"u",
        b"uu",
    ]


def test_a_tool_use_in_a_folder_reached_through_a_link_goes_to_keeper(tmp_path: Path) -> None:
    """Keeper finds the project from the folder's real path: a link retargeted under a running session
    moves it to another project while the launcher's key (the path as given) stays the same."""
    (first, other), link = two_repos(tmp_path), tmp_path / "current"
    link.symlink_to(first)
    world = World(tmp_path / "launcher", link, launcher=True)
    world.hook("post-tool-use", payload("s-1", link))
    world.hook("post-tool-use", payload("s-1", link))
    link.unlink()
    link.symlink_to(other)
    world.hook("post-tool-use", payload("s-1", link))
    assert sorted(path.read_bytes() for path in world.store.glob("projects/*/state/sessions/s-1.tally")) == [
        b"u",
        b"uu",
    ]
