"""What a session start keeps so that the next one does not redo or rewrite it, and why that never
changes what the start shows (speed itself is measured in benchmarks/hooks.py)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keeper.capture import saving
from keeper.memory.document import SaveInput
from keeper.memory.items import key
from keeper.store import config, fsutil, identity, markers, paths, provenance, verdicts
from tests.helpers import run_hook
from tests.syncstores import git
from tests.transcripts import Transcript


def project_of(root: Path) -> paths.Project:
    return identity.make_project(identity.find_project_root(str(root)))


def test_a_start_that_shows_the_same_items_again_leaves_the_shown_list_alone(project_dir: Path) -> None:
    project = project_of(project_dir)
    path = markers.shown_file(project, "s1")
    os.makedirs(os.path.dirname(path))
    markers.remember_shown(project, "s1", {"0000abcd", "1234beef"})
    os.utime(path, (1_000_000_000, 1_000_000_000))
    markers.remember_shown(project, "s1", {"1234beef", "0000abcd"})  # a resume that shows the same items
    assert os.stat(path).st_mtime == 1_000_000_000
    assert Path(path).read_text(encoding="utf-8") == "0000abcd 1234beef"


def test_other_items_shown_replace_the_list_with_a_new_file_not_a_rewrite_in_place(project_dir: Path) -> None:
    project = project_of(project_dir)
    path = markers.shown_file(project, "s1")
    os.makedirs(os.path.dirname(path))
    markers.remember_shown(project, "s1", {"0000abcd"})
    earlier = os.path.join(os.path.dirname(path), "earlier")
    os.link(path, earlier)  # sees the old file's data, whatever happens to its name
    markers.remember_shown(project, "s1", {"1234beef", "5678cafe"})
    assert Path(path).read_text(encoding="utf-8") == "1234beef 5678cafe"
    assert Path(earlier).read_text(encoding="utf-8") == "0000abcd"  # not truncated and rewritten in place


# -- the stale check's kept verdicts ----------------------------------------------------------------

WORK = "9a0c3e51-1d2b-4c7a-8f00-5b1e2d3c4f56"
NEXT = "1f2e3d4c-5b6a-4978-8a6b-5c4d3e2f1a0b"
DAY = 86400.0
ITEMS = [
    "Prices are cached for 30 seconds: TTL = 30 in src/cache.py",  # a constant and its file
    "Routes are declared in `src/api.py`, one per line",  # names a path
    "Docs go to docs/guide.md when written",  # a file that does not exist (yet): never judged
]
CHANGED = "`TTL` is 60 in src/cache.py, not 30"


FILES = {"src/cache.py": "TTL = 30\n", "src/api.py": "ROUTES = []\n", "README.md": "# api\n"}


@pytest.fixture
def repo(project_dir: Path) -> Path:
    """The project's files, old: a session's work, then a quiet week (the check reads the files,
    never git, so no git binary is needed here)."""
    (project_dir / "src").mkdir()
    for name, text in FILES.items():
        (project_dir / name).write_text(text, encoding="utf-8")
        age(project_dir / name, time.time() - 9 * DAY)
    return project_dir


def age(path: Path | str, when: float) -> None:
    os.utime(path, (when, when))


def rewrite(path: Path, text: str, when: float | None = None) -> None:
    """A file's new text, dated ``when`` (a day ago by default: older than any clock tick)."""
    path.write_text(text, encoding="utf-8")
    age(path, time.time() - DAY if when is None else when)


def saved(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> paths.Project:
    """A session edited src/cache.py and saved ITEMS five days ago; then everything settled (every
    input of the check older than the clock's granularity, as a minute later)."""
    transcript = Transcript(repo.parent / f"{WORK}.jsonl", cwd=str(repo)).prompt("Cache the prices")
    transcript.tool("Edit", {"file_path": str(repo / "src" / "cache.py"), "old_string": "1", "new_string": "2"})
    start(repo, WORK, monkeypatch, capsys, str(transcript.path))
    project = project_of(repo)
    then = datetime.now() - timedelta(days=5)
    saving.save(project, config.load(project.root), SaveInput(decisions=ITEMS), WORK, now=then)
    settle(repo, project)
    return project


def settle(repo: Path, project: paths.Project) -> None:
    age(project.provenance, time.time() - 600)
    age(repo, time.time() - 600)


def start(
    repo: Path, session: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], transcript: str = ""
) -> dict[str, Any]:
    payload = {"session_id": session, "transcript_path": transcript, "cwd": str(repo), "source": "startup"}
    return run_hook("session-start", payload, monkeypatch, capsys)


def marks_of(reply: dict[str, Any]) -> dict[str, str]:
    """Each item shown -> its stale mark ('' when none)."""
    text = str(reply.get("hookSpecificOutput", {}).get("additionalContext", ""))
    found = {}
    for line in text.splitlines():
        item = next((i for i in ITEMS if line.startswith(f"- {i}")), None)
        if item:
            found[item] = line.split("[may be stale: ", 1)[1].rstrip("]") if "[may be stale: " in line else ""
    return found


class Reads:
    """Counts the stale check's full runs (each reads the provenance record once)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = provenance.read

        def counted(
            folder: str, items: set[str] | None = None, later: list[dict[str, Any]] | None = None
        ) -> list[dict[str, Any]]:
            self.count += 1
            return real(folder, items, later)

        monkeypatch.setattr(provenance, "read", counted)


def kept_then(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Reads, dict[str, str]]:
    """A start that keeps its verdicts, and the marks it showed; ``Reads`` counts the full checks after it."""
    project = saved(repo, monkeypatch, capsys)
    first = marks_of(start(repo, NEXT, monkeypatch, capsys))
    assert os.path.exists(verdicts.cache_file(project))
    return Reads(monkeypatch), first


def marked_then(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Reads, dict[str, str]]:
    """``kept_then`` with TTL set to 60 after the save: the first item marked."""
    project = saved(repo, monkeypatch, capsys)
    rewrite(repo / "src" / "cache.py", "TTL = 60\n")
    first = marks_of(start(repo, NEXT, monkeypatch, capsys))
    assert os.path.exists(verdicts.cache_file(project))
    assert first[ITEMS[0]] == CHANGED
    return Reads(monkeypatch), first


def test_the_kept_verdicts_are_a_derived_file_of_the_projects_state(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept_then(repo, monkeypatch, capsys)
    project = project_of(repo)
    relative = os.path.relpath(verdicts.cache_file(project), paths.data_root())
    assert paths.kind(relative) == paths.DERIVED
    assert os.path.dirname(verdicts.cache_file(project)) == project.state


def test_a_start_with_nothing_changed_takes_the_kept_verdicts_and_shows_the_same(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reads, first = marked_then(repo, monkeypatch, capsys)
    again = start(repo, "a-third-session", monkeypatch, capsys)
    assert marks_of(again) == first and "1 may be stale" in again["systemMessage"]
    assert reads.count == 0


def test_a_file_rewritten_with_the_same_bytes_keeps_the_verdicts(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A branch switched and switched back gives files new times, not new content."""
    from keeper.store import claims

    reads, first = marked_then(repo, monkeypatch, capsys)
    for name in FILES:
        path = repo / name
        rewrite(path, path.read_text(encoding="utf-8"), time.time() - 60)
    time.sleep(fsutil.CHANGE_TICK_NS / 1e9 + 0.02)  # the change older than its clock's tick: stamped, then trusted
    opened: list[str] = []
    real = claims.opened
    monkeypatch.setattr(claims, "opened", lambda full: opened.append(full) or real(full))
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys)) == first
    assert reads.count == 0 and opened == [str(repo / "src" / "cache.py")]  # compared by content once
    assert marks_of(start(repo, "a-fourth-session", monkeypatch, capsys)) == first
    assert reads.count == 0 and len(opened) == 1  # and stamped anew: the next start reads nothing


def test_deleting_the_kept_verdicts_costs_one_full_check_and_changes_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reads, first = marked_then(repo, monkeypatch, capsys)
    os.unlink(verdicts.cache_file(project_of(repo)))
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys)) == first
    assert reads.count == 1


def test_a_clock_that_went_back_takes_no_kept_verdicts(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A save counts from its time on (``provenance.read``): verdicts kept by a clock that has gone
    back since may rest on one it has not reached again."""
    reads, first = marked_then(repo, monkeypatch, capsys)
    cache = Path(verdicts.cache_file(project_of(repo)))
    data = json.loads(cache.read_text(encoding="utf-8"))
    data["at"], data["verdicts"] = time.time_ns() + 3600 * 10**9, []  # kept an hour from now, nothing stale then
    cache.write_text(json.dumps(data), encoding="utf-8")
    for kept in Path(project_of(repo).state).glob("start.cache"):
        kept.unlink()
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys)) == first
    assert reads.count == 1


WHOLE = ["", "{", "[]", '{"key": 1}', "\x00garbage"]  # the file
FIELDS = [  # one field of a file whose key still matches
    ("inputs", {"src/nowhere.py": "x"}),
    ("inputs", {"src/cache.py": ["f", 1]}),
    ("inputs", {"/etc/passwd": ["e", True]}),
    ("inputs", []),
    ("firsts", {"- a line": 1}),
    ("verdicts", [["k", "t", "s", "r"]]),
    ("verdicts", [["k", "t", "s", "r", "soon"]]),
    ("verdicts", [["k", "t", "s", "r", True]]),
    ("verdicts", {}),
]


@pytest.mark.parametrize("damage", [*WHOLE, *FIELDS])
def test_damaged_kept_verdicts_are_a_miss_never_an_error(
    damage: str | tuple[str, object],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reads, first = marked_then(repo, monkeypatch, capsys)
    kept = Path(verdicts.cache_file(project_of(repo)))
    if isinstance(damage, tuple):
        data = json.loads(kept.read_text(encoding="utf-8"))
        data[damage[0]] = damage[1]
        damage = json.dumps(data)
    kept.write_text(damage, encoding="utf-8")
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys)) == first
    assert reads.count == 1


def test_a_claim_broken_since_is_seen(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reads, first = kept_then(repo, monkeypatch, capsys)
    assert first[ITEMS[0]] == ""
    rewrite(repo / "src" / "cache.py", "TTL = 45\n")  # an mtime in the past: no clock tick can hide it
    after = marks_of(start(repo, "a-third-session", monkeypatch, capsys))
    assert after[ITEMS[0]] == "`TTL` is 45 in src/cache.py, not 30"
    assert reads.count == 1


@pytest.mark.skipif(os.name == "nt", reason="Windows keeps no change time (its st_ctime is the creation time)")
def test_an_edit_that_keeps_the_size_and_puts_the_time_back_is_seen(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``touch -r`` after an edit: the size and modification time as the kept verdicts found them,
    not the content; the change time, which no one can set back, tells."""
    _, first = kept_then(repo, monkeypatch, capsys)
    assert first[ITEMS[0]] == ""
    cache = repo / "src" / "cache.py"
    stamp = cache.stat()
    cache.write_text("TTL = 45\n", encoding="utf-8")  # the same size
    os.utime(cache, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (
        marks_of(start(repo, "a-third-session", monkeypatch, capsys))[ITEMS[0]] == "`TTL` is 45 in src/cache.py, not 30"
    )


@pytest.mark.parametrize(
    ("change", "item", "mark"),
    [
        (lambda repo: (repo / "src" / "api.py").unlink(), ITEMS[1], "src/api.py is gone (moved or deleted)"),
        # docs/guide.md did not exist when the item was saved: a folder made since changes nothing
        (lambda repo: (repo / "docs").mkdir(), ITEMS[2], ""),
    ],
    ids=["a named file gone", "a new top folder"],
)
def test_a_named_path_gone_is_seen_and_one_that_never_was_is_no_reason(
    change: Callable[[Path], None],
    item: str,
    mark: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, first = kept_then(repo, monkeypatch, capsys)
    assert first[item] == ""
    change(repo)
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys))[item] == mark


def test_a_hand_edit_of_memory_md_is_seen(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reads, _ = marked_then(repo, monkeypatch, capsys)
    project = project_of(repo)
    memory = Path(project.memory)
    text = memory.read_text(encoding="utf-8")
    stamp = os.stat(memory)
    memory.write_text(text.replace("src/cache.py", "src/cache.pz"), encoding="utf-8")  # same size
    os.utime(memory, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and the same mtime: the text decides
    after = start(repo, "a-third-session", monkeypatch, capsys)
    assert "may be stale" not in str(after["hookSpecificOutput"]["additionalContext"])  # an item it knows nothing of
    assert reads.count == 1


def test_a_new_save_is_seen(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    reads, _ = marked_then(repo, monkeypatch, capsys)
    project = project_of(repo)
    saving.save(project, config.load(project.root), SaveInput(decisions=[ITEMS[0]]), "one-that-was-not-shown-it")
    reads.count = 0
    after = marks_of(start(repo, "a-third-session", monkeypatch, capsys))
    assert after[ITEMS[0]] == ""  # re-confirmed after the change: fresh again
    assert reads.count == 1


def test_a_record_that_changed_without_memory_md_is_seen(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sync or an import can bring another machine's confirmation of an item into the record alone."""
    reads, _ = marked_then(repo, monkeypatch, capsys)
    project = project_of(repo)
    confirmed = {"at": datetime.now().astimezone().isoformat(), "event": "confirmed", "session": "elsewhere"}
    provenance.append(
        project.dir,
        [{**confirmed, "item": key(ITEMS[0]), "text": ITEMS[0]}],
    )
    age(project.provenance, time.time() - 300)  # only the record changed
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys))[ITEMS[0]] == ""
    assert reads.count == 1


def test_a_record_rewritten_within_one_clock_tick_is_never_trusted(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record younger than the clock's granularity could change again with the same size and mtime
    (a coarse file system's tick): verdicts resting on it are not kept."""
    project = saved(repo, monkeypatch, capsys)
    rewrite(repo / "src" / "cache.py", "TTL = 60\n")
    events_file = Path(project.provenance)
    events_file.touch()  # written just now
    first = marks_of(start(repo, NEXT, monkeypatch, capsys))
    assert first[ITEMS[0]] == CHANGED
    assert not os.path.exists(verdicts.cache_file(project))
    stamp = os.stat(events_file)
    text = events_file.read_text(encoding="utf-8")
    assert '"value": "30"' in text
    events_file.write_text(text.replace('"value": "30"', '"value": "60"'), encoding="utf-8")  # same size
    os.utime(events_file, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # same tick
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys))[ITEMS[0]] == ""


@pytest.mark.skipif(os.name == "nt", reason="Windows keeps no change time (its st_ctime is the creation time)")
def test_a_record_edited_by_hand_with_its_size_and_time_kept_is_seen(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reads, _ = marked_then(repo, monkeypatch, capsys)
    events_file = Path(project_of(repo).provenance)
    stamp = os.stat(events_file)
    text = events_file.read_text(encoding="utf-8")
    events_file.write_text(text.replace('"value": "30"', '"value": "60"'), encoding="utf-8")  # same size
    os.utime(events_file, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert marks_of(start(repo, "a-third-session", monkeypatch, capsys))[ITEMS[0]] == ""  # the claim says 60 now
    assert reads.count == 1


def test_a_file_changed_twice_within_one_clock_tick_is_compared_by_content(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = saved(repo, monkeypatch, capsys)
    cache = repo / "src" / "cache.py"
    cache.write_text("TTL = 45\n", encoding="utf-8")  # just now
    assert marks_of(start(repo, NEXT, monkeypatch, capsys))[ITEMS[0]] == "`TTL` is 45 in src/cache.py, not 30"
    assert os.path.exists(verdicts.cache_file(project))
    stamp = os.stat(cache)
    cache.write_text("TTL = 46\n", encoding="utf-8")  # the same size, within the same tick
    os.utime(cache, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (
        marks_of(start(repo, "a-third-session", monkeypatch, capsys))[ITEMS[0]] == "`TTL` is 46 in src/cache.py, not 30"
    )


def test_every_session_sees_the_same_verdicts_the_saving_ones_own_edits_too(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A verdict rests on what the files hold, not on who changed them: a compaction of the saving
    session and a new session see the same marks."""
    saved(repo, monkeypatch, capsys)
    rewrite(repo / "src" / "cache.py", "TTL = 60\n")  # the saving session went on editing
    payload = {"session_id": WORK, "transcript_path": "", "cwd": str(repo), "source": "compact"}
    assert marks_of(run_hook("session-start", payload, monkeypatch, capsys))[ITEMS[0]] == CHANGED
    assert marks_of(start(repo, NEXT, monkeypatch, capsys))[ITEMS[0]] == CHANGED


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="time.tzset is POSIX only")
def test_another_time_zone_changes_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No verdict carries a date: the kept ones hold in any time zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        reads, first = marked_then(repo, monkeypatch, capsys)
        monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: another day
        time.tzset()
        assert marks_of(start(repo, "a-third-session", monkeypatch, capsys)) == first
        assert reads.count == 0
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.needs("git")
def test_another_worktree_of_the_repository_is_checked_against_its_own_files(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Worktrees share one memory, not their files: verdicts kept for one are no answer for another."""
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", ".", cwd=repo)
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "start", cwd=repo)
    project = saved(repo, monkeypatch, capsys)
    linked = repo.parent / "api-feature"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=repo)
    rewrite(linked / "src" / "cache.py", "TTL = 60\n")  # changed in the linked worktree only
    age(linked, time.time() - 600)
    assert project_of(linked).dir == project.dir  # one memory
    assert marks_of(start(repo, NEXT, monkeypatch, capsys))[ITEMS[0]] == ""
    assert os.path.exists(verdicts.cache_file(project))
    payload = {"session_id": "in-the-worktree", "transcript_path": "", "cwd": str(linked), "source": "startup"}
    monkeypatch.chdir(linked)
    after = marks_of(run_hook("session-start", payload, monkeypatch, capsys))
    assert after[ITEMS[0]] == CHANGED


def test_a_file_changed_judges_again_only_the_items_resting_on_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.store import stale

    _, first = marked_then(repo, monkeypatch, capsys)
    judged: list[str] = []
    real = stale.reason

    def counted(history: list[provenance.Event], *args: Any) -> tuple[str, int] | None:
        judged.append(str(history[-1].text) if history else "")
        return real(history, *args)

    monkeypatch.setattr(stale, "reason", counted)
    (repo / "src" / "api.py").unlink()
    after = marks_of(start(repo, "a-third-session", monkeypatch, capsys))
    assert after == {**first, ITEMS[1]: "src/api.py is gone (moved or deleted)"}
    assert judged == [ITEMS[1]]  # the others rest on nothing that changed


def test_a_file_changed_reads_the_record_only_for_the_items_resting_on_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper.memory.items import key

    _, first = marked_then(repo, monkeypatch, capsys)
    asked: list[set[str] | None] = []
    real = provenance.read

    def read(
        folder: str, items: set[str] | None = None, later: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        asked.append(items)
        return real(folder, items, later)

    monkeypatch.setattr(provenance, "read", read)
    (repo / "src" / "api.py").unlink()
    after = marks_of(start(repo, "a-third-session", monkeypatch, capsys))
    assert after == {**first, ITEMS[1]: "src/api.py is gone (moved or deleted)"}
    assert asked == [{key(ITEMS[1])}]


def test_an_item_written_twice_is_judged_again_as_a_full_check_judges_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two items alike are one in the kept verdicts: a partial check then lists memory.md itself."""
    project = saved(repo, monkeypatch, capsys)
    memory = Path(project.memory)
    memory.write_text(memory.read_text(encoding="utf-8").replace(f"- {ITEMS[1]}", f"- {ITEMS[1]}\n- {ITEMS[1]}"))
    age(memory, time.time() - 600)
    start(repo, NEXT, monkeypatch, capsys)  # a full check, kept
    (repo / "src" / "api.py").unlink()
    partial = start(repo, "a-third-session", monkeypatch, capsys)["hookSpecificOutput"]["additionalContext"]
    os.unlink(verdicts.cache_file(project))
    full = start(repo, "a-third-session", monkeypatch, capsys)["hookSpecificOutput"]["additionalContext"]
    assert partial == full and partial.count("src/api.py is gone") == 2


KEYS = ("use redis", 'use "quoted" redis', "café au lait", "use redis for jobs", "ship on fridays", "a\\b path")
AN_EVENT = st.fixed_dictionaries(
    {
        "at": st.sampled_from(("2026-11-20T10:00:00+00:00", "2026-11-21T10:00:00+00:00", "2026-11-22T09:00:00Z")),
        "event": st.sampled_from(("added", "confirmed", "edited", "used", "retired", "session")),
        "item": st.sampled_from(KEYS),
        "session": st.sampled_from(("s1", "s2", "session")),
    },
    optional={"from": st.sampled_from(KEYS), "files": st.lists(st.sampled_from(("a.py", "b.py")), max_size=2)},
)
AS_WRITTEN = st.sampled_from(("keeper", "compact", "unicode"))  # Keeper's own lines, or written by another hand


def written(event: dict[str, Any], how: str) -> str:
    if how == "keeper":
        return json.dumps(dict(sorted(event.items())))
    return json.dumps(event, separators=(",", ":"), ensure_ascii=how == "compact")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(st.tuples(AN_EVENT, AS_WRITTEN), max_size=30), asked=st.sets(st.sampled_from(KEYS)))
def test_the_record_read_for_some_items_tells_of_them_what_the_whole_record_does(
    events: list[tuple[dict[str, Any], str]], asked: set[str], tmp_path: Path
) -> None:
    """A start that judges again only the items resting on a changed file reads only their lines of
    the record (with every session's facts, and the items they were edited from): what it learns of
    them is what the whole record says, whoever wrote its lines."""
    folder = tmp_path / "record"
    folder.mkdir(exist_ok=True)
    Path(provenance.record_file(str(folder))).write_text("".join(written(e, how) + "\n" for e, how in events))
    whole, some = provenance.read(str(folder)), provenance.read(str(folder), asked)
    assert provenance.session_facts(some) == provenance.session_facts(whole)
    histories, theirs = provenance.by_item(whole), provenance.by_item(some)
    assert {k: theirs.get(k) for k in asked} == {k: histories.get(k) for k in asked}
