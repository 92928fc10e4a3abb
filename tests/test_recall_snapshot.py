"""A recalling prompt ranks from the index's snapshot, without SQLite, exactly as through the index; every
writer of the index leaves it current, and a writer killed anywhere leaves no snapshot the index does not
hold (``keeper.recall.snapshot``)."""

from __future__ import annotations

import marshal
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.recall import chunks, index, search, snapshot, sources
from keeper.store import identity, paths, trash

WORDS = ["checkout", "clock", "invoice", "pricing", "refund", "ledger", "cache", "flaky", "parser", "billing"]
WORDS += ["webhook", "tenant", "migration", "scheduler", "exporter", "throttle", "frozen", "retry"]
SECTION = st.lists(st.sampled_from(WORDS), min_size=3, max_size=12)
SESSION = st.tuples(st.integers(1, 28), st.lists(SECTION, min_size=1, max_size=4))  # a day, its sections
PROMPT = st.lists(st.sampled_from([*WORDS, "zebra", "again", "the"]), min_size=2, max_size=7)
OWN = "2026-11-28_0900.md"  # the prompting session's own file, which each Stop rewrites
SESSION_ID = "now"


def make_project(base: Path, monkeypatch: pytest.MonkeyPatch) -> paths.Project:
    root = base / "api"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("KEEPER_HOME", str(base / "store"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "claude"))
    project = identity.make_project(identity.find_project_root(str(root)))
    os.makedirs(project.sessions)
    return project


def fill(project: paths.Project, memory: list[list[str]], past: list[tuple[int, list[list[str]]]]) -> None:
    body = "".join(f"## Part {i}\n\n- {' '.join(words)}\n\n" for i, words in enumerate(memory))
    Path(project.memory).write_text(f"# Memory\n\n{body}", encoding="utf-8")
    for n, (day, parts) in enumerate(past):
        text = "".join(f"### 10:{i:02d} save\n\n{' '.join(words)}\n\n" for i, words in enumerate(parts))
        Path(project.sessions, f"2026-10-{day:02d}_{n:04d}.md").write_text(
            f"# Session 2026-10-{day:02d}\n\n## Saves\n\n{text}", encoding="utf-8"
        )


def rewrite_own(project: paths.Project, words: list[str]) -> None:
    """The session's own file replaced, as each Stop replaces it (a new file renamed into place)."""
    path = Path(project.sessions, OWN)
    before = path.read_text(encoding="utf-8") if path.exists() else "# Session 2026-11-28\n\n## Saves\n\n"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(before + f"### 09:{len(before) % 60:02d} save\n\n{' '.join(words)}\n\n", encoding="utf-8")
    os.replace(tmp, path)


def stop(project: paths.Project, words: list[str]) -> None:
    """A Stop: the own file rewritten, then taken into the index (which leaves its snapshot)."""
    rewrite_own(project, words)
    index.after_write(project, False, (SESSION_ID, OWN))


def ask(project: paths.Project, prompt: str, gate_kept: bool) -> list[tuple[object, ...]]:
    """Automatic recall's search (``prompts.auto_recall``): through the snapshot when ``gate_kept``."""
    found = search.search(
        project,
        prompt,
        limit=12,
        thorough=False,
        correct=False,
        min_terms=2,
        gate_for=(SESSION_ID, OWN),
        gate_kept=gate_kept,
    )
    return [(r.id, r.score, r.coverage, r.hits, r.snippet, r.scope, r.chunk.date) for r in found]


def served(project: paths.Project) -> bool:
    return snapshot.current(sources.Sources(project), 25, OWN) is not None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    memory=st.lists(SECTION, max_size=6),
    past=st.lists(SESSION, min_size=10, max_size=40),
    turns=st.lists(st.tuples(PROMPT, SECTION), min_size=1, max_size=4),
)
def test_the_snapshot_ranks_as_the_index_does(
    memory: list[list[str]],
    past: list[tuple[int, list[list[str]]]],
    turns: list[tuple[list[str], list[str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random stores (up to ~160 sections over 18 words, so common terms go past the rare-term cap and
    the retrieval's levels run) and turns of a session (a prompt, then a Stop that rewrites its own
    file): each prompt after a Stop is served by the snapshot the Stop left, and its results are
    those of the SQLite path, scores to the last bit, snippets and all."""
    with tempfile.TemporaryDirectory() as folder:
        project = make_project(Path(folder), monkeypatch)
        fill(project, memory, past)
        ask(project, "flaky clock", gate_kept=False)  # the first search builds the index, and its snapshot
        for words, said in turns:
            stop(project, said)
            prompt = " ".join(words)
            assert served(project)
            from_snapshot = ask(project, prompt, gate_kept=True)
            assert ask(project, prompt, gate_kept=False) == from_snapshot, prompt


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80) | st.sampled_from(
    [
        "getUserById src/api/cache.py",
        "C++ & C# über-Straße",
        "2026-11-07 v1.2.3 a_b-c.d",
        "ÆØÅ ǅ ﬁle ＡＢＣ",
        "x:1 y\\z",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sections=st.lists(st.lists(TEXT, min_size=1, max_size=3), min_size=1, max_size=8))
def test_the_snapshots_posting_lists_are_those_fts5_holds(
    sections: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot makes each term's sections from the rows' terms, not from FTS5: for any text
    (accents, other scripts, punctuation, code), FTS5's own posting lists are the same."""
    with tempfile.TemporaryDirectory() as folder:
        project = make_project(Path(folder), monkeypatch)
        body = "".join(f"## Part {i}\n\n{' '.join(texts)}\n\n" for i, texts in enumerate(sections))
        Path(project.memory).write_text(f"# Memory\n\n{body}", encoding="utf-8")
        ask(project, "flaky clock", gate_kept=False)
        con = sqlite3.connect(project.index)
        try:
            con.execute("CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, fts, instance)")
            fts5: dict[str, list[int]] = {}
            for term, rowid in con.execute("SELECT term, doc FROM temp.postings ORDER BY term, doc"):
                fts5.setdefault(term, []).append(rowid)
        finally:
            con.close()
        kept = snapshot.current(sources.Sources(project), 25, OWN)
        assert kept is not None
        lines = [line.split("\t") for line in kept.vocab.split("\n") if line]
        assert {term: [int(n) for n in ids.split()] for term, ids in lines} == fts5
        assert all(list(kept.postings(term)) == ids for term, ids in fts5.items())


def test_the_snapshot_is_not_used_once_a_file_changed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project = make_project(tmp_path, monkeypatch)
    fill(project, [["flaky", "clock"]], [(3, [["flaky", "checkout", "clock"]])])
    assert ask(project, "flaky checkout clock", gate_kept=False)
    assert served(project)  # the search that built the index left its snapshot
    with open(project.memory, "a", encoding="utf-8") as fh:
        fh.write("\n## More\n\n- flaky checkout clock again\n")
    assert not served(project)  # memory.md changed: the index would take it in
    ask(project, "flaky checkout clock", gate_kept=False)
    assert served(project)
    Path(project.sessions, "2026-10-09_0001.md").write_text("# Session\n\n## Saves\n\nflaky clock\n", encoding="utf-8")
    assert not served(project)  # the folder changed
    ask(project, "flaky checkout clock", gate_kept=False)
    assert served(project)
    rewrite_own(project, ["flaky", "clock"])
    assert not served(project)  # the session's own file changed, which the quick check stats
    stop(project, ["flaky", "clock"])
    assert served(project)


def test_an_index_written_by_another_program_is_not_answered_from_the_snapshot(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A writer that does not know the snapshot (an older Keeper, a person's sqlite3) does not remove
    it: the index's files as it left them no longer match the snapshot's key."""
    project = make_project(tmp_path, monkeypatch)
    fill(project, [["flaky", "clock"]], [(3, [["flaky", "checkout", "clock"]])])
    ask(project, "flaky checkout clock", gate_kept=False)
    assert served(project)
    con = sqlite3.connect(project.index, isolation_level=None)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('terms', ?)", ("1" * 20_000,))  # a page more at least
    con.close()
    assert os.path.exists(os.path.join(project.state, snapshot.FILE))
    assert not served(project)
    con = sqlite3.connect(project.index, isolation_level=None)
    con.execute("BEGIN")
    con.execute("INSERT OR REPLACE INTO meta VALUES ('terms', '7')")
    con.execute("COMMIT")  # in the WAL while this connection stays open
    try:
        assert not served(project)
    finally:
        con.close()


def test_a_large_index_keeps_no_snapshot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(chunks, "SNAPSHOT_UP_TO", 3)
    project = make_project(tmp_path, monkeypatch)
    fill(project, [["flaky", "clock"]] * 4, [])
    assert ask(project, "flaky clock", gate_kept=False)
    assert not os.path.exists(os.path.join(project.state, snapshot.FILE))


def test_a_clear_removes_the_snapshot_with_the_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What was cleared must not stay findable through the index's copy either."""
    project = make_project(tmp_path, monkeypatch)
    fill(project, [["flaky", "clock"]], [(3, [["flaky", "checkout", "clock"]])])
    ask(project, "flaky checkout clock", gate_kept=False)
    trash.clear(project, trash.all_files(project), "test", 7)
    assert not any(os.path.exists(path) for path in project.index_files)
    assert not os.path.exists(os.path.join(project.state, snapshot.FILE))


# -- A writer killed at each point --------------------------------------------------------------------
# The child runs a real writer of the index (a Stop's take-in, an explicit recall, a refresh that only
# notes the sessions folder's time) and ends itself at one point of it: SIGKILL (TerminateProcess on
# Windows) or os._exit, as a hook's time limit or a crash would end it.
KILLED = """
import os, signal, sys
from keeper.recall import chunks, index, search, snapshot, sources
from keeper.store import identity
point, how, writer, own = sys.argv[1:5]
project = identity.make_project(identity.find_project_root(os.getcwd()))
def die():
    sys.stdout.flush()
    if how == "kill":
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
    os._exit(3)
WHERE = {
    "voided": ("return", snapshot.void.__code__),  # inside the write transaction, before its commit
    "committed": ("return", index.refresh.__code__),  # the index written, its snapshot not yet
    "locked": ("call", snapshot._take.__code__),  # checkpointed, under the write lock, nothing written
    "kept": ("return", snapshot.keep.__code__),  # all done
}
taking = []
def watch(frame, event, arg):
    if event == "call" and frame.f_code is snapshot._take.__code__:
        taking.append(1)
    if point == "renaming" and taking and event == "c_call" and arg is os.replace:
        die()  # the snapshot written to its temporary file, not yet renamed into place
    if WHERE.get(point) == (event, frame.f_code):
        die()
sys.setprofile(watch)
if writer == "stop":
    index.after_write(project, False, ("now", own))
elif writer == "recall":
    search.search(project, "flaky clock")
else:
    con = index.open_index(project)
    index.take_in(con, sources.Sources(project), False, None)
    con.close()
sys.setprofile(None)
"""


def change_for(writer: str, project: paths.Project) -> None:
    """What the writer takes in: the own file rewritten (a Stop), memory.md edited in place (an explicit
    recall), or only the sessions folder's time moved (a file made and removed)."""
    if writer == "stop":
        rewrite_own(project, ["ledger", "billing", "clock"])
    elif writer == "recall":
        with open(project.memory, "a", encoding="utf-8") as fh:
            fh.write("\n## Later\n\n- flaky checkout clock frozen ledger\n")
    else:
        Path(project.sessions, "draft.md.tmp").write_text("x", encoding="utf-8")
        os.remove(Path(project.sessions, "draft.md.tmp"))


def held(path: str) -> object:
    """What a snapshot file holds, past its key."""
    with open(path, "rb") as fh:
        fh.readline()
        return marshal.loads(fh.read())


def index_as_it_is(state: str, folder: Path) -> object:
    """What a snapshot of the index in ``state`` would hold (taken from a copy of its files, the WAL
    with them, so that nothing here checkpoints or changes the index itself)."""
    copy = folder / "copy"
    for name in os.listdir(state):
        if name.startswith(paths.INDEX_FILE):
            shutil.copyfile(os.path.join(state, name), copy / name if copy.exists() else _made(copy) / name)
    con = sqlite3.connect(copy / paths.INDEX_FILE, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        snapshot._take(con, str(folder / "fresh.snapshot"), b"\n")
        con.execute("ROLLBACK")
    finally:
        con.close()
    return held(str(folder / "fresh.snapshot"))


def _made(folder: Path) -> Path:
    folder.mkdir()
    return folder


@pytest.mark.parametrize("how", ["kill", "exit"])
@pytest.mark.parametrize("writer", ["stop", "recall", "folder"])
@pytest.mark.parametrize("point", ["voided", "committed", "locked", "renaming", "kept"])
def test_a_writer_killed_anywhere_leaves_no_snapshot_the_index_does_not_hold(
    point: str, writer: str, how: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project = make_project(tmp_path, monkeypatch)
    fill(project, [["flaky", "clock"], ["ledger", "export"]], [(d, [["flaky", "checkout", "clock"]]) for d in (3, 4)])
    stop(project, ["flaky", "ledger"])
    ask(project, "flaky checkout clock", gate_kept=False)
    assert served(project)
    change_for(writer, project)
    done = subprocess.run(
        [sys.executable, "-c", KILLED, point, how, writer, OWN], cwd=tmp_path / "api", capture_output=True, check=False
    )
    assert done.returncode != 0, done.stderr.decode()  # it ended where it was told to
    kept = os.path.join(project.state, snapshot.FILE)
    if os.path.exists(kept):  # a snapshot left behind holds the index as it is, whatever its key says
        assert held(kept) == index_as_it_is(project.state, tmp_path)
    prompt = "the flaky checkout clock ledger again"
    answer = ask(project, prompt, gate_kept=True)  # the next prompt
    for path in project.index_files:
        if os.path.exists(path):
            os.remove(path)
    assert answer == ask(project, prompt, gate_kept=False)  # a fresh search, from a new index


def _hostile_bodies(body: bytes) -> dict[str, bytes]:
    """Snapshot bodies ``keep`` never writes, behind the index's own key (a file damaged or put there)."""
    meta, files, vocab, ids, held = marshal.loads(body)
    last = max(ids)
    return {
        "meta a list": marshal.dumps(([], files, vocab, ids, held)),
        "a file of one field": marshal.dumps((meta, [(1,)], vocab, ids, held)),
        "a posting not a number": marshal.dumps((meta, files, vocab.replace("\t", "\tx "), ids, held)),
        "rows not bytes": marshal.dumps((meta, files, vocab, ids, tuple(1 for _ in held))),
        "rows of one field": marshal.dumps((meta, files, vocab, ids, tuple(marshal.dumps((1,)) for _ in held))),
        "no rows": marshal.dumps((meta, files, vocab, (), ())),
        "rowids shifted": marshal.dumps((meta, files, vocab, tuple(i + last for i in ids), held)),
        "vocab a number": marshal.dumps((meta, files, 5, ids, held)),
        "a list of 2**31 - 1 items declared": b"[" + (2**31 - 1).to_bytes(4, "little"),
        "code": marshal.dumps(compile("raise SystemExit(3)", "x", "exec")),
    }


HOSTILE = ["meta a list", "a file of one field", "a posting not a number", "rows not bytes", "rows of one field"]
HOSTILE += ["no rows", "rowids shifted", "vocab a number", "a list of 2**31 - 1 items declared", "code"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_snapshot_behind_the_right_key_answers_as_a_fresh_search(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """marshal.loads on bytes ``keep`` did not write runs nothing, and any doubt goes to SQLite: the
    prompt's results are a fresh search's, never an exception out of the hook or another section."""
    project = make_project(tmp_path, monkeypatch)
    fill(project, [["flaky", "clock", "cache"]], [(1, [["flaky", "clock", "refund"]]), (2, [["clock", "ledger"]])])
    ask(project, "flaky clock", gate_kept=False)
    stop(project, ["flaky", "clock", "invoice"])
    assert served(project)
    path = Path(project.state, snapshot.FILE)
    header, body = path.read_bytes().split(b"\n", 1)
    fresh = ask(project, "flaky clock", gate_kept=False)
    path.write_bytes(header + b"\n" + _hostile_bodies(body)[name])
    assert ask(project, "flaky clock", gate_kept=True) == fresh
    assert ask(project, "flaky clock", gate_kept=True) == fresh  # and again, the file as the first left it
