"""keeper sync where it meets import and a new --remote: a removal that arrived by sync stays gone
after an import of an older archive, and a refused remote does not replace the working one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.syncstores import Machine, git, machines_fixture, remote_fixture

pytestmark = pytest.mark.needs("git")

__all__ = ["machines_fixture", "remote_fixture"]  # the fixtures this module's tests use


def test_an_older_archive_does_not_bring_back_a_decision_retired_on_another_machine(
    machines: list[Machine], remote: Path, tmp_path: Path
) -> None:
    a, b, _ = machines
    a.save("--decision", "Zeta uses Redis", "--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0 and b.sync("--remote", str(remote)) == 0
    b.start_session("join")
    assert b.sync() == 0 and "Zeta uses Redis" in b.memory()
    backup = tmp_path / "bold.zip"
    assert b.run("export", "--project-dir", str(b.project), "--out", str(backup)) == 0
    a.save("--retired", "zeta uses redis.")
    assert a.sync() == 0 and b.sync() == 0
    assert "Zeta uses Redis" not in b.memory()
    assert b.run("import", str(backup), "--project-dir", str(b.project)) == 0
    assert "Zeta uses Redis" not in b.memory() and "Use FTS5" in b.memory()
    assert b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        assert "Zeta uses Redis" not in m.memory(), m.name
    b.save("--decision", "Zeta uses Redis")  # a deliberate save brings it back, everywhere
    assert b.sync() == 0 and a.sync() == 0
    for m in (a, b):
        assert "Zeta uses Redis" in m.memory(), m.name


def test_a_refused_remote_leaves_the_working_one_recorded(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    work = tmp_path / "code"
    git("init", "-q", "-b", "main", str(work))
    (work / "app.py").write_text("print('hi')\n")
    git("add", ".", cwd=work)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "app", cwd=work)
    other = tmp_path / "nk.git"
    git("init", "-q", "--bare", str(other))
    git("push", "-q", str(other), "main", cwd=work)
    for bad in (other, tmp_path / "no-such-repo.git"):
        capsys.readouterr()
        assert a.sync("--remote", str(bad)) == 1
        err = capsys.readouterr().err
        assert err.startswith("keeper: error: ") and err.count("\n") == 1
        assert f"still syncs with {remote}" in err, err
        assert json.loads((a.store / "sync.json").read_text())["remote"] == str(remote)
    assert a.sync() == 0


def test_status_does_not_show_a_secret_in_a_file_name_waiting_to_be_pushed(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    assert a.sync("--remote", str(remote)) == 0
    [session] = a.sessions()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    session.rename(session.with_name(f"2026-01-01_{token}.md"))
    os.utime(session.with_name(f"2026-01-01_{token}.md"))  # changed since the last sync: waiting to be pushed
    capsys.readouterr()
    assert a.run("status", "--project-dir", str(a.project)) == 0
    out = capsys.readouterr().out
    assert "to push       1 file(s)" in out and "[REDACTED" in out and token not in out
