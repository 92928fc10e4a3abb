"""One way in: the CLI and the hooks find the same project, config and session through ``resolve``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from keeper.errors import KeeperError
from keeper.hooks import entry
from keeper.store import identity, pins
from keeper.store.resolve import resolve, start_folder
from tests.helpers import Stdin, run_hook


def make(folder: Path, pin: str | None = None) -> Path:
    (folder / ".git").mkdir(parents=True)
    if pin is not None:
        (folder / ".claude").mkdir()
        (folder / ".claude" / "keeper.yaml").write_text(f"project: {pin}\n", encoding="utf-8")
    return folder


def test_the_first_existing_folder_wins_and_strict_refuses_a_missing_one(tmp_path: Path) -> None:
    here = make(tmp_path / "a")
    assert start_folder(["", str(here), str(tmp_path)], strict=False) == str(here)
    assert start_folder([str(tmp_path / "gone"), "bad\x00path", str(here)], strict=False) == str(here)
    assert start_folder(["", ""], strict=True) == os.getcwd()
    with pytest.raises(KeeperError, match="does not exist; pass an existing folder to --project-dir"):
        start_folder([str(tmp_path / "gone"), str(here)], strict=True)


def test_a_subfolder_resolves_to_its_repository_and_a_safe_session(tmp_path: Path) -> None:
    repo = make(tmp_path / "shop")
    (repo / "src" / "deep").mkdir(parents=True)
    at = resolve(str(repo / "src" / "deep"), "../../etc/passwd", strict=True)
    assert at.project.root == str(repo.resolve()) and at.project.id == identity.project_id(str(repo.resolve()))
    assert at.session == "etcpasswd" and at.has_session
    assert not resolve(str(repo), None, strict=False).has_session


def test_a_bad_pin_is_refused_by_the_cli_and_survived_by_hooks(tmp_path: Path) -> None:
    repo = make(tmp_path / "svc", pin="../escape")
    with pytest.raises(KeeperError, match="is not a safe folder name"):
        resolve(str(repo), "s", strict=True)
    at = resolve(str(repo), "s", strict=False)
    assert at.project.id == identity.project_id(str(repo.resolve()))
    assert any("is not a safe folder name" in w and "own id" in w for w in at.warnings)


def test_a_pin_counts_only_once_the_user_allowed_it_for_that_folder(tmp_path: Path) -> None:
    folder = make(tmp_path / "svc", pin="shared-svc")
    at = resolve(str(folder), "s", strict=True)
    assert at.project.id == identity.project_id(str(folder.resolve()))  # a repository cannot choose on its own
    assert any("asks to share the memory 'shared-svc'" in w and "keeper pin --project-dir" in w for w in at.warnings)
    pins.allow("shared-svc", str(folder.resolve()))
    at = resolve(str(folder), "s", strict=True)
    assert at.project.id == "shared-svc" and at.project.dir.endswith(os.path.join("projects", "shared-svc"))
    other = make(tmp_path / "hostile-clone", pin="shared-svc")
    assert resolve(str(other), "s", strict=True).project.id != "shared-svc"  # allowed per folder, not per name
    assert pins.revoke(str(folder.resolve()))
    assert resolve(str(folder), "s", strict=True).project.id != "shared-svc"


def test_hook_project_dir_beats_the_environment_and_the_payload_and_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chosen, from_env, from_cwd = (make(tmp_path / name) for name in ("chosen", "env", "cwd"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(from_env))
    payload = {"session_id": "s1", "cwd": str(from_cwd), "tool_name": "Read"}
    monkeypatch.setattr(sys, "stdin", Stdin(json.dumps(payload).encode()))
    assert entry.run(["post-tool-use", "--project-dir", str(chosen)]) == 0
    assert json.loads(capsys.readouterr().out) == {}
    assert os.environ["CLAUDE_PROJECT_DIR"] == str(from_env)  # no side channel through the environment
    counted = [p for p in (chosen, from_env, from_cwd) if os.path.exists(identity.make_project(str(p.resolve())).state)]
    assert counted == [chosen]
    run_hook("post-tool-use", payload, monkeypatch, capsys)  # without the flag: the environment wins
    assert os.path.exists(identity.make_project(str(from_env.resolve())).state)
    assert not os.path.exists(identity.make_project(str(from_cwd.resolve())).state)
