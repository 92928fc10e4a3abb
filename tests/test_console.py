"""Every command writes UTF-8 whatever the code page, and stdin that is not UTF-8 is decoded by the
system's code page or refused, never stored as U+FFFD.

The commands run as the real console script in a subprocess. On Windows (the Wine lane) Python is
started with ``-I`` as the launchers start it, so its piped stdout is the ANSI code page (cp1252)
and PYTHONUTF8 cannot help; elsewhere ``PYTHONIOENCODING=cp1252`` gives the same stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from keeper import console
from keeper.cli import main
from keeper.errors import KeeperError

WINDOWS = sys.platform == "win32"
REPLY_TEXT = "use → ✓ Ω 日本"


def keeper(args: list[str], cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """``keeper ARGS`` in ``cwd`` with a cp1252 stdout, as a Windows pipe has it."""
    python = [sys.executable, "-I"] if WINDOWS else [sys.executable]
    return subprocess.run(
        [*python, "-m", "keeper", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "cp1252"},
        timeout=120,
        check=False,
    )


def replied(done: subprocess.CompletedProcess[bytes]) -> str:
    """stdout as UTF-8 (strict: cp1252 bytes fail here), after checking nothing crashed."""
    assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")
    return done.stdout.decode("utf-8")


@pytest.fixture
def chinese_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project and a store whose paths hold 项目, with one save holding → ✓ Ω 日本."""
    project = tmp_path / "work" / "项目"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("KEEPER_HOME", str(tmp_path / "项目-store"))
    monkeypatch.chdir(project)
    assert main(["save", "--decision", REPLY_TEXT]) == 0  # in-process: only the commands below meet cp1252
    return project


def test_a_save_whose_reply_holds_arrows_and_cjk_answers_in_utf8(project_dir: Path) -> None:
    done = keeper(["save"], project_dir, f"decisions:\n  - {REPLY_TEXT}\n".encode())
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert REPLY_TEXT in replied(done)


def test_status_in_a_project_whose_path_holds_chinese(chinese_project: Path) -> None:
    done = keeper(["status"], chinese_project)
    assert done.returncode == 0
    assert "项目" in replied(done)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["recall", "日本"], REPLY_TEXT),
        (["export", "--out", "项目.zip"], "项目.zip"),
        (["projects"], "项目"),
        (["doctor"], "项目-store"),
        (["save", "--decision", "Ω"], "项目"),
        (["recall", "--project", "no-such-项目", "x"], "no-such-项目"),  # an error, on stderr
    ],
)
def test_every_command_writes_utf8_whatever_the_code_page(
    chinese_project: Path, args: list[str], expected: str
) -> None:
    done = keeper(args, chinese_project)
    assert expected in replied(done) + done.stderr.decode("utf-8")


def test_import_names_the_archive_in_utf8(chinese_project: Path, tmp_path: Path) -> None:
    assert keeper(["export", "--out", str(tmp_path / "项目.zip")], chinese_project).returncode == 0
    done = keeper(["import", "--dry-run", str(tmp_path / "项目.zip")], chinese_project)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert "项目" in replied(done)


@pytest.mark.slow
def test_the_demo_writes_utf8_whatever_the_code_page(project_dir: Path) -> None:
    done = keeper(["demo"], project_dir)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert "── 1. Session starts" in replied(done)


def test_cp1252_input_is_decoded_by_the_code_page_or_refused(project_dir: Path, store: Path) -> None:
    """cmd's ``echo Zoë café | keeper save`` sends the code page's bytes: Windows reads them by its
    code page (cp1252 in the lane); a UTF-8 system refuses them with a word. Never U+FFFD."""
    done = keeper(["save"], project_dir, "summary: Zoë café\n".encode("cp1252"))
    memory = [p.read_text(encoding="utf-8") for p in store.rglob("memory.md")]
    if WINDOWS:
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        assert len(memory) == 1 and "Zoë café" in memory[0]
    else:
        assert done.returncode == 1
        assert "not UTF-8 (byte 0xeb at offset 11)" in done.stderr.decode("utf-8")
        assert memory == []
    assert not any("\ufffd" in text for text in memory)


@pytest.mark.parametrize(
    ("data", "pages", "text"),
    [
        ("Zoë café".encode(), ["cp1252"], "Zoë café"),  # UTF-8 first, whatever the code page
        ("Zoë café".encode("cp1252"), ["cp1252"], "Zoë café"),
        ("Zoë café".encode("cp850"), ["cp850", "cp1252"], "Zoë café"),  # the console's page before ANSI
        (b"\x81\x8d", ["cp1252", "cp437"], "üì"),  # a page that cannot decode it is passed over
    ],
)
def test_input_decodes_by_the_first_code_page_that_reads_it(
    data: bytes, pages: list[str], text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "input_encodings", lambda: pages)
    assert console.decode_input(data, "stdin") == text


def test_input_no_code_page_reads_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "input_encodings", lambda: ["utf-8"])
    with pytest.raises(KeeperError, match=r"not UTF-8 .*nothing was saved"):
        console.decode_input(b"caf\xe9", "stdin")
