"""A secret the user's own ``redact_patterns`` name never leaves Keeper, whatever road it takes.

The text may predate the pattern (saved before the user added it) or never have passed a save at
all (memory.md edited by hand), so every road out applies the patterns where the text leaves:
recall and expand (text and ``--json``), ``keeper why``, the prompt hook's recall (``/keeper:recall``
and automatic recall), the session-start context, the Memory Hub and ``keeper export``.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from keeper.cli import main
from keeper.store import identity, paths
from tests.helpers import run_hook
from tests.transcripts import realistic

SECRET = "ACME-31337"
PATTERN = 'redact_patterns:\n  - "ACME-[0-9]{5}"\n'
HIDDEN = "[REDACTED:custom]"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # the built-in rules' kind: pasted by hand, never saved


@pytest.fixture(params=["store", "project"])
def leaky(request: pytest.FixtureRequest, project_dir: Path, store: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A project whose memory holds the secret (a save from before the pattern, a line added by
    hand), then the pattern, in the store's settings or the project's own (which does not reach the
    global memory: there it is another project's secret)."""
    summary = f"the zebracorn release pipeline signs builds with {SECRET} every friday"
    assert main(["save", "--summary", summary, "--decision", f"zebracorn releases sign with {SECRET}"]) == 0
    code = SECRET if request.param == "store" else "on the wiki"
    assert main(["save", "--global", "--feedback", f"never paste the zebracorn signing code {code}"]) == 0
    memory = Path(identity.make_project(identity.find_project_root(str(project_dir))).memory)
    text = memory.read_text(encoding="utf-8")
    note = f"\n- zebracorn hand note: rotate {SECRET} monthly, with {TOKEN} (2026-11-20)\n"
    note += f"\n## Rotation {SECRET} {TOKEN}\n\n- zebracorn rotate signs weekly\n"  # a heading by hand
    memory.write_text(text.replace("\n## Current State", note + "\n## Current State"), encoding="utf-8")
    capsys.readouterr()
    settings = store / "config.yaml" if request.param == "store" else project_dir / ".claude" / "keeper.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(PATTERN, encoding="utf-8")
    return project_dir


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _recall_id(capsys: pytest.CaptureFixture[str], field: str = "snippet") -> str:
    """A recall result whose section (or heading) holds the secret."""
    found = json.loads(_cli(capsys, "recall", "zebracorn", "rotate", "signs", "--json"))
    return str(next(r["id"] for r in found if HIDDEN in r[field]))


def _hook(event: str, prompt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    payload = {"session_id": "later", "cwd": str(Path.cwd()), "prompt": prompt, "source": "startup"}
    return json.dumps(run_hook(event, payload, monkeypatch, capsys), ensure_ascii=False)


def _transcript(tmp_path: Path) -> Path:
    """The agent's own transcript, which Keeper never wrote (``keeper transcript`` reads it)."""
    return realistic(tmp_path / "t.jsonl").prompt(f"the zebracorn signing code is {SECRET}").path


def _hub(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    _cli(capsys, "hub", "--out", str(tmp_path / "hub.html"))
    return (tmp_path / "hub.html").read_text(encoding="utf-8")


def _export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    _cli(capsys, "export", "--out", str(tmp_path / "out.zip"))
    with zipfile.ZipFile(tmp_path / "out.zip") as zf:
        return "\n".join(zf.read(name).decode("utf-8") for name in zf.namelist())


Road = Callable[[Path, pytest.MonkeyPatch, pytest.CaptureFixture[str]], str]
ROADS: dict[str, Road] = {
    "recall": lambda t, m, c: _cli(c, "recall", "zebracorn", "rotate", "signs"),
    "recall --json": lambda t, m, c: _cli(c, "recall", "zebracorn", "rotate", "signs", "--json"),
    "expand": lambda t, m, c: _cli(c, "expand", _recall_id(c)),
    "expand --json": lambda t, m, c: _cli(c, "expand", _recall_id(c, "heading"), "--json"),
    "why": lambda t, m, c: _cli(c, "why", "zebracorn", "hand", "note"),
    "why --json": lambda t, m, c: _cli(c, "why", "zebracorn", "hand", "note", "--json"),
    "/keeper:recall": lambda t, m, c: _hook("user-prompt-submit", "/keeper:recall zebracorn rotate signs", m, c),
    "automatic recall": lambda t, m, c: _hook(
        "user-prompt-submit", "how does the zebracorn release pipeline sign builds every friday", m, c
    ),
    "session start": lambda t, m, c: _hook("session-start", "", m, c),
    "transcript": lambda t, m, c: _cli(c, "transcript", str(_transcript(t))),
    "transcript --json": lambda t, m, c: _cli(c, "transcript", str(_transcript(t)), "--json"),
    "hub": lambda t, m, c: _hub(t, c),
    "export": lambda t, m, c: _export(t, c),
}


@pytest.mark.parametrize("road", ROADS)
def test_a_secret_the_users_patterns_name_never_leaves(
    road: str, leaky: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ROADS[road](tmp_path, monkeypatch, capsys)
    assert "zebracorn" in out  # the road carried the memory
    assert SECRET not in out and HIDDEN in out
    assert TOKEN not in out


def test_a_new_pattern_is_a_new_session_start(
    project_dir: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The start's kept answer (``startcache``) is not given once the patterns change."""
    assert main(["save", "--decision", f"zebracorn releases sign with {SECRET}"]) == 0
    capsys.readouterr()
    first = _hook("session-start", "", monkeypatch, capsys)
    assert SECRET in first and Path(paths.data_root(), "projects").is_dir()
    (store / "config.yaml").write_text(PATTERN, encoding="utf-8")
    again = _hook("session-start", "", monkeypatch, capsys)
    assert SECRET not in again and HIDDEN in again


@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_status_names_a_stale_item_without_the_secret(
    flag: list[str], project_dir: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = project_dir / "src" / "zebra_sign.py"
    code.parent.mkdir()
    code.write_text("SIGN = 1\n", encoding="utf-8")
    assert main(["save", "--decision", f"zebracorn signing lives in src/zebra_sign.py with {SECRET}"]) == 0
    code.unlink()
    (store / "config.yaml").write_text(PATTERN, encoding="utf-8")
    capsys.readouterr()
    out = _cli(capsys, "status", *flag)
    assert "zebra_sign.py is gone" in out and SECRET not in out and "[REDACTED:" in out  # the text cuts the item


def test_why_naming_several_items_lists_them_without_the_secret(
    leaky: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Words several items hold: the error lists them, each cut to a line (redacted before it is
    cut, or a secret cut in two passes the pattern)."""
    assert main(["why", "zebracorn"]) != 0
    err = capsys.readouterr().err
    assert "items match" in err and "zebracorn" in err
    assert "ACME-3" not in err and TOKEN[:8] not in err


def test_restore_item_says_what_it_restored_without_the_secret(
    project_dir: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An item retired before the pattern: brought back, its text is saved redacted and so is what is printed."""
    assert main(["save", "--decision", f"zebracorn releases sign with {SECRET}"]) == 0
    assert main(["save", "--retired", f"zebracorn releases sign with {SECRET}"]) == 0
    (store / "config.yaml").write_text(PATTERN, encoding="utf-8")
    capsys.readouterr()
    assert main(["restore", "--item", "zebracorn"]) == 0
    out = capsys.readouterr().out
    assert "Restored" in out and SECRET not in out and HIDDEN in out


@pytest.mark.needs("git")
def test_where_an_item_came_from_is_given_without_the_secret(
    project_dir: Path, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recall --json and the Memory Hub give each memory.md item's origin (the branch it was saved
    on, the files): redacted as ``keeper why --json`` gives the same record."""
    (project_dir / ".git").rmdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    for args in (
        ["init", "-q"],
        ["commit", "-q", "--allow-empty", "-m", "start"],
        ["checkout", "-q", "-b", f"fix/{SECRET}"],
    ):
        subprocess.run([*git, *args], cwd=project_dir, check=True, capture_output=True)
    assert main(["save", "--decision", "zebracorn releases sign on the build host", "--session", "s1"]) == 0
    (store / "config.yaml").write_text(PATTERN, encoding="utf-8")
    capsys.readouterr()
    found = json.loads(_cli(capsys, "recall", "zebracorn", "--json"))
    origins = [p["origin"] for r in found for p in r["provenance"]]
    assert origins and all(o.get("branch") == f"fix/{HIDDEN}" for o in origins), origins
    page = _hub(tmp_path, capsys)
    assert "zebracorn" in page and f"fix/{HIDDEN}" in page and SECRET not in page


@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_a_save_names_the_items_it_removed_or_could_mean_without_the_secret(
    flag: list[str], project_dir: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A save's report echoes items already in memory.md (one it resolved, those a name could mean,
    one an added item resembles), which a pattern may be newer than."""
    saved = ["--decision", f"rotate zebracorn {SECRET} weekly", "--decision", f"rotate zebracorn {SECRET} keys monthly"]
    assert main(["save", *saved, "--issue", f"zebracorn {SECRET} leaks"]) == 0
    (store / "config.yaml").write_text(PATTERN, encoding="utf-8")
    capsys.readouterr()
    asked = ["--resolved", "zebracorn leaks", "--retired", "rotate zebracorn", "--decision", "rotate zebracorn weekly"]
    out = _cli(capsys, "save", *asked, *flag)
    assert "zebracorn" in out and HIDDEN in out and SECRET not in out
    assert SECRET.lower() not in out  # an item's key (lower case) is bookkeeping, not a name to show


@pytest.mark.fails_open("zebracorn could not sign")
@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_status_gives_the_last_error_without_the_secret(
    flag: list[str], project_dir: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error logged before the pattern (the log redacts with the built-in rules as it writes)."""
    from keeper.store import log

    log.write("save", "ERROR", f"zebracorn could not sign with {SECRET}")
    (store / "config.yaml").write_text(PATTERN, encoding="utf-8")
    out = _cli(capsys, "status", *flag)
    assert "zebracorn could not sign" in out and SECRET not in out and HIDDEN in out
