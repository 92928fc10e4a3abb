"""keeper doctor finds what stops Keeper from working and says how to fix it."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from keeper import __version__, doctor
from keeper.cli import main


@pytest.mark.parametrize(
    ("system", "have", "expected"),
    [
        ("Linux", {"uv", "pipx"}, "uv tool install claude-keeper"),
        ("Darwin", {"pipx"}, "pipx install claude-keeper"),
        ("Windows", {"py"}, "py -m pip install --user claude-keeper"),
        ("Windows", set(), "python -m pip install --user claude-keeper"),
        ("Linux", set(), "python3 -m pip install --user claude-keeper"),
    ],
)
def test_install_hints_fit_the_platform(system: str, have: set[str], expected: str) -> None:
    hint = doctor.install_hint(system, have)
    assert expected in hint and "restart Claude Code" in hint


def fake_keeper(folder: Path, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "keeper"
    script.write_text(f"#!/bin/sh\necho 'keeper {version}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.skipif(os.name == "nt", reason="uses a POSIX shell script as a stand-in keeper")
def test_doctor_reports_each_problem_with_a_fix(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "keeper.yaml").write_text("save_every: never\n")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  command  `keeper` is not on PATH" in out
        and "fix: run `python3 -m pip install --user claude-keeper`" in out
    )
    assert "FAIL  config" in out and "save_every must be a positive whole number" in out
    assert "ok    store" in out and "2 problem(s) found." in out


@pytest.mark.skipif(os.name == "nt", reason="uses a POSIX shell script as a stand-in keeper")
def test_doctor_flags_another_keeper_version_on_path(
    project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_keeper(tmp_path / "bin", "0.0.1")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert main(["doctor", "--json"]) == 1
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["command"]["ok"] is False and "reports 'keeper 0.0.1'" in found["command"]["detail"]
    fake_keeper(tmp_path / "bin", __version__)
    assert main(["doctor", "--json"]) == 0
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["command"]["ok"] is True and found["python"]["ok"] is True


def test_doctor_sees_an_enabled_plugin_and_hooks_that_ran(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from keeper import hooks

    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enabledPlugins": {"keeper@keeper": True}}))
    hooks.handle(
        "post-tool-use", json.dumps({"session_id": "s1", "cwd": str(project_dir), "tool_name": "Read"}).encode()
    )
    main(["doctor", "--json"])
    found = {c["check"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["plugin"]["ok"] is True and "keeper@keeper" in found["plugin"]["detail"]
    assert found["hooks"]["ok"] is True and "1 hook calls" in found["hooks"]["detail"]


def test_an_unwritable_store_is_a_problem(project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("KEEPER_HOME", str(blocker / "store"))
    check = doctor._store()
    assert check.ok is False and "KEEPER_HOME" in check.fix


def test_python_check_passes_here() -> None:
    assert doctor._python().ok is (sys.version_info >= (3, 9))
