"""SessionStart's kept answer (``keeper.hooks.startcache``) is the answer worked out afresh, whatever
changed between two starts: saves, hand edits that keep a file's size and time, files of the code
changed, touched, deleted, the clock moved either way, settings, team notes, the tally, Stops."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from keeper import jsonio
from keeper.capture import saving
from keeper.hooks import clock, startcache
from keeper.memory.document import SaveInput
from keeper.store import config, fsutil, identity, loads, markers, paths, provenance, stale, verdicts
from tests.helpers import run_hook, shift

FILES = 4  # src/mod_<n>.py, each setting X and defining parse_<n>
HOUR = 3600


def project_of(root: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(root)))


def same_size_edit(path: Path, after: str, n: int) -> None:
    """The digit after the first ``after`` changed in place, the file's time put back as it was: an
    edit neither its size nor its modification time tells, only the change time. Windows keeps no
    change time (its ``st_ctime`` is the file's creation): there the time is left as the edit made it."""
    if not path.exists():
        return
    found = path.stat()
    text = path.read_text(encoding="utf-8")
    at = text.find(after) + len(after)
    if at >= len(after) and text[at : at + 1].isdigit():
        path.write_text(text[:at] + str((int(text[at]) + 1 + n % 8) % 10) + text[at + 1 :], encoding="utf-8")
        if os.name != "nt":
            os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns))


class World:
    """A project with code its memory names, and the store under ``folder``."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root, self.store = folder / "work" / "api", folder / "store"
        (self.root / ".git").mkdir(parents=True)
        (self.root / "src").mkdir()
        for n in range(FILES):
            (self.root / "src" / f"mod_{n}.py").write_text(f"X = {n}\n\n\ndef parse_{n}():\n    pass\n")
        monkeypatch.setenv("KEEPER_HOME", str(self.store))
        monkeypatch.chdir(self.root)
        self.project = project_of(self.root)
        self.steps = 0

    def save(self, n: int, session: str) -> None:
        decision = f"Use `parse_{n % FILES}` in src/mod_{n % FILES}.py, X = {n % FILES} (step {self.steps})"
        saved = SaveInput(summary=f"Step {self.steps}", decisions=[decision], issues=[f"Issue {n}"])
        saving.save(self.project, config.load(str(self.root)), saved, session)

    def act(self, kind: str, n: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """One change between two starts."""
        self.steps += 1
        session = f"s{n % 3}"
        code = self.root / "src" / f"mod_{n % FILES}.py"
        memory = Path(self.project.memory)
        if kind == "save":
            self.save(n, session)
        elif kind == "hand" and memory.exists():  # a digit of an item changed, size and time kept
            same_size_edit(memory, "- Issue ", n)
        elif kind == "code":  # a constant's value changed, size and time kept
            same_size_edit(code, "X = ", n)
        elif kind == "rename" and code.exists():  # a named identifier gone from its file (or back)
            text = code.read_text(encoding="utf-8")
            code.write_text(
                text.replace("def parse_", "def parsed_")
                if "def parse_" in text
                else text.replace("def parsed_", "def parse_")
            )
        elif kind == "touch" and code.exists():  # the same bytes, a new time
            os.utime(code)
        elif kind == "delete":
            if code.exists():
                code.unlink()
            else:
                code.write_text(f"X = {n % FILES}\n\n\ndef parse_{n % FILES}():\n    pass\n")
        elif kind == "clock":  # forward a few hours or days, or back an hour
            shift([self.store, self.root.parent], (-1, 2, 5, 26, 50)[n % 5] * HOUR)
        elif kind == "wait":  # time passes: every file older than a clock's tick
            shift([self.store, self.root.parent], HOUR)
            time.sleep(fsutil.CHANGE_TICK_NS / 1e9 + 0.02)
        elif kind == "settings":
            (self.root / ".claude").mkdir(exist_ok=True)
            chars, team = (800, 2000, 6000)[n % 3], ("true", "false")[n % 2]
            (self.root / ".claude" / "keeper.yaml").write_text(f"context_chars: {chars}\nteam: {team}\n")
        elif kind == "team":
            team = self.root / ".claude" / "keeper" / "team.md"
            team.parent.mkdir(parents=True, exist_ok=True)
            team.write_text(f"# Team\n\n## Core Decisions\n\n- Review every change {n}\n")
        elif kind == "tally" and memory.exists():
            keys = [k for _, k, _, _ in provenance.listed(memory.read_text(encoding="utf-8"))]
            loads.note(self.project, shown=keys, used=keys[: n % 3])
        elif kind == "stop":
            run_hook(
                "stop",
                {"session_id": session, "cwd": str(self.root), "last_assistant_message": f"Did {n}."},
                monkeypatch,
                capsys,
            )

    def start(
        self, session: str, source: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> dict:
        payload = {"session_id": session, "cwd": str(self.root), "source": source}
        return run_hook("session-start", payload, monkeypatch, capsys)

    def afresh(
        self, session: str, source: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> dict[str, Any]:
        """A start with nothing kept: neither the answer nor the stale check's verdicts."""
        for kept in (startcache.cache_file(self.project), os.path.join(self.project.state, paths.STALE_CACHE)):
            if os.path.exists(kept):
                os.unlink(kept)
        return self.start(session, source, monkeypatch, capsys)


class Calls:
    """Counts the context builder's full runs and the stale check's runs alone."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from keeper.hooks import context

        self.built = self.judged = 0
        built, judged = context.session_start, startcache.verdicts_again

        def counted_build(*args: Any) -> tuple[str, str]:
            self.built += 1
            return built(*args)

        def counted_judge(*args: Any) -> list[Any]:
            self.judged += 1
            return judged(*args)

        monkeypatch.setattr(context, "session_start", counted_build)
        monkeypatch.setattr(startcache, "verdicts_again", counted_judge)


KINDS = ("save", "hand", "code", "rename", "touch", "delete", "clock", "wait", "settings", "team", "tally", "stop")
STEP = st.tuples(
    st.sampled_from(KINDS),
    st.integers(0, 11),
    st.sampled_from(("s0", "s1", "s3")),
    st.sampled_from(("startup", "resume", "clear", "compact")),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(steps=st.lists(STEP, min_size=1, max_size=16))
def test_a_kept_answer_is_the_answer_worked_out_afresh(
    steps: list[tuple[str, int, str, str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        world, calls = World(Path(folder), monkeypatch), Calls(monkeypatch)
        try:
            world.save(0, "s0")
            for kind, n, session, source in [("wait", 0, "s0", "startup"), *steps]:
                world.act(kind, n, monkeypatch, capsys)
                built, judged = calls.built, calls.judged
                answer = world.start(session, source, monkeypatch, capsys)
                event(
                    "worked out" if calls.built > built else "judged again, kept" if calls.judged > judged else "kept"
                )
                afresh = world.afresh(session, source, monkeypatch, capsys)
                assert answer == afresh, (kind, n, session, source)
        finally:
            monkeypatch.chdir(Path(folder).parent)  # Windows removes no folder a process stands in


def kept_world(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> World:
    """A world whose last start kept its answer."""
    world = World(folder, monkeypatch)
    world.start("s0", "startup", monkeypatch, capsys)
    world.save(1, "s0")
    run_hook("session-end", {"session_id": "s0", "cwd": str(world.root), "reason": "other"}, monkeypatch, capsys)
    world.act("wait", 0, monkeypatch, capsys)
    world.start("s1", "startup", monkeypatch, capsys)
    assert os.path.exists(startcache.cache_file(world.project))
    return world


def test_an_answer_is_kept_for_the_next_session_and_given_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    kept = Path(startcache.cache_file(world.project))
    before = kept.stat().st_mtime_ns
    first = world.start("s1", "clear", monkeypatch, capsys)
    again = world.start("s2", "startup", monkeypatch, capsys)  # a new session, while s1 works on
    assert kept.stat().st_mtime_ns == before and again == first
    assert "parse_1" in again["hookSpecificOutput"]["additionalContext"]
    assert Path(markers.shown_file(world.project, "s2")).read_text(encoding="utf-8")  # noted as shown


def _kept_then(world: World, change: Callable[[dict[str, Any]], None]) -> None:
    """The kept answer's head (its JSON first line) changed by ``change``, its file lines as they were."""
    kept = Path(startcache.cache_file(world.project))
    head, files = kept.read_text(encoding="utf-8").split("\n", 1)
    data = json.loads(head)
    change(data)
    kept.write_text(json.dumps(data) + "\n" + files, encoding="utf-8")


def test_an_answer_that_says_how_long_ago_memory_was_saved_is_not_kept_past_that(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The clock moves on with no file changing: what the answer says of it is in its key."""
    world = kept_world(tmp_path / "w", monkeypatch, capsys)

    def then(data: dict[str, Any]) -> None:  # as it was an hour ago
        assert "saved 1 h ago" in data["text"]
        data["between"] = [at - HOUR * 10**9 for at in data["between"]]
        data["text"] = "an answer kept an hour ago"

    _kept_then(world, then)
    answer = world.start("s2", "startup", monkeypatch, capsys)
    assert "saved 1 h ago" in answer["hookSpecificOutput"]["additionalContext"]


def test_a_clock_that_went_back_keeps_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    _kept_then(
        world, lambda data: data.update(at=time.time_ns() + HOUR * 10**9, text="an answer kept an hour from now")
    )
    answer = world.start("s2", "startup", monkeypatch, capsys)
    assert "parse_1" in answer["hookSpecificOutput"]["additionalContext"]


def test_an_event_dated_ahead_of_the_clock_keeps_no_answer_past_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A save from a machine whose clock runs ahead is left out until its time comes
    (``provenance.read``); the answer worked out without it holds only until then."""
    world = World(tmp_path / "w", monkeypatch)
    world.save(1, "s0")
    code = world.root / "src" / "mod_1.py"
    code.write_text(code.read_text(encoding="utf-8").replace("def parse_", "def parsed_"))  # the item stale
    record = Path(world.project.provenance)
    due = time.time() + provenance.SKEW + 2
    ahead = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(due))
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    record.write_text("".join(json.dumps({**e, "at": ahead}) + "\n" for e in lines), encoding="utf-8")
    world.act("wait", 0, monkeypatch, capsys)
    first = world.start("s1", "startup", monkeypatch, capsys)
    assert "may be stale" not in first["systemMessage"]  # its claims wait for their time
    time.sleep(max(due - provenance.SKEW - time.time(), 0) + 1)
    answer = world.start("s2", "startup", monkeypatch, capsys)
    afresh = world.afresh("s2", "startup", monkeypatch, capsys)
    assert "may be stale" in afresh["systemMessage"]
    assert answer == afresh


@pytest.mark.skipif(os.name == "nt", reason="a Windows symlink needs a privilege, and Wine's cannot be resolved")
def test_a_claim_through_a_link_out_of_the_project_rests_on_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A claim's file reached through a link out of the project is not looked at; the link made a
    folder again (a folder no other claim names) makes it the project's, to judge."""
    world = World(tmp_path / "w", monkeypatch)
    lib = world.root / "pkg" / "sub" / "lib"
    lib.mkdir(parents=True)
    (lib / "x.py").write_text("Y = 1\n\n\ndef parse_9():\n    pass\n")
    decision = "Use `parse_9` in pkg/sub/lib/x.py"
    saving.save(world.project, config.load(str(world.root)), SaveInput(summary="s", decisions=[decision]), "s0")
    outside = tmp_path / "w" / "outside"
    outside.mkdir()
    lib.rename(outside / "lib")
    lib.symlink_to(outside / "lib", target_is_directory=True)
    shift([outside], HOUR)
    world.act("wait", 0, monkeypatch, capsys)
    first = world.start("s1", "startup", monkeypatch, capsys)
    assert "may be stale" not in first["systemMessage"] and os.path.exists(startcache.cache_file(world.project))
    lib.unlink()
    lib.mkdir()
    (lib / "x.py").write_text("Y = 1\n\n\ndef parsed_9():\n    pass\n")
    shift([world.root], HOUR)  # the work tree's files older than a tick; memory.md's age as it was
    time.sleep(fsutil.CHANGE_TICK_NS / 1e9 + 0.02)
    answer = world.start("s2", "startup", monkeypatch, capsys)
    afresh = world.afresh("s2", "startup", monkeypatch, capsys)
    assert "may be stale" in afresh["systemMessage"]  # its file there at last, without the name
    assert answer == afresh


@pytest.mark.skipif(os.name == "nt", reason="Windows keeps no change time (its st_ctime is the creation time)")
def test_a_file_edited_while_the_answer_is_worked_out_keeps_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """memory.md edited by hand after the start read it, its size and time kept, well before the
    answer is kept: the status taken then is the edit's, the answer is not; nothing is kept."""
    from keeper.hooks import context

    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    Path(startcache.cache_file(world.project)).unlink()
    real = context.session_start

    def edited_meanwhile(*args: Any) -> tuple[str, str]:
        answer = real(*args)
        same_size_edit(Path(world.project.memory), "- Issue ", 0)
        time.sleep(fsutil.CHANGE_TICK_NS / 1e9 + 0.02)  # the edit older than a change time's tick when kept
        return answer

    monkeypatch.setattr(context, "session_start", edited_meanwhile)
    world.start("s2", "startup", monkeypatch, capsys)
    monkeypatch.setattr(context, "session_start", real)
    assert world.start("s3", "startup", monkeypatch, capsys) == world.afresh("s3", "startup", monkeypatch, capsys)


@settings(max_examples=300, deadline=None)
@given(
    when=st.floats(1.6e9, 1.9e9),
    offset=st.one_of(st.floats(-400.0, 400.0), st.floats(-1e6, 1e8)),
    where=st.floats(0.0, 1.0),
)
def test_the_clock_says_the_same_between_the_times_it_gives(when: float, offset: float, where: float) -> None:
    """The kept answer says "saved N ago" as the clock said it when it was worked out: at any time
    the clock gives for it, it says the same, and the time it was worked out lies within a margin."""
    now_ns = int((when + offset) * 1e9)
    low, high = clock.between(when, now_ns)
    assert low - 2 * clock.MARGIN_NS <= now_ns <= high + 2 * clock.MARGIN_NS  # a float's rounding at an end
    if low < high:
        at = low + int(where * (min(high, low + 10**17) - low - 1))
        assert clock.says(when, at / 1e9) == clock.says(when, now_ns / 1e9)
    assert clock.between(None, now_ns) == (0, 1 << 63)


def test_a_file_the_stale_check_read_changed_with_every_verdict_as_it_was_gives_the_kept_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file a claim names edited (a comment added): the stale check judges again what rests on it,
    finds what it found, and the kept answer is given without the context builder; the file is
    kept as changed until it is older than a tick, then as it is."""
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    calls = Calls(monkeypatch)
    code = world.root / "src" / "mod_1.py"
    code.write_text(code.read_text(encoding="utf-8") + "# checked by hand\n", encoding="utf-8")
    answer = world.start("s2", "startup", monkeypatch, capsys)
    assert (calls.built, calls.judged) == (0, 1)
    assert "\n?\t" in Path(startcache.cache_file(world.project)).read_text(encoding="utf-8")  # kept as changed
    older = code.stat().st_mtime - HOUR
    os.utime(code, (older, older))  # the edit older than any clock's tick
    time.sleep(fsutil.CHANGE_TICK_NS / 1e9 + 0.02)
    assert world.start("s2", "startup", monkeypatch, capsys) == answer  # judged again, kept as it is now
    assert (calls.built, calls.judged) == (0, 2)
    assert world.start("s2", "startup", monkeypatch, capsys) == answer
    assert (calls.built, calls.judged) == (0, 2)  # nothing changed: the kept answer alone
    assert answer == world.afresh("s2", "startup", monkeypatch, capsys)


def test_a_file_the_stale_check_read_changed_has_the_others_looked_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The kept verdicts take the stats the kept answer took of the files they rest on: each is
    looked at once (issue 43: 300 items with one file changed stat every file twice)."""
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    calls = Calls(monkeypatch)
    code = world.root / "src" / "mod_1.py"
    code.write_text(code.read_text(encoding="utf-8") + "# checked by hand\n", encoding="utf-8")
    looked: list[str] = []
    real = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        looked.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    answer = world.start("s2", "startup", monkeypatch, capsys)
    monkeypatch.setattr(os, "stat", real)
    assert (calls.built, calls.judged) == (0, 1)
    inputs = [path for path in looked if path.startswith(str(world.root / "src"))]
    assert str(code) in inputs and len(inputs) == len(set(inputs))
    assert answer == world.afresh("s2", "startup", monkeypatch, capsys)


def test_a_file_edited_again_with_every_verdict_as_it_was_leaves_the_kept_answer_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file the stale check read, edited just before each start (kept as changed each time): the
    check finds what it found, and the kept answer, which would be written again as it is but for
    its time, is not written (issue 43: 300 items with one file changed rewrote 38 KB a start)."""
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    calls = Calls(monkeypatch)
    code = world.root / "src" / "mod_1.py"
    kept = Path(startcache.cache_file(world.project))
    answers = []
    for n in range(3):
        code.write_text(code.read_text(encoding="utf-8") + f"# checked by hand {n}\n", encoding="utf-8")
        before = kept.read_bytes()
        answers.append(world.start("s2", "startup", monkeypatch, capsys))
        if n:
            assert kept.read_bytes() == before  # the same answer on the same files' status lines
    assert "\n?\t" in kept.read_text(encoding="utf-8")  # kept as changed
    assert (calls.built, calls.judged) == (0, 3)
    assert answers[0] == answers[1] == answers[2] == world.afresh("s2", "startup", monkeypatch, capsys)


def test_a_file_the_stale_check_read_changed_so_a_verdict_changed_is_worked_out_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    calls = Calls(monkeypatch)
    code = world.root / "src" / "mod_1.py"
    code.write_text(code.read_text(encoding="utf-8").replace("def parse_1", "def parsed_1"), encoding="utf-8")
    answer = world.start("s2", "startup", monkeypatch, capsys)
    assert (calls.built, calls.judged) == (1, 1)
    assert "may be stale" in answer["systemMessage"]
    assert answer == world.afresh("s2", "startup", monkeypatch, capsys)


HEADS = [  # one field of the kept answer's head damaged
    ("between", ["a", "b"]),
    ("between", [0]),
    ("checked", -1),
    ("checked", 10**6),
    ("checked", "1"),
    ("stale", None),
    ("files", 10**6),
    ("shown", "abc"),
]


@pytest.mark.parametrize(("field", "value"), HEADS)
def test_a_damaged_kept_answer_is_a_miss_never_an_error(
    field: str, value: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    _kept_then(world, lambda data: data.update({field: value, "text": "a damaged answer"}))
    answer = world.start("s2", "startup", monkeypatch, capsys)
    assert "parse_1" in answer["hookSpecificOutput"]["additionalContext"]


def test_memory_edited_while_the_stale_check_judges_again_is_worked_out_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The kept answer is given after its stale check only while all else is still as it was."""

    world = kept_world(tmp_path / "w", monkeypatch, capsys)
    code = world.root / "src" / "mod_1.py"
    code.write_text(code.read_text(encoding="utf-8") + "# checked by hand\n", encoding="utf-8")
    real = startcache.verdicts_again

    def edited_meanwhile(*args: Any) -> list[Any]:
        found = real(*args)
        memory = Path(world.project.memory)
        memory.write_text(memory.read_text(encoding="utf-8").replace("Issue 1", "Issue 7"), encoding="utf-8")
        return found

    monkeypatch.setattr(startcache, "verdicts_again", edited_meanwhile)
    answer = world.start("s2", "startup", monkeypatch, capsys)
    assert "Issue 7" in answer["hookSpecificOutput"]["additionalContext"]
    monkeypatch.setattr(startcache, "verdicts_again", real)
    assert answer == world.afresh("s2", "startup", monkeypatch, capsys)


VERDICT_KINDS = ("code", "rename", "touch", "delete", "wait", "hand", "save", "clock")


def _items_world(folder: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A world whose memory holds enough items that a line of changes is small beside the kept verdicts."""
    world = World(folder, monkeypatch)
    for n in range(16):
        world.save(n, "s0")
    return world


def _judged_both_ways(project: paths.Project) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The stale check with its kept verdicts, then worked out afresh (nothing kept taken)."""
    text = Path(project.memory).read_text(encoding="utf-8")
    rows = [
        [(s.key, s.text, s.section, s.reason, s.rank) for s in found]
        for found in (stale.stale_items(project, text, keep=True), stale.stale_items(project, text))
    ]
    return rows[0], rows[1]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(steps=st.lists(st.tuples(st.sampled_from(VERDICT_KINDS), st.integers(0, 11)), min_size=1, max_size=24))
def test_kept_verdicts_kept_as_lines_of_changes_are_the_verdicts_worked_out_afresh(
    steps: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stale check's kept verdicts, a line of what changed appended at each start that judged an
    item again (issue 43: the whole 91 KB file was written again), read back as exactly what was
    kept, and the verdicts they give are those worked out afresh, whatever changed between starts."""
    kept: list[Any] = []
    real = verdicts._store

    def noted(project: paths.Project, data: dict[str, Any], before: Any) -> None:
        real(project, data, before)
        kept.append(json.loads(jsonio.dumps(data)))

    monkeypatch.setattr(verdicts, "_store", noted)
    with tempfile.TemporaryDirectory() as folder:
        world = _items_world(Path(folder), monkeypatch)
        try:
            for kind, n in [("wait", 0), *steps]:
                world.act(kind, n, monkeypatch, capsys)
                with_kept, afresh = _judged_both_ways(world.project)
                assert with_kept == afresh, (kind, n)
                path = Path(verdicts.cache_file(world.project))
                if path.exists():
                    lines = path.read_bytes().count(b"\n")
                    event("lines of changes" if lines else "whole")
                    assert lines <= verdicts.MAX_CHANGES
                    assert verdicts._read(world.project)[0] == kept[-1]  # read back as kept
        finally:
            monkeypatch.chdir(Path(folder).parent)


def test_a_line_of_changes_not_written_where_it_says_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two starts that append at once (or one that writes the file anew while another appends): a
    line not at the offset it was written for, or after another document, takes nothing kept."""
    world = _items_world(tmp_path / "w", monkeypatch)
    world.act("wait", 0, monkeypatch, capsys)
    _judged_both_ways(world.project)
    world.act("code", 1, monkeypatch, capsys)
    _judged_both_ways(world.project)
    path = Path(verdicts.cache_file(world.project))
    whole = path.read_bytes()
    assert whole.count(b"\n") == 1  # the document, then one line of changes
    want = verdicts.key(world.project, Path(world.project.memory).read_text(encoding="utf-8"))
    assert verdicts.load(world.project, want, time.time_ns()).verdicts is not None
    head, line = whole.split(b"\n")
    for damaged in (
        whole + b"\n" + line,  # the same line again: not where it was written
        head.replace(b'"at": ', b'"at": 1') + b"\n" + line,  # after another document
        whole + b"\n{",
    ):
        path.write_bytes(damaged)
        assert verdicts._read(world.project) == ({}, None)
        assert verdicts.load(world.project, want, time.time_ns()).verdicts is None
    with_kept, afresh = _judged_both_ways(world.project)
    assert with_kept == afresh
    assert path.read_bytes().count(b"\n") == 0  # written whole again


def test_a_line_of_changes_is_appended_only_to_the_file_as_it_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two starts that read the same kept verdicts: the second's change, the file no longer as it
    read it, writes the file whole."""
    world = _items_world(tmp_path / "w", monkeypatch)
    world.act("wait", 0, monkeypatch, capsys)
    _judged_both_ways(world.project)
    world.act("code", 1, monkeypatch, capsys)
    text = Path(world.project.memory).read_text(encoding="utf-8")
    want = verdicts.key(world.project, text)
    first, second = (verdicts.load(world.project, want, time.time_ns()) for _ in range(2))
    assert first.file is not None and second.file is not None and first.changed
    stale.stale_items(world.project, text, keep=True)  # the first start appends its line
    path = Path(verdicts.cache_file(world.project))
    assert path.read_bytes().count(b"\n") == 1
    data = json.loads(jsonio.dumps(first.file.data))
    verdicts._store(world.project, data, second.file)
    assert path.read_bytes().count(b"\n") == 0 and verdicts._read(world.project)[0] == data


def test_kept_verdicts_stamped_anew_from_a_file_without_a_count_are_never_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kept file edited by hand (or by an older Keeper) without its ``count``, its verdicts all as
    they were and one file touched (the same bytes, a new time): stamping it anew appended a line of
    changes and read ``count`` from it, a KeyError at every start until the file was deleted."""
    world = _items_world(tmp_path / "w", monkeypatch)
    world.act("wait", 0, monkeypatch, capsys)
    _judged_both_ways(world.project)
    path = Path(verdicts.cache_file(world.project))
    data = json.loads(path.read_text(encoding="ascii"))
    del data["count"]
    path.write_text(json.dumps(data), encoding="ascii")
    world.act("touch", 1, monkeypatch, capsys)
    with_kept, afresh = _judged_both_ways(world.project)
    assert with_kept == afresh


def test_kept_verdicts_holding_a_value_nested_too_deep_to_write_back_are_never_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kept file edited by hand with a value nested just deep enough to be read (``_read`` takes
    a RecursionError as a miss) but not written back a few calls deeper: stamping it anew wrote it
    whole and raised RecursionError out of the hook. Every depth near the limit is tried."""
    world = _items_world(tmp_path / "w", monkeypatch)
    world.act("wait", 0, monkeypatch, capsys)
    _judged_both_ways(world.project)
    path = Path(verdicts.cache_file(world.project))
    data = json.loads(path.read_text(encoding="ascii"))
    data["items"] = []  # not a line of changes: written whole
    head = json.dumps(data)[:-1]
    code = world.root / "src" / "mod_1.py"
    for depth in range(sys.getrecursionlimit(), sys.getrecursionlimit() // 2, -1):
        path.write_text(f'{head}, "deep": {"[" * depth}{"]" * depth}}}', encoding="ascii")
        os.utime(code)
        with_kept, afresh = _judged_both_ways(world.project)
        assert with_kept == afresh
    assert not [name for name in os.listdir(world.project.state) if name.endswith(".tmp")]  # none left behind
