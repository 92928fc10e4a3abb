"""The hot path stays on the standard library: checked by what a real hook process imported."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from keeper.store import identity, paths
from tests.conftest import REPO
from tests.helpers import shift

HEAVY = {"yaml", "platformdirs", "rapidfuzz", "filelock"}
SLOW_STDLIB = {
    "argparse",
    "typing",
    "dataclasses",
    "inspect",
    "logging",
    "subprocess",
    "pathlib",
    "tempfile",
    "hashlib",
}
PROBE = (
    "import sys\n"
    "from keeper.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write('\\nMODULES ' + repr(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)
# Never on the per-tool-use path: re (and enum, which it brings) cost more than the whole hook.
NOT_PER_TOOL_USE = {"re", "enum", "json", "argparse", "sqlite3", "_sqlite3", "datetime", "functools", "collections"}


def _bare_interpreter_modules() -> set[str]:
    """What Python itself loads here (site, .pth files of editable installs…), which Keeper cannot avoid."""
    code = "import sys; sys.stdout.write(repr(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    return {m.split(".")[0] for m in ast.literal_eval(done.stdout.decode())}


BASELINE = _bare_interpreter_modules()


def loaded_by(args: list[str], stdin: dict, cwd: Path) -> tuple[set[str], dict]:
    """Top-level modules a real ``keeper`` process loaded beyond a bare interpreter, and its reply."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], input=json.dumps(stdin).encode(), capture_output=True, cwd=cwd, check=True
    )
    modules = ast.literal_eval(done.stderr.decode().rsplit("MODULES ", 1)[1])
    return {m.split(".")[0] for m in modules} - BASELINE | {m for m in modules if m.startswith("keeper.")}, json.loads(
        done.stdout
    )


def save_in(project_dir: Path, *flags: str) -> None:
    """Give the project some memory, the way a user would."""
    subprocess.run([sys.executable, "-m", "keeper", "save", *flags], cwd=project_dir, check=True, capture_output=True)


@pytest.mark.parametrize(
    ("event", "fields"),
    [
        ("post-tool-use", {"tool_name": "Bash", "tool_input": {"command": "ls"}}),
        ("user-prompt-submit", {"prompt": "please fix the flaky test"}),
    ],
)
def test_per_call_hooks_import_no_dependency_when_no_save_is_due(project_dir: Path, event: str, fields: dict) -> None:
    loaded, reply = loaded_by(["hook", event], {"session_id": "s1", "cwd": str(project_dir), **fields}, project_dir)
    assert reply == {}
    assert not loaded & HEAVY
    assert not loaded & SLOW_STDLIB


def test_post_tool_use_imports_neither_re_nor_json_nor_anything_it_does_not_use(project_dir: Path) -> None:
    payload = {"session_id": "s1", "cwd": str(project_dir), "tool_name": "Bash", "tool_input": {"command": "ls"}}
    loaded_by(["hook", "post-tool-use"], payload, project_dir)  # the first one makes the state folder
    loaded, reply = loaded_by(["hook", "post-tool-use"], payload, project_dir)
    assert reply == {}
    assert not loaded & NOT_PER_TOOL_USE, loaded & NOT_PER_TOOL_USE
    # keeper.store.fsutil stays: the tally append checks that no link leads out of the store (issue 11)
    unused = {"keeper.store.log", "keeper.store.migrate", "keeper.redact", "keeper.store.sessions"}
    assert not loaded & unused, loaded & unused


def test_a_stop_with_nothing_new_compiles_no_redaction_pattern(project_dir: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "timestamp": "2026-11-22T10:00:00Z", "message": {"content": "fix it"}}) + "\n"
    )
    payload = {
        "session_id": "s1",
        "cwd": str(project_dir),
        "transcript_path": str(transcript),
        "last_assistant_message": "Fixed; the token is sk-ant-abcdefghijklmnopqrstuvwxyz0123",
    }
    first, _ = loaded_by(["hook", "stop"], payload, project_dir)
    again, reply = loaded_by(["hook", "stop"], payload, project_dir)
    assert "keeper.redact" in first  # the first Stop redacts what it records
    assert reply == {}
    assert not again & {"keeper.redact", "re", "enum", "datetime", "keeper.memory.document"}, again


def test_automatic_recall_loads_no_dependency(project_dir: Path) -> None:
    save_in(project_dir, "--summary", "Flaky checkout test fixed by freezing the clock")
    prompt = {
        "session_id": "s1",
        "cwd": str(project_dir),
        "prompt": "the flaky checkout test is back, freezing the clock again?",
    }
    loaded, reply = loaded_by(["hook", "user-prompt-submit"], prompt, project_dir)
    assert "automatic recall" in reply["hookSpecificOutput"]["additionalContext"]
    assert not loaded & HEAVY
    # datetime arrives with sqlite3 itself (its default adapters import it)
    assert not loaded & {"argparse", "typing", "dataclasses", "inspect", "logging", "subprocess", "shutil"}
    # nor what a prompt never needs: the migrations, the save-command check, rules no note's word can meet
    assert not loaded & {"keeper.store.migrate", "keeper.capture", "keeper.capture.shell"}, loaded
    assert "keeper.redact" in loaded and "keeper.secret_rules" not in loaded  # the note holds no rule's keyword


def test_a_config_file_is_parsed_once_then_read_from_cache(project_dir: Path) -> None:
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("save_every: 40\n")
    payload = {"session_id": "s1", "cwd": str(project_dir), "tool_name": "Read", "tool_input": {}}
    first, _ = loaded_by(["hook", "post-tool-use"], payload, project_dir)
    second, _ = loaded_by(["hook", "post-tool-use"], payload, project_dir)
    assert "yaml" in first
    assert not second & HEAVY


def test_session_start_with_memory_needs_no_dependency(project_dir: Path) -> None:
    save_in(project_dir, "--decision", "Use FTS5")
    loaded, reply = loaded_by(
        ["hook", "session-start"], {"session_id": "s1", "cwd": str(project_dir), "source": "startup"}, project_dir
    )
    assert "Use FTS5" in reply["hookSpecificOutput"]["additionalContext"]
    assert not loaded & HEAVY


def _bare_start(project_dir: Path) -> tuple[set[str], str]:
    """A SessionStart run as the plugin's launcher runs it (no site: nothing a .pth file imports hides
    what Keeper loads): the modules it loaded and the context it gave."""
    payload = json.dumps({"session_id": "s1", "cwd": str(project_dir), "source": "startup"}).encode()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, "hook", "session-start"],
        input=payload,
        capture_output=True,
        cwd=project_dir,
        env=env,
        check=True,
    )
    modules = set(ast.literal_eval(done.stderr.decode().rsplit("MODULES ", 1)[1])) - BARE  # what Keeper loaded
    return modules, json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_session_start_judges_claims_without_functools_or_collections(project_dir: Path) -> None:
    """As the plugin's launcher runs it (no site: nothing a .pth file imports hides what Keeper loads),
    a start that judges an item's claims loads neither ``functools`` nor ``collections`` (~3 ms)."""
    save_in(project_dir, "--decision", "Use `parse_order` in src/app.py")
    modules, context = _bare_start(project_dir)
    assert "parse_order" in context
    assert "keeper.store.stale" in modules
    assert not modules & {"functools", "collections", "re", "json", "typing"}, modules


def test_a_start_that_loads_by_evidence_reads_the_tally_alone_with_the_standard_library(project_dir: Path) -> None:
    """A start that leaves an item to recall reads the machine's tally (``store.loads``): no receipts
    module, no provenance record, no json, re, functools or collections (run as the launcher does)."""
    from keeper.memory.items import key
    from keeper.store import identity, loads

    save_in(
        project_dir, "--decision", "Use `parse_order` in src/app.py", "--decision", "Ship on Fridays via deploy_bot"
    )
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    for _ in range(loads.IDLE_AFTER):
        loads.note(project, shown=[key("Ship on Fridays via deploy_bot")])
    modules, context = _bare_start(project_dir)
    assert "parse_order" in context and "deploy_bot" not in context and "Left to recall: 1 item" in context
    assert "keeper.store.loads" in modules
    assert not modules & {"functools", "collections", "re", "json", "typing", "keeper.capture.receipts"}, modules


def test_the_save_due_path_may_load_what_it_needs(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEPER_SAVE_EVERY", "1")
    loaded, reply = loaded_by(
        ["hook", "post-tool-use"], {"session_id": "s1", "cwd": str(project_dir), "tool_name": "Read"}, project_dir
    )
    assert "keeper save" in reply["hookSpecificOutput"]["additionalContext"]
    assert not loaded & {"rapidfuzz", "filelock"}


def test_session_start_on_a_store_in_this_format_imports_neither_json_nor_shutil(project_dir: Path) -> None:
    """The migrations' machinery (json, shutil: ~8 ms) loads only when a migration has to run."""
    save_in(project_dir, "--decision", "Use Redis for the job queue")
    payload = {"session_id": "s1", "cwd": str(project_dir), "source": "startup"}
    loaded, reply = loaded_by(["hook", "session-start"], payload, project_dir)
    assert "Use Redis" in json.dumps(reply)
    assert not loaded & {"json", "shutil"}


def test_session_start_loads_nothing_this_project_does_not_use(project_dir: Path) -> None:
    """No remote recorded: nothing of sync; no team.md: nothing of recall; the shown items' ids come
    from the SHA-256 the start loads anyway, not from zlib."""
    save_in(project_dir, "--decision", "Prices live in src/cache.py")
    payload = {"session_id": "s1", "cwd": str(project_dir), "source": "startup"}
    loaded, reply = loaded_by(["hook", "session-start"], payload, project_dir)
    assert "Prices live in src/cache.py" in json.dumps(reply)
    assert "keeper.store.provenance" in loaded  # the stale check ran
    assert not loaded & {"zlib", "keeper.sync", "keeper.sync.background", "keeper.recall", "keeper.recall.sources"}


def _as_the_program(cwd: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``keeper ARGS`` as the launcher runs it (``main()``, the program's own arguments), telling on
    stderr whether the cycle collector ran once recall's search was loaded and whether exit
    handlers ran (the interpreter's teardown)."""
    import filelock

    folders = [str(Path(__file__).resolve().parent.parent), str(Path(filelock.__file__).parent.parent)]
    code = (
        "import atexit, gc, os, sys\n"
        "sys.path.extend(sys.argv.pop(1).split('\\n'))\n"
        "from keeper.cli import main\n"
        "def seen(phase, info):\n"
        "    if phase == 'start' and 'keeper.recall.search' in sys.modules:\n"
        "        os.write(2, b'COLLECTED\\n')\n"
        "gc.callbacks.append(seen)\n"
        "atexit.register(lambda: os.write(2, b'TORN DOWN\\n'))\n"
        "raise SystemExit(main())\n"
    )
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, "\n".join(folders), *args],
        capture_output=True,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
        check=False,
    )


def test_a_recall_run_as_the_program_collects_no_cycles_and_skips_the_teardown(remembered: dict) -> None:
    """A plain recall, which only reads: no pass of the cycle collector while it searches, and no
    interpreter teardown after (no exit handler runs), yet its output is whole and its exit code kept."""
    done = _as_the_program(remembered["cwd"], "recall", "flaky", "clock")
    out = done.stdout.decode()
    assert done.returncode == 0
    assert "freezing the clock" in out and out.endswith(("`keeper transcript <path>`.\n", "<path>`.\r\n"))  # whole
    assert b"COLLECTED" not in done.stderr and b"TORN DOWN" not in done.stderr, done.stderr


def test_a_command_that_writes_memory_ends_as_python_ends(remembered: dict) -> None:
    """Only a recall skips the teardown: a save ends as Python ends, exit handlers and final flushes
    included, whatever buffer a later change leaves open."""
    done = _as_the_program(remembered["cwd"], "save", "--decision", "Invoices round half up")
    assert done.returncode == 0, done.stderr
    assert b"TORN DOWN" in done.stderr, done.stderr


def test_a_session_start_on_a_store_in_this_format_loads_neither_the_migrations_nor_the_save_check(
    project_dir: Path,
) -> None:
    """format.json is read with the standard library: ``keeper.store.migrate`` loads only for a store
    that is behind; the save-command check only for a Bash tool use."""
    save_in(project_dir, "--decision", "Prices live in src/cache.py")
    payload = {"session_id": "s1", "cwd": str(project_dir), "source": "startup"}
    loaded, reply = loaded_by(["hook", "session-start"], payload, project_dir)
    assert "Prices live in src/cache.py" in json.dumps(reply)
    assert not loaded & {"keeper.store.migrate", "keeper.capture.shell"}, loaded


def test_a_prompt_that_recalls_nothing_builds_no_context_and_redacts_nothing(project_dir: Path) -> None:
    save_in(project_dir, "--summary", "Flaky checkout test fixed by freezing the clock")
    prompt = {"session_id": "s1", "cwd": str(project_dir), "prompt": "rename the invoice exporter module please"}
    loaded, reply = loaded_by(["hook", "user-prompt-submit"], prompt, project_dir)
    assert reply == {}
    assert "keeper.recall.search" in loaded  # automatic recall ran
    assert not loaded & {"keeper.hooks.context", "keeper.redact", "keeper.secret_rules"}, loaded


# -- Budgets (issue 43, benchmarks/README.md "Budgets"): what each hook may import and read ------------
# Each hook runs as the plugin's launcher runs it (bin/keeper: -I -S, the environment's folder put on
# sys.path), under an audit hook that notes every file it opens and every folder it lists in the
# test's folders (the store, the project, the transcript). A hook that imports a module beyond its
# budget, or reads more, fails here: the budget is what the hook's time is made of.
LAUNCHED = (
    "import sys\n"
    "seen = ([], [])\n"
    "def audit(event, args, where=sys.argv.pop(1), seen=seen):\n"
    "    path = args[0] if event in ('open', 'os.listdir', 'os.scandir') else None\n"
    "    if isinstance(path, str) and path.startswith(where):\n"
    "        seen[event != 'open'].append(path)\n"
    "sys.addaudithook(audit)\n"
    "sys.path.extend(sys.argv.pop(1).split('\\n'))\n"
    "import os\n"
    "from keeper.hooks.entry import main\n"
    "def report(code, end=os._exit):\n"  # the hook ends its process at once (console.end): the report goes first
    "    modules = sorted(sys.modules)\n"
    "    import gc, io\n"  # a file a hook left open would lose what it holds: its process ends without teardown
    "    left = [o.name for o in gc.get_objects() if isinstance(o, io.IOBase) and not o.closed\n"
    "            and isinstance(getattr(o, 'name', None), str) and not o.name.startswith('<')]\n"
    "    sys.stderr.write('\\nMODULES ' + repr((modules, *seen, left)))\n"
    "    sys.stderr.flush()\n"
    "    end(code)\n"
    "os._exit = report\n"
    "main(sys.argv[1:])\n"
)
BARE = set(
    ast.literal_eval(
        subprocess.run(
            [sys.executable, "-I", "-S", "-c", "import sys; print(sorted(sys.modules))"],
            capture_output=True,
            check=True,
        ).stdout.decode()
    )
)


class Spent:
    """What one hook call imported beyond a bare interpreter, the files it opened, the folders it listed."""

    def __init__(self, modules: set[str], opened: list[str], listed: list[str], reply: dict) -> None:
        self.modules, self.opened, self.listed, self.reply = modules, opened, listed, reply


def launched(event: str, payload: dict, where: Path) -> Spent:
    """One hook call as bin/keeper makes it, with what it imported and read under ``where``: this
    checkout, then the site-packages folder of Keeper's dependencies, on sys.path."""
    import filelock

    folders = [str(Path(__file__).resolve().parent.parent), str(Path(filelock.__file__).parent.parent)]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", LAUNCHED, str(where), "\n".join(folders), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=payload.get("cwd"),
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
        check=True,
    )
    modules, opened, listed, left_open = ast.literal_eval(done.stderr.decode().rsplit("MODULES ", 1)[1])
    assert not left_open, f"{event} left files open, which its process's end (console.end) would not flush: {left_open}"
    return Spent(set(modules) - BARE, opened, listed, json.loads(done.stdout))


# Every hook: the entry, the project's resolution and its settings, the counters.
EVERY_HOOK = {
    *("__future__", "_collections_abc", "_json", "_sha256", "_stat", "genericpath", "os", "os.path"),
    "posixpath",
    *("stat", "keeper", "keeper.console", "keeper.errors", "keeper.hooks", "keeper.hooks.entry", "keeper.jsonio"),
    "keeper.records",
    *("keeper.store", "keeper.store.config", "keeper.store.counters", "keeper.store.fsutil", "keeper.store.identity"),
    *("keeper.store.paths", "keeper.store.resolve"),
}
RECALL = {  # the index and ranking: sqlite3's C module, without the functools it would bring (recall.index)
    *("_functools", "_sqlite3", "math", "keeper.markdown", "keeper.recall.chunks", "keeper.recall.index"),
    *("keeper.recall.search", "keeper.recall.snapshot", "keeper.store.sessions"),
}
SNAPSHOT = {  # the index's snapshot, read with marshal (keeper.recall.snapshot), and ranking: no SQLite
    *("math", "keeper.markdown", "keeper.recall.chunks", "keeper.recall.snapshot"),
    "keeper.recall.search",
    "keeper.store.sessions",
}
GATE = {  # the prompt's words, and whether the memory holds two of them (keeper.recall.gate)
    *("keeper.hooks.prompts", "keeper.recall", "keeper.recall.gate", "keeper.recall.tokens", "keeper.recall.dates"),
    *("keeper.recall.stemmer", "keeper.recall.sources", "keeper.store.repo"),
}
KEPT = {"keeper.hooks.startcache", "keeper.store.markers"}  # the kept answer
BUDGETS = {  # (modules beyond a bare interpreter, files opened, folders listed)
    "post-tool-use": (EVERY_HOOK | {"fcntl", "keeper.hooks.allowance"}, 2, 0),
    "stop, nothing new": (  # the session's state names its session file: another session's write is no change
        EVERY_HOOK | {"keeper.hooks.idle", "keeper.plugin", "keeper.plugin.agents"},
        4,
        0,
    ),
    "user-prompt-submit, nothing to recall": (EVERY_HOOK | GATE, 3, 0),
    "user-prompt-submit, recalled": (
        EVERY_HOOK | GATE | RECALL | {"keeper.redact", "keeper.text"},  # not the session start's context builder
        11,  # with the session's record of the recall hits it was given (``.recalled``, for use receipts);
        # never memory.md, given at the start: its sections are left out before their text is read; the
        # index's snapshot looked for, then written (through its temporary file) for the next prompt
        1 + (os.name == "nt"),  # under Wine the index lists Claude Code's memory folder too (its time moves)
    ),
    "user-prompt-submit, recalled from the snapshot": (
        EVERY_HOOK | GATE | SNAPSHOT | {"keeper.redact", "keeper.text"},
        8,  # the snapshot instead of the index; never memory.md
        1 + (os.name == "nt"),
    ),
    "session-start": (
        EVERY_HOOK
        | {"keeper.capture", "keeper.capture.record", "keeper.hooks.briefing", "keeper.hooks.context"}
        | {"keeper.hooks.marks", "keeper.markdown", "keeper.memory", "keeper.memory.document", "keeper.memory.items"}
        | {"keeper.memory.savekeys", "keeper.store.claims", "keeper.store.log", "keeper.store.provenance"}
        | {"keeper.store.repo", "keeper.store.sessions", "keeper.store.stale", "keeper.store.verdicts", "keeper.text"}
        | {"keeper.store.loads"}  # the tally of what sessions did with what they were shown
        | {"keeper.hooks.clock"}
        | {"keeper.redact"}  # the context redacted, with the user's patterns (its rules only where a keyword is)
        | {"gc"}  # turned off while the answer is worked out (startcache.Uncollected)
        | KEPT,
        16,  # loads.cache, the kept answer and verdicts (each kept through a temporary file), the newest list twice
        1,
    ),
    "session-start, kept answer": (EVERY_HOOK | KEPT, 5, 1),  # the format, its marks, the kept answer, the stats
    "session-start, kept answer, a session with its record": (EVERY_HOOK | KEPT | {"keeper.store.sessions"}, 6, 1),
    "session-start, kept answer judged again": (  # a file a claim names changed: the stale check alone
        EVERY_HOOK
        | KEPT
        | {"gc"}
        | {"keeper.store.claims", "keeper.store.provenance", "keeper.store.stale", "keeper.store.verdicts"}
        | {"keeper.text"},
        12,  # and memory.md, the record, the edited file (compared, then judged), the verdicts and answer kept anew
        1,
    ),
    "session-start, kept answer judged again, another session open": (  # told active without its record's code
        EVERY_HOOK
        | KEPT
        | {"gc"}
        | {"keeper.store.claims", "keeper.store.provenance", "keeper.store.stale", "keeper.store.verdicts"}
        | {"keeper.text", "keeper.store.sessions"},
        14,  # and the other session's state and start marker, naming its transcript (whose time tells it is active)
        1,
    ),
}


@pytest.fixture
def remembered(project_dir: Path, tmp_path: Path) -> dict:
    """A project with memory (a decision naming code, a session's summary) and a session under way:
    the payload fields every hook call below shares."""
    save_in(project_dir, "--summary", "Flaky checkout test fixed by freezing the clock")
    save_in(project_dir, "--decision", "Use `parse_order` in src/app.py")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "timestamp": "2026-11-22T10:00:00Z", "message": {}}) + "\n")
    return {"session_id": "s1", "cwd": str(project_dir), "transcript_path": str(transcript)}


# What the same work loads under another interpreter: 3.12+ names the SHA-256 module _sha2; on
# Windows, os and the locks bring the C runtime's and errno's modules, and recall collections.abc.
ELSEWHERE = {"_sha2"} | (
    {"errno", "msvcrt", "nt", "ntpath", "_winapi", "collections.abc"} if os.name == "nt" else set()
)


def within(name: str, spent: Spent) -> None:
    modules, opened, listed = BUDGETS[name]
    modules = modules | ELSEWHERE
    assert not spent.modules - modules, f"{name} imported beyond its budget: {sorted(spent.modules - modules)}"
    assert len(spent.opened) <= opened, f"{name} opened {[os.path.basename(p) for p in spent.opened]}, budget {opened}"
    assert len(spent.listed) <= listed, f"{name} listed {spent.listed}, budget {listed}"


def test_post_tool_use_stays_within_its_budget(remembered: dict, tmp_path: Path) -> None:
    tool = {**remembered, "tool_name": "Read", "tool_input": {}}
    launched("post-tool-use", tool, tmp_path)  # the first one makes the session's state
    spent = launched("post-tool-use", tool, tmp_path)
    assert spent.reply == {}
    within("post-tool-use", spent)


def test_a_stop_with_nothing_new_stays_within_its_budget(remembered: dict, tmp_path: Path) -> None:
    """The first Stop records; the second finds nothing to write and keeps its inputs' key; from the
    third on, the key alone answers: none of the record's machinery loads (keeper.hooks.idle)."""
    stop = {**remembered, "last_assistant_message": "Fixed; the token is sk-ant-abcdefghijklmnopqrstuvwxyz0123"}
    first, second, spent = (launched("stop", stop, tmp_path) for _ in range(3))
    assert "keeper.capture.record" in first.modules and "keeper.capture.record" in second.modules
    assert spent.reply == {}
    within("stop, nothing new", spent)


def test_a_prompt_with_nothing_to_recall_stays_within_its_budget(remembered: dict, tmp_path: Path) -> None:
    launched("user-prompt-submit", {**remembered, "prompt": "what did we do about the clock?"}, tmp_path)  # indexes
    spent = launched(
        "user-prompt-submit", {**remembered, "prompt": "rename the invoice exporter module please"}, tmp_path
    )
    assert spent.reply == {}
    within("user-prompt-submit, nothing to recall", spent)


def test_a_prompt_that_recalls_after_a_stop_ranks_without_sqlite(remembered: dict, tmp_path: Path) -> None:
    """The Stop takes its rewritten session file into the index and leaves the index's snapshot, from
    which the next prompt ranks: no _sqlite3, no keeper.recall.index (keeper.recall.snapshot)."""
    prompt = "the flaky checkout test is back, freezing the clock again?"
    launched("user-prompt-submit", {**remembered, "prompt": "what did we do about the clock?"}, tmp_path)  # indexes
    for turn in range(2):
        launched("stop", {**remembered, "last_assistant_message": f"Reply {turn} done."}, tmp_path)
        spent = launched("user-prompt-submit", {**remembered, "prompt": prompt}, tmp_path)
        assert "freezing the clock" in spent.reply["hookSpecificOutput"]["additionalContext"]
        within("user-prompt-submit, recalled from the snapshot", spent)


def test_a_prompt_that_recalls_through_the_index_stays_within_its_budget(
    remembered: dict, project_dir: Path, tmp_path: Path
) -> None:
    prompt = "the flaky checkout test is back, freezing the clock again?"
    launched("user-prompt-submit", {**remembered, "prompt": "what did we do about the clock?"}, tmp_path)  # indexes
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    os.remove(os.path.join(project.state, paths.INDEX_SNAPSHOT))  # as a store past its size keeps none
    spent = launched("user-prompt-submit", {**remembered, "prompt": prompt}, tmp_path)
    assert "freezing the clock" in spent.reply["hookSpecificOutput"]["additionalContext"]
    within("user-prompt-submit, recalled", spent)


def test_the_index_loads_sqlite_without_functools_and_still_caches_statements() -> None:
    """``_sqlite3`` takes ``functools.lru_cache`` at import (3.11+) for its statement cache; the index
    gives it a stand-in made by the same C wrapper, for that import only: statements are cached and
    evicted as before, and whoever imports functools later gets the real module."""
    code = (
        "import sys\n"
        "sys.path.append(sys.argv[1])\n"
        "from keeper.recall import index\n"
        "before = 'functools' in sys.modules\n"
        "con = index._sqlite_connect(':memory:')\n"
        "sql = [f'SELECT {n}, ?' for n in range(300)] * 2  # more than the cache holds (128), twice\n"
        "same = all(con.execute(q, (q,)).fetchone() == (n % 300, q) for n, q in enumerate(sql))\n"
        "import functools\n"
        "print(before, same, hasattr(functools, 'reduce'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(REPO)], capture_output=True, check=True, text=True
    )
    assert done.stdout.split() == ["False", "True", "True"], done.stderr


def test_session_start_stays_within_its_budget(remembered: dict, tmp_path: Path) -> None:
    start = {**remembered, "source": "startup"}
    launched("session-start", start, tmp_path)  # the first start of a session marks it, and judges claims
    spent = launched("session-start", start, tmp_path)
    assert "parse_order" in spent.reply["hookSpecificOutput"]["additionalContext"]
    within("session-start", spent)


def test_a_session_start_with_its_answer_kept_stays_within_its_budget(remembered: dict, tmp_path: Path) -> None:
    """Nothing changed since the last start: its answer is given as it was (``keeper.hooks.startcache``),
    without the context builder, memory's parser or the stale check."""
    start = {**remembered, "source": "startup"}
    launched("session-start", start, tmp_path)
    shift([tmp_path], 3600)  # an hour on: no file changed within a tick of the clock
    time.sleep(0.15)
    worked_out = launched("session-start", start, tmp_path)
    spent = launched("session-start", {**start, "source": "clear"}, tmp_path)
    assert spent.reply == worked_out.reply and "parse_order" in spent.reply["hookSpecificOutput"]["additionalContext"]
    within("session-start, kept answer", spent)


def test_a_kept_answer_for_a_session_with_its_record_loads_no_markdown(remembered: dict, tmp_path: Path) -> None:
    """A resumed session has its record (``state/sessions/<id>.json``): the kept answer's key names
    its session file, read from the record, with none of the session file's markdown machinery."""
    launched("stop", {**remembered, "last_assistant_message": "Done."}, tmp_path)
    start = {**remembered, "source": "startup"}
    launched("session-start", start, tmp_path)
    shift([tmp_path], 3600)
    time.sleep(0.15)
    worked_out = launched("session-start", start, tmp_path)
    spent = launched("session-start", {**start, "source": "resume"}, tmp_path)
    assert spent.reply == worked_out.reply
    within("session-start, kept answer, a session with its record", spent)


@pytest.mark.parametrize("other", [False, True])
def test_a_session_start_after_an_edit_that_changes_no_verdict_stays_within_its_budget(
    other: bool, remembered: dict, tmp_path: Path, project_dir: Path
) -> None:
    """A file a claim names edited, its claims holding still: the stale check alone judges again,
    and the kept answer is given without the context builder, memory's parser or the briefing;
    with another session open and active, without the session record's code (issue 43)."""
    (project_dir / "src").mkdir()
    (project_dir / "src" / "app.py").write_text("def parse_order():\n    pass\n", encoding="utf-8")
    save_in(project_dir, "--decision", "Use `parse_order` in src/app.py")  # its claims noted with the file there
    start = {**remembered, "source": "startup"}
    if other:  # started, never ended, its transcript written just now
        launched("session-start", {**start, "session_id": "s0"}, tmp_path)
    launched("session-start", start, tmp_path)
    shift([tmp_path], 3600)
    Path(remembered["transcript_path"]).touch()  # the other session active lately
    time.sleep(0.15)
    kept = launched("session-start", start, tmp_path)
    with open(project_dir / "src" / "app.py", "a", encoding="utf-8") as fh:
        fh.write("# reviewed\n")
    spent = launched("session-start", start, tmp_path)
    assert spent.reply == kept.reply
    within("session-start, kept answer judged again" + (", another session open" if other else ""), spent)


CONSOLE = (  # the console script an installer wrote (pip, uv), run as its own process runs it
    "import os, sys\n"
    "def report():\n"
    "    sys.stderr.write('\\nMODULES ' + repr(sorted(sys.modules)))\n"
    "    sys.stderr.flush()\n"
    "end = os._exit  # a hook ends its process at once (console.end): the report goes first\n"
    "os._exit = lambda code: (report(), end(code))\n"
    "path = sys.argv.pop(1)\n"
    "sys.argv[0] = path\n"
    "with open(path, encoding='utf-8') as fh:\n"
    "    source = fh.read()\n"
    "if sys.argv[1:] == ['--template']:  # only the installer's own lines: what Keeper cannot change\n"
    "    source = ''.join(line for line in source.splitlines(True) if line.startswith('import '))\n"
    "try:\n"
    "    exec(compile(source, path, 'exec'), {'__name__': '__main__'})\n"
    "except SystemExit:\n"
    "    pass\n"
    "report()\n"
)


def test_the_console_scripts_entry_point_is_the_hook_entrys() -> None:
    """pip writes the console script from this line: a hook through it never loads ``keeper.cli``."""
    scripts = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("[project.scripts]", 1)[1]
    assert scripts.split("\n")[1].startswith('keeper = "keeper.__main__:command"')


@pytest.mark.skipif(os.name == "nt", reason="a console script is an .exe on Windows")
def test_the_console_script_starts_no_more_than_the_launchers_python(remembered: dict, tmp_path: Path) -> None:
    """The pip route: beyond what the installer's script itself imports (pip's imports ``re``) and
    ``site``, a hook through the console script loads what the launcher's Python loads and its entry
    point's small module (``keeper.__main__``), never the command line's parser (``keeper.cli``)."""
    script = Path(sys.executable).parent / "keeper"
    if not script.is_file():
        pytest.skip("Keeper is not installed with a console script in this environment")
    if "from keeper.__main__ import command" not in script.read_text(encoding="utf-8"):
        pytest.skip("the console script predates its entry point (keeper.__main__:command): reinstall Keeper")
    tool = {**remembered, "tool_name": "Read", "tool_input": {}}
    launched("post-tool-use", tool, tmp_path)
    launcher = launched("post-tool-use", tool, tmp_path).modules

    def console(*args: str) -> set[str]:
        done = subprocess.run(
            [sys.executable, "-c", CONSOLE, str(script), *args],
            input=json.dumps(tool).encode(),
            capture_output=True,
            cwd=remembered["cwd"],
            check=True,
        )
        return set(ast.literal_eval(done.stderr.decode().rsplit("MODULES ", 1)[1]))

    extra = console("hook", "post-tool-use") - console("--template")
    assert extra - launcher <= {"keeper.__main__"}, sorted(extra - launcher)


PROBED = (  # stands in for the environment's Python: reports what a run as the launcher's (-I -S -c) loaded
    '#!/bin/sh\n[ "$1 $2 $3" = "-I -S -c" ] || exec "{python}" "$@"\ncode=$4; shift 4\n'
    'exec "{python}" -I -S -c "import os, sys\n'
    "end = os._exit  # a hook ends its process at once (console.end): the report goes first\n"
    "os._exit = lambda code: (sys.stderr.write('\\nMODULES ' + repr(sorted(sys.modules))), end(code))\n"
    '$code" "$@"\n'
)


@pytest.mark.slow
@pytest.mark.needs("pip")
@pytest.mark.skipif(
    os.name == "nt", reason="bin/keeper is the POSIX launcher (keeper.exe: tests/test_windows_launcher.py)"
)
def test_a_hook_through_the_plugin_and_a_pip_installed_keeper_loads_what_the_launchers_python_loads(
    remembered: dict, tmp_path: Path
) -> None:
    """The pip route as the agents run it: the plugin's launcher, with no environment of its own, finds a
    ``keeper`` pip installed on PATH and runs the hook on that environment's Python as it runs its own
    (-I -S): neither pip's ``import re`` nor ``site``, nor anything the launcher's Python does not load."""
    from tests.releases import pip_installed

    venv = pip_installed(tmp_path / "pip")
    script = venv / "bin" / "keeper"
    probe = venv / "bin" / "python-probed"
    probe.write_text(PROBED.format(python=venv / "bin" / "python"), encoding="utf-8")
    probe.chmod(0o755)
    script.write_text(f"#!{probe}\n" + script.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    tool = {**remembered, "tool_name": "Read", "tool_input": {}}
    launched("post-tool-use", tool, tmp_path)
    launcher = launched("post-tool-use", tool, tmp_path).modules
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "PYTHON"))}
    done = subprocess.run(
        [str(REPO / "bin" / "keeper"), "hook", "post-tool-use"],
        input=json.dumps(tool).encode(),
        capture_output=True,
        cwd=remembered["cwd"],
        env={**env, "PATH": f"{script.parent}:/usr/bin:/bin"},
        check=True,
    )
    assert json.loads(done.stdout) == {}
    assert b"MODULES " in done.stderr, f"the launcher ran pip's script: {done.stderr[-600:]!r}"
    modules = set(ast.literal_eval(done.stderr.decode().rsplit("MODULES ", 1)[1])) - BARE
    assert modules == launcher, (sorted(modules - launcher), sorted(launcher - modules))


def test_a_recall_from_the_command_line_loads_neither_importlib_nor_the_prompts_gate(
    remembered: dict, tmp_path: Path
) -> None:
    """``keeper recall`` as the launcher runs it (-I -S): its command module comes by ``__import__``
    (``importlib`` would bring ``warnings``), the prompt's gate is automatic recall's alone, and a
    store in this format is not migrated (format.json read with the standard library)."""
    import filelock

    folders = [str(Path(__file__).resolve().parent.parent), str(Path(filelock.__file__).parent.parent)]
    code = (
        "import sys\n"
        "sys.path.extend(sys.argv.pop(1).split('\\n'))\n"
        "from keeper.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "sys.stderr.write('\\nMODULES ' + repr(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, "\n".join(folders), "recall", "flaky", "clock"],
        capture_output=True,
        cwd=remembered["cwd"],
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
        check=True,
    )
    modules = set(ast.literal_eval(done.stderr.decode().rsplit("MODULES ", 1)[1])) - BARE  # what Keeper loaded
    assert "freezing the clock" in done.stdout.decode()
    unwanted = {"importlib", "warnings", "keeper.recall.gate", "keeper.store.migrate"}
    assert not modules & unwanted, sorted(modules & unwanted)
