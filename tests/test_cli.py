"""The command line, in-process through ``main([...])`` and, where it matters, as a real process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from keeper import __version__
from keeper.cli import main
from keeper.store import identity


def cli(
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    stdin: str | None = None,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        fake = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", fake)
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def memory_file(project: Path) -> Path:
    return Path(identity.make_project(identity.find_project_root(str(project))).memory)


def test_save_from_yaml_on_stdin_says_what_changed(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_text = "summary: Added retries\ndecisions:\n  - Retry HTTP calls 3 times with jitter\nissues:\n  - Timeouts on /export\n"
    code, out, _ = cli(["save"], capsys, yaml_text, monkeypatch)
    assert code == 0
    assert "+ 1 decision: Retry HTTP calls 3 times with jitter" in out and "+ 1 issue: Timeouts on /export" in out
    assert "- Retry HTTP calls 3 times with jitter (" in memory_file(project_dir).read_text()


def test_save_from_json_and_from_flags(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, _ = cli(
        ["save"], capsys, json.dumps({"decisions": ["From JSON"], "state": "line one\nline two"}), monkeypatch
    )
    assert code == 0
    code, out, _ = cli(["save", "--decision", "From flags", "--resolved", "nothing", "--json"], capsys)
    result = json.loads(out)
    assert result["added_decisions"] == ["From flags"] and result["unmatched"] == ["nothing"]
    text = memory_file(project_dir).read_text()
    assert "- From JSON (" in text and "- line one\n  line two\n" in text and "- From flags (" in text


def test_save_with_nothing_to_save_explains_what_to_give(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = cli(["save"], capsys, "", monkeypatch)
    assert code == 1 and err.startswith("keeper: error: nothing to save") and "--summary" in err


@pytest.mark.parametrize(
    "text",
    ["{bad json", '{"summary": "x",}', "  {summary: unquoted}\n", '["a", "b"]', "[]", '[{"summary": "x"}]'],
    ids=["broken", "trailing-comma", "yaml-in-braces", "list", "empty-list", "list-of-object"],
)
def test_a_save_meant_as_json_that_is_no_json_object_is_refused_and_nothing_stored(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    code, out, err = cli(["save"], capsys, text, monkeypatch)
    assert code == 1 and out == ""
    assert err.startswith("keeper: error: this save's input ") and "nothing was saved" in err and '{"summary"' in err
    assert not memory_file(project_dir).exists()
    sessions = memory_file(project_dir).parent / "sessions"
    assert not sessions.exists() or not any(sessions.iterdir())


@pytest.mark.parametrize(
    ("text", "summary"),
    [
        ("[WIP] fixed the login form", "[WIP] fixed the login form"),
        ("{a\nsummary: {braces} are fine\n", "{braces} are fine"),
    ],
)
def test_text_that_only_looks_like_json_is_still_saved(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, text: str, summary: str
) -> None:
    code, _, _ = cli(["save"], capsys, text, monkeypatch)
    assert code == 0 and summary in memory_file(project_dir).read_text()


def test_counts_read_in_the_right_number(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli(["save", "--decision", "Ship CSV first", "--issue", "PDF later"], capsys)
    assert code == 0 and "+ 1 decision: Ship CSV first" in out and "+ 1 issue: PDF later" in out
    code, out, _ = cli(["status"], capsys)
    assert "1 decision, 1 open issue," in out and "(s)" not in out
    code, out, _ = cli(["save", "--decision", "A", "--decision", "B"], capsys)
    assert "+ 2 decisions: A; B" in out
    code, out, _ = cli(["status"], capsys)
    assert "3 decisions, 1 open issue," in out


def test_save_redacts_secrets_before_they_reach_disk(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "ghp_" + "a1B2" * 9
    cli(
        ["save"],
        capsys,
        f"summary: rotated the deploy token {secret}\ndecisions:\n  - DB url is postgres://app:hunter2pass@db/prod\n",
        monkeypatch,
    )
    store_text = "".join(p.read_text() for p in Path(os.environ["KEEPER_HOME"]).rglob("*.md"))
    assert secret not in store_text and "hunter2pass" not in store_text
    assert "[REDACTED:github-token]" in store_text and "postgres://app:[REDACTED:url-password]@db/prod" in store_text


def test_recall_json_has_the_contract_fields(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli(["save", "--decision", "Invoices are rendered with WeasyPrint"], capsys)
    code, out, _ = cli(["recall", "weasyprnt", "invoices", "--json"], capsys)
    results = json.loads(out)
    assert code == 0 and results
    first = results[0]
    assert {"path", "heading", "date", "score", "snippet", "id"} <= set(first)
    assert os.path.isabs(first["path"]) and "WeasyPrint" in first["snippet"]
    code, out, _ = cli(["recall", "kubernetes", "--json"], capsys)
    assert json.loads(out) == []


def test_a_recall_called_in_process_leaves_the_cycle_collector_as_it_was(
    project_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain recall pauses the cycle collector while it runs; a caller of ``main`` gets it back on."""
    import gc

    cli(["save", "--decision", "Invoices are rendered with WeasyPrint"], capsys)
    assert cli(["recall", "invoices"], capsys)[0] == 0 and gc.isenabled()


def test_status_reports_counter_files_and_locations(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli(["save", "--decision", "One", "--issue", "Two"], capsys)
    code, out, _ = cli(["status", "--json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert data["memory"]["decisions"] == 1 and data["memory"]["issues"] == 1
    assert data["sessions"]["count"] == 1 and data["counter"]["save_every"] == 15
    assert data["last_save"] and data["project"]["name"] == "api"
    code, out, _ = cli(["status"], capsys)
    assert "memory.md" in out and "1 decision, 1 open issue" in out


def test_clear_refuses_without_yes_when_not_on_a_terminal(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(["save", "--decision", "Precious"], capsys)
    code, _, err = cli(["clear", "all"], capsys, "", monkeypatch)
    assert code == 1 and "add --yes" in err and "nothing was removed" in err
    assert memory_file(project_dir).exists()


def test_clear_all_then_restore_brings_everything_back(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli(["save", "--decision", "Precious", "--summary", "session one"], capsys)
    before = memory_file(project_dir).read_bytes()
    code, out, _ = cli(["clear", "all", "--yes"], capsys)
    assert code == 0 and "Undo with: keeper restore" in out and not memory_file(project_dir).exists()
    code, out, _ = cli(["restore", "--list"], capsys)
    assert out.strip()
    code, out, _ = cli(["restore", "--list", "--json"], capsys)  # the README: data-printing commands take --json
    (backup,) = json.loads(out)
    assert out.startswith("[") and backup["reason"] == "keeper clear all" and "memory.md" in backup["files"]
    assert backup["name"] in cli(["restore", "--list"], capsys)[1]
    code, out, _ = cli(["restore"], capsys)
    assert code == 0 and memory_file(project_dir).read_bytes() == before


def test_clear_old_moves_only_old_session_files(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli(["save", "--summary", "today"], capsys)
    project = identity.make_project(identity.find_project_root(str(project_dir)))
    old = Path(project.sessions) / "2020-01-02_0304.md"
    old.write_text("# Session 2020-01-02 03:04\n\nancient\n")
    code, out, _ = cli(["clear", "old", "--older-than", "30", "--yes"], capsys)
    assert "Moved 1 session file" in out
    assert code == 0 and not old.exists()
    assert len(list(Path(project.sessions).glob("*.md"))) == 1 and memory_file(project_dir).exists()


def test_project_dir_and_pins(project_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "elsewhere" / "svc"
    other.mkdir(parents=True)
    (other / ".claude").mkdir()
    (other / ".claude" / "keeper.yaml").write_text("project: shared-svc\n")
    code, _, err = cli(["save", "--project-dir", str(other), "--decision", "Not pinned yet"], capsys)
    assert code == 0 and "asks to share the memory 'shared-svc'" in err and "keeper pin --project-dir" in err
    assert not (Path(os.environ["KEEPER_HOME"]) / "projects" / "shared-svc").exists()
    assert cli(["pin", "--project-dir", str(other)], capsys)[0] == 0
    cli(["save", "--project-dir", str(other), "--decision", "Pinned"], capsys)
    assert (Path(os.environ["KEEPER_HOME"]) / "projects" / "shared-svc" / "memory.md").exists()
    (other / ".claude" / "keeper.yaml").write_text("project: ../escape\n")
    code, _, err = cli(["status", "--project-dir", str(other)], capsys)
    assert code == 1 and "is not a safe folder name" in err
    code, _, err = cli(["status", "--project-dir", str(tmp_path / "missing")], capsys)
    assert code == 1 and "does not exist" in err


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    from keeper.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, action in sub.choices.items():  # type: ignore[union-attr]
        assert action.format_help().strip(), name
        assert "--project-dir" in action.format_help(), name
    help_text = {a.dest: a.help for a in sub._choices_actions}  # type: ignore[union-attr]
    assert all(help_text.values())


def test_every_command_names_a_function_of_its_own_module_in_keeper_commands() -> None:
    """The parser names each command's function as text, so that building it imports none of them;
    a misspelt name would surface only when that command runs, so each is looked up here."""
    import importlib
    import inspect

    from keeper.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    targets = {name: action.get_default("func") for name, action in sub.choices.items()}  # type: ignore[union-attr]
    assert targets.pop("hook") is None  # dispatched before argparse, to the hook entry
    for name, target in targets.items():
        module, _, function = target.partition(":")
        run = getattr(importlib.import_module(f"keeper.commands.{module}"), function or "run")
        assert list(inspect.signature(run).parameters) == ["args"], name
        assert function in ("", f"run_{name}"), name  # a module of two names each one's function for it


def test_python_dash_m_and_version(project_dir: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "keeper", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == f"keeper {__version__}"


def test_console_script_save_reads_utf8_stdin(project_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "keeper", "save"],
        input="summary: Gérer les échéances – 期限\n".encode(),
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "ascii:backslashreplace"},
    )
    assert done.returncode == 0, done.stderr
    assert "Gérer les échéances – 期限" in memory_file(project_dir).read_text(encoding="utf-8")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["clear", "everything"])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (["recall", "--limt", "3", "cents"], "usage: keeper recall", "(did you mean --limit?)"),
        (["status", "--jsn"], "usage: keeper status", "(did you mean --json?)"),
        (["status", "extra"], "usage: keeper status", ""),
    ],
)
def test_an_unknown_option_gets_the_commands_usage_and_the_option_it_may_mean(
    argv: list[str], usage: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith(usage), err
    assert f"unrecognized arguments: {argv[1]} {hint}".strip() in err


def test_recall_help_says_typos_are_forgiven_not_that_words_match_literally(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["recall", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "literally" not in said and "Typos and word forms are forgiven" in said


def test_status_counts_hooks_and_bytes_injected(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from keeper.hooks import entry

    cli(["save", "--decision", "Counted"], capsys)
    payload = json.dumps({"session_id": "s1", "cwd": str(project_dir), "source": "startup"}).encode()
    reply = entry.handle("session-start", payload)
    entry.handle(
        "post-tool-use", json.dumps({"session_id": "s1", "cwd": str(project_dir), "tool_name": "Read"}).encode()
    )
    injected = len(reply["hookSpecificOutput"]["additionalContext"])
    data = json.loads(cli(["status", "--json"], capsys)[1])
    started = data["hooks"]["session-start"]
    assert (started["calls"], started["injected_bytes"], started["last_injected"]) == (1, injected, injected)
    assert isinstance(started["slowest_recent_ms"], float)
    assert data["hooks"]["post-tool-use"]["calls"] == 1
    assert "injected" in cli(["status"], capsys)[1]


def test_a_bug_is_not_swallowed_as_a_user_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only KeeperError becomes a clean ``keeper: error:`` line; an unrelated bug keeps its traceback."""
    from keeper.commands import status

    def broken(*args: object) -> dict:
        raise KeyError("not a user error")

    monkeypatch.setattr(status, "collect", broken)
    with pytest.raises(KeyError, match="not a user error"):
        main(["status"])
    assert "keeper: error" not in capsys.readouterr().err


def test_a_user_error_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(["status", "--project-dir", str(tmp_path / "missing")], capsys)
    assert code == 1 and out == ""
    assert err.startswith("keeper: error: project folder") and err.count("\n") == 1 and "--project-dir" in err


@pytest.mark.parametrize(
    "args",
    [
        ["save", "--summary", "x"],
        ["recall", "anything"],
        ["clear", "old", "--yes"],
        ["clear", "all", "--yes"],
        ["restore"],
        ["status"],
        ["projects"],
    ],
)
def test_a_file_where_the_store_should_be_is_a_clear_error_not_a_traceback(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    monkeypatch.setenv("KEEPER_HOME", str(blocker / "store"))
    code, _, err = cli(args, capsys)
    assert code == 1 and err.startswith("keeper: error: ") and err.count("\n") == 1  # never "nothing here"
    assert "KEEPER_HOME" in err and "is a file" in err


def test_a_full_disk_during_a_save_is_a_clear_error_and_loses_nothing(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    assert cli(["save", "--decision", "Kept before the disk filled"], capsys)[0] == 0
    before = memory_file(project_dir).read_bytes()

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(args[0]))

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", full)
        code, _, err = cli(["save", "--decision", "Lost to a full disk"], capsys)
    assert code == 1 and err.startswith("keeper: error: No space left on device")
    assert "free some disk space" in err and memory_file(project_dir).read_bytes() == before


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "cache"],
        ["recall", "cache", "invalidation", "--limit", "3"],
        ["recall", "--limit=7", "--scope", "global", "a", "b"],
        ["recall", "--json", "--project-dir", "/tmp", "x"],
        ["recall", "--scope=project", "--", "--not-an-option", "-x"],
        ["recall", "-", "dash"],
        ["recall", "a", "--json", "--limit", "2", "--limit", "4"],
    ],
)
def test_recall_arguments_read_without_argparse_match_argparse(argv: list[str]) -> None:
    from keeper.cli import build_parser, quick_recall_args

    quick = quick_recall_args(argv)
    assert quick is not None
    assert vars(quick) == vars(build_parser("recall").parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["recall"],
        ["recall", "-h"],
        ["recall", "--lim", "3", "x"],
        ["recall", "--limit", "three", "x"],
        ["recall", "--limit", "-3", "x"],
        ["recall", "--scope", "everywhere", "x"],
        ["recall", "a", "--json", "b"],
        ["recall", "--frobnicate", "x"],
        ["status"],
    ],
)
def test_recall_arguments_argparse_must_judge_are_left_to_it(argv: list[str]) -> None:
    from keeper.cli import quick_recall_args

    assert quick_recall_args(argv) is None


def test_an_unusable_store_is_named_at_session_start(
    tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import run_hook

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    monkeypatch.setenv("KEEPER_HOME", str(blocker / "store"))
    base = {"session_id": "s1", "cwd": str(project_dir)}
    reply = run_hook("session-start", {**base, "source": "startup"}, monkeypatch, capsys)
    assert reply == {
        "systemMessage": f"Keeper's store {blocker / 'store'} cannot be made: {blocker} is a file; move it away or set KEEPER_HOME elsewhere"
    }
    assert run_hook("post-tool-use", {**base, "tool_name": "Read"}, monkeypatch, capsys) == {}
    assert main(["doctor"]) == 1  # doctor still runs and names it among its checks
    assert "FAIL  store" in capsys.readouterr().out


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_reader_that_stops_early_gets_no_error(project_dir: Path, unbuffered: str) -> None:
    """`keeper status | head -1` is an ordinary thing to type: no 'Broken pipe' error for it. A
    reader that has gone before Keeper writes (`true`) makes the write fail every time. A user's
    shell has no PYTHONUNBUFFERED: there the write is the interpreter's last flush, after the command
    (it said `Exception ignored … BrokenPipeError` and exited 120 on a clean machine)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    reader, writer = os.pipe()
    os.close(reader)  # the reader has gone before Keeper writes
    try:
        done = subprocess.run(
            [sys.executable, "-m", "keeper", "status"],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            cwd=project_dir,
            env={**env, "PYTHONUNBUFFERED": unbuffered} if unbuffered else env,
            check=False,
        )
    finally:
        os.close(writer)
    assert done.returncode == 0 and done.stderr == ""


def test_status_says_which_config_files_do_not_exist(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("save_every: 5\n", encoding="utf-8")
    out = cli(["status"], capsys)[1]
    line = next(line for line in out.splitlines() if line.startswith("  config "))
    assert "config.yaml (none) + " in line and f"{project_dir / '.claude' / 'keeper.yaml'} + " in line
    files = json.loads(cli(["status", "--json"], capsys)[1])["config"]
    assert files["global_exists"] is False and files["project_exists"] is True
