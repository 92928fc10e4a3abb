"""Nothing lost, never in the way: concurrent sessions, writers killed mid-write, hostile input.

The stress test's sessions make a count of tool uses and the crash test a count of kills (a count,
not a time: as many on a slow machine as on a fast one); ``KEEPER_LONG_TESTS=1`` soaks longer.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.capture import saving
from keeper.hooks import entry
from keeper.markdown import Document, bare
from keeper.memory.document import OwnedLines, SaveInput
from keeper.store import config, counters, fsutil, identity
from tests.conftest import LONG, LoggedErrors
from tests.helpers import run_hook

STRESS_USES = 400 if LONG else 80  # tool uses by each session: a save every 40, a Stop every 15
CRASH_ROUNDS = 60 if LONG else 12
SECTIONS = ("## Core Decisions", "## Current State", "## Recent Context", "## Known Issues")


def whole_memory(text: str) -> bool:
    return text.startswith("# Project Memory: ") and all(s in text for s in SECTIONS)


# -- many sessions at once ----------------------------------------------------------------------


def _session_worker(root: str, home: str, worker: int, count: int, start: Any, queue: Any) -> None:
    os.environ["KEEPER_HOME"] = home
    os.environ["KEEPER_SAVE_EVERY"] = "7"
    project = identity.make_project(root)
    cfg = config.load(root)
    session = f"stress-{worker}"
    uses, saved = 0, []
    start.wait(120)  # every session and the reader ready: they all begin together
    while uses < count:
        payload = {"session_id": session, "cwd": root, "tool_name": "Read", "tool_input": {}}
        entry.handle("post-tool-use", json.dumps(payload).encode())
        uses += 1
        if uses % 40 == 0:
            decision = f"Worker {worker} decision {len(saved)}"
            saving.save(project, cfg, SaveInput(decisions=[decision], summary=f"w{worker} at {uses}"), session)
            saved.append(decision)
        if uses % 15 == 0:
            entry.handle("stop", json.dumps({"session_id": session, "cwd": root, "stop_hook_active": True}).encode())
    queue.put((session, uses, saved))


def _reader(root: str, home: str, start: Any, stop: Any, queue: Any) -> None:
    """Reads memory.md and the session files from the sessions' start until ``stop`` (they are done)."""
    os.environ["KEEPER_HOME"] = home
    project = identity.make_project(root)
    reads, broken = 0, []
    start.wait(120)
    while not stop.is_set():  # Keeper's reader: it waits out Windows' sharing refusals
        text = fsutil.read_text(project.memory)
        if text is not None:
            reads += 1
            if not whole_memory(text):
                broken.append(text[:200])
        for session_file in Path(project.sessions).glob("*.md") if os.path.isdir(project.sessions) else []:
            head = (fsutil.read_text(str(session_file)) or "# Session (gone)")[:10]
            if not head.startswith("# Session"):
                broken.append(f"{session_file.name}: {head!r}")
    queue.put(("reader", reads, broken))


@pytest.mark.slow
def test_eight_sessions_hooking_and_saving_at_once_lose_nothing(project_dir: Path) -> None:
    home = os.environ["KEEPER_HOME"]
    ctx = multiprocessing.get_context("spawn")
    queue, start, stop = ctx.Queue(), ctx.Barrier(9), ctx.Event()
    root = str(project_dir)
    workers = [ctx.Process(target=_session_worker, args=(root, home, w, STRESS_USES, start, queue)) for w in range(8)]
    workers.append(ctx.Process(target=_reader, args=(root, home, start, stop, queue)))
    for proc in workers:
        proc.start()
    results = [queue.get(timeout=300) for _ in range(8)]  # the sessions'; the reader ends when told
    stop.set()
    results.append(queue.get(timeout=120))
    for proc in workers:
        proc.join(30)
        assert proc.exitcode == 0
    reader = next(r for r in results if r[0] == "reader")
    assert reader[1] > 0 and reader[2] == [], reader[2][:3]  # never saw a half-written file
    project = identity.make_project(str(project_dir))
    text = Path(project.memory).read_text(encoding="utf-8")
    decisions = Counter(item.rsplit(" (", 1)[0] for _, item in Document.parse(text).find(("core decisions",)).bullets())
    expected = [d for r in results if r[0] != "reader" for d in r[2]]
    assert len(expected) == 8 * (STRESS_USES // 40)
    assert all(decisions[d] == 1 for d in expected), [d for d in expected if decisions[d] != 1][:5]
    for session, uses, saved in (r for r in results if r[0] != "reader"):
        log = counters.read(counters.tally_path(project, session))
        assert counters.total_uses(log) == uses  # counters exact
        assert counters.saves(log) == len(saved)
    assert len(list(Path(project.sessions).glob("*.md"))) == 8
    assert not list(Path(project.dir).rglob("*.tmp"))


# -- writers killed at random instants -----------------------------------------------------------

CHILD = """
import json, os, sys
from keeper.capture import record, saving
from keeper.store import config, paths
from keeper.store import identity
from keeper.memory.document import SaveInput
root, prefix, transcript = sys.argv[1:4]
project = identity.make_project(root)
cfg = config.load(root)
i = 0
while True:
    saving.save(project, cfg, SaveInput(decisions=[f"{prefix} decision {i}"], state=[f"at {i}"], summary=f"{prefix} {i}"), "crash-session")
    print(i, flush=True)
    with open(transcript, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "message": {"content": f"prompt {prefix} {i}"}}) + "\\n")
    record.update(project, cfg, "crash-session", {"Last reply": f"{prefix} {i}"}, transcript)
    i += 1
"""


@pytest.mark.slow
def test_killing_writers_at_random_instants_corrupts_nothing(project_dir: Path, tmp_path: Path) -> None:
    rng = random.Random(20261121)
    transcript = tmp_path / "crash.jsonl"
    transcript.touch()
    confirmed: list[str] = []
    for round_ in range(CRASH_ROUNDS):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(project_dir), f"R{round_}", str(transcript)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        first = child.stdout.readline()  # its first save is done: however slow the start (Wine), kill it while saving
        time.sleep(rng.uniform(0.3, 0.9))
        child.kill()  # SIGKILL on POSIX, TerminateProcess on Windows: no cleanup runs
        out, _ = child.communicate(timeout=30)
        out = first + out
        confirmed += [f"R{round_} decision {n}" for n in out.split()]
        project = identity.make_project(str(project_dir))
        text = Path(project.memory).read_text(encoding="utf-8")
        assert whole_memory(text)
        missing = [d for d in confirmed if f"- {d} (" not in text]
        assert not missing, missing[:5]
        for session_file in Path(project.sessions).glob("*.md"):
            assert session_file.read_text(encoding="utf-8").startswith("# Session")
        json.loads(Path(project.state, "memory.json").read_text(encoding="utf-8"))
    assert len(confirmed) >= CRASH_ROUNDS
    leftovers = list(Path(project.dir).rglob("*.tmp"))
    assert len(leftovers) <= CRASH_ROUNDS  # at most one per kill, never a pile
    for leftover in leftovers:
        os.utime(leftover, (1, 1))
    saving.save(project, config.load(None), SaveInput(summary="after the crashes"), "next")
    assert not list(Path(project.dir).rglob("*.tmp"))


# -- hostile input, generated --------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FIELDS = (
    "session_id",
    "cwd",
    "transcript_path",
    "hook_event_name",
    "tool_name",
    "tool_input",
    "tool_response",
    "prompt",
    "source",
    "stop_hook_active",
    "last_assistant_message",
    "trigger",
    "reason",
    "agent_id",
)


FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@FUZZ
@given(event=st.sampled_from(sorted(entry.HANDLERS)), data=st.data())
def test_any_json_payload_is_answered_and_memory_stays_intact(
    event: str,
    data: st.DataObject,
    project_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = identity.make_project(str(project_dir))
    if not os.path.exists(project.memory):
        saving.save(project, config.load(None), SaveInput(decisions=["Keep me intact"]), "seed")
    before = Path(project.memory).read_bytes()
    paths_like = st.sampled_from(
        [str(project_dir), str(tmp_path / "missing.jsonl"), "/dev/null", "/dev/zero", str(tmp_path), ""]
    )
    values = {
        k: data.draw(json_values | paths_like, label=k) for k in FIELDS if data.draw(st.booleans(), label=f"has {k}")
    }
    if isinstance(values.get("prompt"), str) and values["prompt"].lstrip().startswith("/keeper:clear"):
        values["prompt"] = "x"  # a real clear request is not hostile input
    run_hook(event, json.dumps(values).encode(), monkeypatch, capsys)
    assert Path(project.memory).read_bytes() == before


@FUZZ
@given(event=st.sampled_from(sorted(entry.HANDLERS)), raw=st.binary(max_size=300))
def test_any_bytes_get_exit_0_json_and_one_log_line(
    event: str, raw: bytes, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = store / "logs" / "keeper.log"
    before = log.read_text(encoding="utf-8").count("\n") if log.exists() else 0
    payload, problem = entry.parse_payload(raw)
    run_hook(event, raw, monkeypatch, capsys)
    after = log.read_text(encoding="utf-8").count("\n") if log.exists() else 0
    if problem or not payload.get("session_id"):
        assert after - before == 1


@pytest.mark.parametrize("event", sorted(entry.HANDLERS))
@pytest.mark.parametrize("failure", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_full_or_read_only_store_never_breaks_a_hook(
    event: str,
    failure: int,
    project_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    keeper_errors: LoggedErrors,
) -> None:
    keeper_errors.allow(f"[Errno {failure}]")  # the hook fails open on exactly this failure
    project = identity.make_project(str(project_dir))
    saving.save(project, config.load(None), SaveInput(decisions=["Survives a full disk"]), "seed")
    before = Path(project.memory).read_bytes()
    root = os.environ["KEEPER_HOME"]
    real_open, real_replace, real_mkdir = os.open, os.replace, os.mkdir

    def guarded(real: Any) -> Any:
        def fail_in_store(path: Any, *args: Any, **kwargs: Any) -> Any:
            writes = real is not real_open or bool(args and args[0] & (os.O_WRONLY | os.O_RDWR))
            if str(path).startswith(root) and writes:
                raise OSError(failure, os.strerror(failure), str(path))
            return real(path, *args, **kwargs)

        return fail_in_store

    monkeypatch.setattr(os, "open", guarded(real_open))
    monkeypatch.setattr(os, "replace", guarded(real_replace))
    monkeypatch.setattr(os, "mkdir", guarded(real_mkdir))
    base = {
        "session_id": "s-full",
        "cwd": str(project_dir),
        "source": "startup",
        "tool_name": "Read",
        "prompt": "/keeper:recall survives",
    }
    run_hook(event, json.dumps(base).encode(), monkeypatch, capsys)
    monkeypatch.undo()
    assert Path(project.memory).read_bytes() == before


# -- memory.md as people really edit it ---------------------------------------------------------


def saved_twice() -> tuple[str, dict]:
    """The memory.md of two days' saves, and its provenance record."""
    from datetime import datetime

    from keeper.memory import document

    base = None
    prov = OwnedLines()
    for i, data in enumerate(
        [
            {"decisions": ["Use Postgres 16", "Money in integer cents"], "state": ["api done"], "summary": "day one"},
            {"issues": ["Flaky login test"], "summary": "day two", "state": ["tests next"]},
        ]
    ):
        base, prov, _ = document.merge(
            base,
            prov,
            SaveInput(**data),
            project_name="api",
            session_id=f"s{i}",
            now=datetime(2026, 11, 20 + i),
            recent_sessions=3,
        )
    assert base is not None
    return base, prov


def reorder(doc: Document, draw: st.DrawFn) -> None:
    doc.sections[2:] = draw(st.permutations(doc.sections[2:]))


def rename(doc: Document, draw: st.DrawFn) -> None:
    for section in doc.sections:
        if section.title == "Core Decisions":
            section.heading, section.title = "## Decisions\n", "Decisions"


def extra(doc: Document, draw: st.DrawFn) -> None:
    """A section written by hand, anywhere after the top, set off by a blank line."""
    extra = Document.parse("## Team notes\nWritten by hand, keep me.\n- hand bullet\n").sections[1]
    doc.sections.insert(draw(st.integers(1, len(doc.sections))), extra)
    if not doc.sections[-2].lines or doc.sections[-2].lines[-1].strip():
        doc.sections[-2].lines.append("\n")


def tabs(doc: Document, draw: st.DrawFn) -> None:
    """Bullets written ``-<tab>`` (Keeper's own ``Last updated`` line left as it is)."""
    for section in doc.sections:
        section.lines = [
            line.replace("- ", "-\t", 1) if line.startswith("- ") and "Last updated" not in line else line
            for line in section.lines
        ]


def no_title(doc: Document, draw: st.DrawFn) -> None:
    doc.sections = [s for s in doc.sections if s.level != 1]


def trailing_space(doc: Document, draw: st.DrawFn) -> None:
    for section in doc.sections:
        section.lines = [line.rstrip("\n") + "  \n" if line.strip() else line for line in section.lines]


EDITS = {
    "reorder": reorder,
    "rename": rename,
    "extra": extra,
    "tabs": tabs,
    "no-title": no_title,
    "trailing-space": trailing_space,
}
MUTATIONS = (*EDITS, "crlf", "bom")  # and the rendered text's line endings, a byte order mark before it


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, dict]:
    """A memory.md Keeper wrote, then edited the ways people do; and its provenance record."""
    base, prov = saved_twice()
    doc = Document.parse(base)
    mutations = draw(st.lists(st.sampled_from(MUTATIONS), unique=True))
    for mutation in mutations:
        if mutation in EDITS:
            EDITS[mutation](doc, draw)
    text = doc.render()
    if "crlf" in mutations:
        text = text.replace("\n", "\r\n")
    if "bom" in mutations:
        text = "\ufeff" + text
    return text, prov


@settings(max_examples=120, deadline=None)
@given(
    edited(),
    st.sampled_from(
        [{"summary": "day three"}, {"state": ["shipped"]}, {"decisions": ["New rule"]}, {"issues": ["New bug"]}]
    ),
)
def test_whatever_people_do_to_memory_md_nothing_they_wrote_is_dropped(case: tuple[str, dict], save: dict) -> None:
    from datetime import datetime

    from keeper.memory import document

    text, prov = case
    owned = set(prov.state) | {r.line for r in prov.recent}
    theirs = Counter(bare(line) for line in text.lstrip("\ufeff").splitlines(keepends=True) if bare(line) not in owned)
    after, _, _ = document.merge(
        text,
        prov,
        SaveInput(**save),
        project_name="api",
        session_id="s9",
        now=datetime(2026, 11, 23),
        recent_sessions=3,
    )
    kept = Counter(bare(line) for line in after.lstrip("\ufeff").splitlines(keepends=True))
    assert not theirs - kept, list((theirs - kept).elements())[:5]
