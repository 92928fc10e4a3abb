"""A prompt with nothing Keeper could recall is told so before the index opens (``keeper.recall.gate``),
and every prompt gets the answer the full search gives: played side by side on two projects, one of
which never keeps a gate."""

from __future__ import annotations

import json
import os
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

WORDS = ["checkout", "clock", "invoice", "pricing", "refund", "ledger", "cache", "flaky", "parser", "billing"]
WORDS += ["webhook", "tenant", "migration", "scheduler", "exporter", "throttle"]
KINDS = ["save", "hand", "inplace", "memory", "native", "team", "delete", "stop", "nothing"]
PAIR = st.lists(st.sampled_from(WORDS), min_size=2, max_size=2, unique=True)
STEP = st.tuples(st.sampled_from(KINDS), PAIR, PAIR)  # what changes, the words it writes, two words asked
TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T_]\d{2}:?\d{2}(:\d{2})?|\b\d{2}:\d{2}\b")  # a save on either side of a minute


class World:
    """A project of its own (store, folder, Claude Code's folder), driven through the real hook entry."""

    def __init__(self, base: Path, name: str, keeps_gate: bool) -> None:
        self.folder, self.keeps_gate = base / name, keeps_gate
        self.root = self.folder / "api"
        (self.root / ".git").mkdir(parents=True)
        self.steps = 0

    def enter(self, monkeypatch: pytest.MonkeyPatch) -> paths.Project:
        monkeypatch.setenv("KEEPER_HOME", str(self.folder / "store"))
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(self.folder / "claude"))
        monkeypatch.chdir(self.root)
        return identity.make_project(identity.find_project_root(str(self.root)))

    def prompt(self, words: list[str], monkeypatch: pytest.MonkeyPatch, capsys: Any, session: str = "now") -> str:
        project = self.enter(monkeypatch)
        if not self.keeps_gate:
            Path(project.state, paths.RECALL_GATE).unlink(missing_ok=True)
        prompt = " ".join(["what", *words, "zebra", "quantum", "again?"])  # two words the memory never holds
        payload = {"session_id": session, "cwd": str(self.root), "prompt": prompt}
        reply = run_hook("user-prompt-submit", payload, monkeypatch, capsys)
        return TIME.sub("T", json.dumps(reply).replace(str(self.folder), "W"))


def write(path: Path, text: str, in_place: bool = False) -> None:
    """A file as a person's editor writes it: replaced whole (a rename), or appended to in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if in_place:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def act(world: World, kind: str, words: list[str], monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    """One change to what recall may find."""
    project = world.enter(monkeypatch)
    text = " ".join(words)
    world.steps += 1
    sessions = sorted(Path(project.sessions).glob("*.md")) if os.path.isdir(project.sessions) else []
    if kind == "save":
        session = ("now", "s1", "s2")[world.steps % 3]  # "now": the prompting session's own file
        saving.save(project, config.load(str(world.root)), SaveInput(summary=text), session)
    elif kind == "hand":
        day = 1 + world.steps % 28
        write(
            Path(project.sessions, f"2026-10-{day:02d}_1000.md"), f"# Session 2026-10-{day:02d}\n\n## Notes\n\n{text}\n"
        )
    elif kind == "inplace" and sessions:
        write(sessions[0], f"\n## More\n\n{text}\n", in_place=True)
    elif kind == "memory" and os.path.exists(project.memory):
        write(Path(project.memory), f"\n## Notes\n\n- {text}\n", in_place=True)
    elif kind == "native":
        native = Path(world.folder, "claude", "projects", "".join(c if c.isalnum() else "-" for c in project.root))
        write(native / "memory" / f"note_{world.steps % 2}.md", f"# Note\n\n{text}\n")
    elif kind == "team":
        write(world.root / ".claude" / "keeper" / "team.md", f"# Team\n\n## Decisions\n\n- {text}\n")
    elif kind == "delete" and sessions:
        sessions[-1].unlink()
    elif kind == "stop":  # the prompting session's own file rewritten, as every Stop does
        payload = {"session_id": "now", "cwd": str(world.root), "last_assistant_message": text}
        run_hook("stop", payload, monkeypatch, capsys)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=12))
def test_every_prompt_gets_what_the_full_search_gives(
    steps: list[tuple[str, list[str], list[str]]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two words asked: recalled only when the memory holds both, so each change to the files that
    brings a word in or takes one out decides the answer."""
    with tempfile.TemporaryDirectory() as folder:
        fast, full = World(Path(folder), "fast", True), World(Path(folder), "full", False)
        try:
            for kind, words, asked in [("save", WORDS[:2], WORDS[:2]), *steps]:
                for world in (fast, full):
                    act(world, kind, words, monkeypatch, capsys)
                # the prompting session, then another one, whose own file is the first's to recall from
                for question, session in ((asked, "now"), (words, "now"), (words, "s1"), (asked, "now")):
                    answers = [world.prompt(question, monkeypatch, capsys, session) for world in (fast, full)]
                    assert answers[0] == answers[1], (kind, words, question, session)
        finally:
            monkeypatch.chdir(Path(folder).parent)  # Windows removes no folder a process stands in


def test_a_prompt_the_memory_cannot_answer_leaves_the_index_shut(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    world = World(tmp_path, "w", True)
    act(world, "save", ["flaky", "checkout", "clock", "frozen"], monkeypatch, capsys)
    assert "recalled" in world.prompt(["flaky", "checkout"], monkeypatch, capsys)  # searched: keeps the gate
    project = world.enter(monkeypatch)
    index = Path(project.state, "index.sqlite3")
    before = index.stat().st_mtime_ns
    assert world.prompt(["invoice", "exporter"], monkeypatch, capsys) == "{}"
    act(world, "hand", ["invoice", "exporter"], monkeypatch, capsys)  # the sessions folder changes
    assert "recalled" in world.prompt(["invoice", "exporter"], monkeypatch, capsys)
    assert index.stat().st_mtime_ns != before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an open file by /proc")
def test_the_gate_is_kept_without_waiting_for_the_disk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The gate is derived (a search writes it again): kept after each change a prompt takes in, it is
    not flushed to the disk, which a loaded machine makes a prompt wait for."""
    world = World(tmp_path, "w", True)
    act(world, "save", ["flaky", "checkout", "clock", "frozen"], monkeypatch, capsys)
    flushed: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert "recalled" in world.prompt(["flaky", "checkout"], monkeypatch, capsys)
    project = world.enter(monkeypatch)
    assert os.path.exists(os.path.join(project.state, paths.RECALL_GATE))
    assert not [p for p in flushed if paths.RECALL_GATE in os.path.basename(p)], flushed  # nor its temporary file


def test_a_hook_that_rewrites_its_session_file_takes_it_in_so_the_next_prompt_indexes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every Stop rewrites its session's file, as PreCompact does; taken in by the hook that wrote it,
    it costs the next prompt nothing. SessionEnd leaves it to the next search: it has two seconds."""
    from keeper.recall import index, sources

    world = World(tmp_path, "w", True)
    act(world, "save", ["flaky", "checkout", "clock", "frozen"], monkeypatch, capsys)
    assert "recalled" in world.prompt(["flaky", "checkout"], monkeypatch, capsys)  # the index is built
    for hook in ("stop", "stop", "pre-compact"):  # the first Stop makes the file, the others rewrite it
        if hook == "stop":
            act(world, "stop", ["invoice", "exporter", str(world.steps)], monkeypatch, capsys)
        else:
            run_hook(hook, {"session_id": "now", "cwd": str(world.root), "trigger": "manual"}, monkeypatch, capsys)
        project = world.enter(monkeypatch)
        con = index.open_index(project)
        assert con is not None
        try:
            assert index.refresh(con, sources.Sources(project, False)) == 0
        finally:
            con.close()
    assert "recalled" in world.prompt(["flaky", "checkout"], monkeypatch, capsys)


def test_a_stop_builds_no_index_for_a_project_never_searched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    world = World(tmp_path, "w", True)
    act(world, "save", ["flaky", "checkout"], monkeypatch, capsys)
    act(world, "stop", ["invoice", "exporter"], monkeypatch, capsys)
    assert not os.path.exists(world.enter(monkeypatch).index)


def test_a_stop_takes_in_its_own_file_when_newer_sessions_outnumber_those_always_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A session resumed after many others: its file's name (its start) is not among the newest the
    quick check stats, so the Stop's refresh found nothing changed and another session's prompt
    recalled nothing of it, where a fresh index does. The random window of older files is shut here
    (``WINDOW`` 0) so that it cannot find the file by chance."""
    from keeper.recall import index

    fresh, kept = World(tmp_path, "fresh", True), World(tmp_path, "kept", True)
    for world in (fresh, kept):
        act(world, "stop", ["flaky", "checkout"], monkeypatch, capsys)  # the resumed session's file, the oldest
        project = world.enter(monkeypatch)
        for n in range(index.NEWEST_ALWAYS_CHECKED + 2):  # newer sessions since
            write(Path(project.sessions, f"2099-01-{1 + n:02d}_1000.md"), "# Session\n\n## Notes\n\ncache parser\n")
    assert "recalled" in kept.prompt(["flaky", "checkout"], monkeypatch, capsys, "s1")  # its index is built
    monkeypatch.setattr(index, "WINDOW", 0)
    for world in (fresh, kept):
        act(world, "stop", ["invoice", "exporter"], monkeypatch, capsys)
    Path(fresh.enter(monkeypatch).index).unlink(missing_ok=True)  # never built: the next prompt builds it
    answers = [world.prompt(["invoice", "exporter"], monkeypatch, capsys, "s1") for world in (fresh, kept)]
    assert "recalled" in answers[0]
    assert answers[1] == answers[0]


@pytest.mark.skipif(os.name == "nt", reason="a file name of bytes that are not UTF-8 is a POSIX one")
@pytest.mark.parametrize("where", ["sessions", "native"])
def test_a_file_name_that_is_not_utf8_is_left_out_of_the_index_not_an_error(
    where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Another tool's file named in Latin-1: os.listdir gives it with surrogate escapes, which SQLite
    cannot take. Every Stop (which now refreshes the index) and every prompt logged an ERROR and the
    prompt recalled nothing; the file is left out, as a fresh search leaves it."""
    world = World(tmp_path, "w", True)
    act(world, "save", ["flaky", "checkout"], monkeypatch, capsys)
    assert "recalled" in world.prompt(["flaky", "checkout"], monkeypatch, capsys, "other")  # the index is built
    project = world.enter(monkeypatch)
    native = Path(world.folder, "claude", "projects", "".join(c if c.isalnum() else "-" for c in project.root))
    folder = os.fsencode(project.sessions if where == "sessions" else native / "memory")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, b"2020-01-01_caf\xe9.md"), "w", encoding="utf-8") as fh:
        fh.write("# Notes\n\n## Old\n\ninvoice exporter\n")
    act(world, "stop", ["refund", "ledger"], monkeypatch, capsys)
    assert "recalled" in world.prompt(["refund", "ledger"], monkeypatch, capsys, "other")
