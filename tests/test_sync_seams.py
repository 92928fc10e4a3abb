"""keeper sync where it meets import and a new --remote: a removal that arrived by sync stays gone
after an import of an older archive, and a refused remote does not replace the working one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.syncstores import Machine, connect, git, machines_fixture, remote_fixture, remote_objects

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
    capsys.readouterr()
    assert a.sync("--remote", str(other)) == 1
    err = capsys.readouterr().err
    assert err.startswith("keeper: error: ") and err.count("\n") == 1
    assert f"still syncs with {remote}" in err, err
    assert json.loads((a.store / "sync.json").read_text())["remote"] == str(remote)
    assert a.sync() == 0


def _forbidden_server() -> tuple[str, object]:
    """An http remote that answers 403 to everything (a token without the right), and its server."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Forbidden(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(403)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Forbidden)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/me/memory.git", server


def test_a_remote_not_reachable_yet_is_recorded_shown_with_its_error_and_the_next_sync_completes(
    machines: list[Machine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    url, server = _forbidden_server()
    try:
        for given in (url, str(tmp_path / "later.git")):  # a 403, then a folder not made yet
            capsys.readouterr()
            assert a.sync("--remote", given) == 1
            err = capsys.readouterr().err
            assert err.startswith("keeper: error: cannot reach the remote") and err.count("\n") == 1, err
            assert "recorded as this machine's remote" in err
            assert json.loads((a.store / "sync.json").read_text())["remote"] == given
            assert a.run("status", "--project-dir", str(a.project)) == 0
            out = capsys.readouterr().out
            assert f"sync remote   {given}" in out and "sync problem  cannot reach" in out, out
            a.run("doctor", "--project-dir", str(a.project))
            assert "FAIL  sync" in capsys.readouterr().out
    finally:
        server.shutdown()  # type: ignore[attr-defined]
    git("init", "-q", "--bare", str(tmp_path / "later.git"))
    assert a.sync() == 0  # no flag needed
    assert "Use FTS5" in git("--git-dir", str(tmp_path / "later.git"), "grep", "-h", "FTS5", "main")


def test_the_credential_in_a_remote_url_is_kept_in_one_private_file_and_shown_nowhere(
    machines: list[Machine], remote: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = machines[0]
    a.save("--decision", "Use FTS5")
    token = "s3cr3t-t0ken-" + "x" * 12
    url = f"https://keeper:{token}@git.example.invalid/me/memory.git"
    # the user's own git configuration sends that address to the local bare remote
    Path(os.environ["HOME"], ".gitconfig").write_text(f'[url "{remote}"]\n\tinsteadOf = {url}\n')
    capsys.readouterr()
    assert a.sync("--remote", url) == 0
    assert a.sync() == 0
    assert a.run("status", "--project-dir", str(a.project), "--json") == 0
    a.run("doctor", "--project-dir", str(a.project))
    shown = capsys.readouterr()
    assert token not in shown.out + shown.err and "git.example.invalid" in shown.out
    holding = [p for p in a.store.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    assert holding == [a.store / "sync.json"]
    if os.name == "posix":
        assert (a.store / "sync.json").stat().st_mode & 0o077 == 0


def test_a_session_file_whose_name_looks_like_a_token_is_held_back_and_the_rest_is_sent(
    machines: list[Machine], remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, _ = machines
    a.save("--decision", "Use FTS5")
    connect([a, b], remote)
    [session] = a.sessions()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    held = session.with_name(f"2026-01-01_{token}.md")
    session.rename(held)
    a.monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "second")
    a.save("--decision", "Tag releases")
    capsys.readouterr()
    assert a.sync() == 1
    said = capsys.readouterr()
    assert said.err.startswith("keeper: error: held back ") and said.err.count("\n") == 1, said.err
    assert "2026-01-01_[REDACTED" in said.err and "Rename that file" in said.err and token not in said.err
    assert token not in said.out
    assert token.encode() not in remote_objects(remote)
    assert held.exists()  # kept here as it is, neither sent nor trashed
    assert b.sync() == 0 and "Tag releases" in b.memory()
    assert len(b.sessions()) == 1  # the other session arrived; the held one is not removed elsewhere
    assert a.run("status", "--project-dir", str(a.project)) == 0
    out = capsys.readouterr().out
    assert "sync problem  held back" in out and token not in out
    held.rename(held.with_name("2026-01-01_renamed.md"))
    assert a.sync() == 0 and b.sync() == 0
    # held here all along, its text was never recorded as removed: renamed, it is sent and kept here
    assert len(b.sessions()) == 2 and len(a.sessions()) == 2


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
