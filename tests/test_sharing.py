"""Store files hold under Windows' sharing rules: saving while another process keeps reading.

On Windows, replacing memory.md while another process has it open fails for that moment
(WinError 5), and opening it while it is being replaced fails too; before ``fsutil.shared``
7 of 300 saves failed this way in the Wine lane, which makes 300 there. On POSIX, where a replaced
file stays readable, 100 saves show that no reader ever sees half a file (300 with KEEPER_LONG_TESTS=1). A reader that holds the file longer is waited out for as long as
a save would wait for the project's lock; a hook gives up sooner (``fsutil.sharing_wait``).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from keeper import cli
from keeper.capture import saving
from keeper.memory.document import SaveInput
from keeper.store import config, counters, fsutil, identity
from tests.conftest import LONG

pytestmark = pytest.mark.slow
SAVES = 300 if sys.platform == "win32" or LONG else 100

READER = """
import os, sys
from keeper.store import fsutil
path, ready, stop = sys.argv[1:4]
reads = 0
while not os.path.exists(stop):
    text = fsutil.read_text(path)  # raises on a sharing refusal it cannot wait out
    if text is None or not text.startswith("# ") or not text.endswith("\\n"):
        sys.exit(f"read a missing or partial memory.md: {text!r:.200}")
    reads += 1
    if reads == 1:
        open(ready, "w").close()
print(reads)
"""


def test_saves_while_another_process_reads_memory_md(project_dir: Path, tmp_path: Path) -> None:
    project, cfg = identity.make_project(str(project_dir)), config.load(str(project_dir))
    saving.save(project, cfg, SaveInput(summary="first"), "s0")
    ready, stop = tmp_path / "ready", tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, project.memory, str(ready), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        while not ready.exists():
            assert reader.poll() is None, reader.communicate()
            time.sleep(0.01)
        for i in range(SAVES):
            saving.save(project, cfg, SaveInput(decisions=[f"Decision {i} on module_{i}"]), f"s{i // 10}")
    finally:
        stop.touch()
        out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err.decode("utf-8", "replace")
    assert int(out) > 0
    text = Path(project.memory).read_text(encoding="utf-8")
    assert all(f"Decision {i} on module_{i}" in text for i in range(SAVES))


def test_a_tally_read_while_appended_to_sees_every_mark(project_dir: Path, tmp_path: Path) -> None:
    """Windows locks byte 0 of the tally while appending, and a locked range cannot be read by
    another process: the reader waits instead of counting nothing."""
    path = str(tmp_path / "state" / "s1.tally")
    counters.append(path, counters.USE)
    appender = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from keeper.store import counters\nfor _ in range(400): counters.append({path!r}, b'u')",
        ],
        stderr=subprocess.PIPE,
    )
    seen = []
    while appender.poll() is None:
        seen.append(len(counters.read(path)))
    assert appender.wait() == 0, appender.stderr.read() if appender.stderr else ""
    assert all(n > 0 for n in seen) and seen == sorted(seen)
    assert counters.read(path) == b"u" * 401


HOLDER = """
import os, sys, time
path, ready, release = sys.argv[1:4]
with open(path, "rb"):  # opened without FILE_SHARE_DELETE: no one may replace the file meanwhile
    open(ready, "w").close()
    while not os.path.exists(release):
        time.sleep(0.01)
"""
WINDOWS = pytest.mark.skipif(sys.platform != "win32", reason="POSIX replaces a file another process reads")


def held(path: str, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """Another process holding ``path`` open until the returned file exists."""
    ready, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path, str(ready), str(release)], stderr=subprocess.PIPE)
    while not ready.exists():
        assert holder.poll() is None, holder.communicate()
        time.sleep(0.01)
    return holder, release


@WINDOWS
def test_a_save_outwaits_a_reader_that_holds_memory_md_longer_than_a_hook_would(
    project_dir: Path, tmp_path: Path
) -> None:
    """`keeper save` is waited on by someone who asked for it: it lands once the reader lets go, here
    three seconds after a hook would have given up (under load 10 a tight reader outlasted 2 s)."""
    project, cfg = identity.make_project(str(project_dir)), config.load(str(project_dir))
    saving.save(project, cfg, SaveInput(summary="first"), "s0")
    holder, release = held(project.memory, tmp_path)
    letting_go = threading.Timer(fsutil.HOOK_SHARING_WAIT + 3, release.touch)
    letting_go.start()
    try:
        code = cli.main(["save", "--decision", "Outwaited the reader", "--project-dir", str(project_dir)])
    finally:
        letting_go.cancel()
        release.touch()
        holder.wait(timeout=60)
    assert code == 0
    assert "Outwaited the reader" in Path(project.memory).read_text(encoding="utf-8")


@WINDOWS
def test_a_hook_gives_up_on_a_reader_that_holds_the_file_at_its_shorter_budget(
    project_dir: Path, tmp_path: Path
) -> None:
    """A hook must answer within its agent's limit and fails open: the same replace gives up while the
    reader still holds the file (it lets go only after), where a command would have waited on."""
    project = identity.make_project(str(project_dir))
    fsutil.atomic_write(project.memory, "# Project Memory: api\n")
    holder, release = held(project.memory, tmp_path)
    try:
        with fsutil.sharing_wait(fsutil.HOOK_SHARING_WAIT), pytest.raises(PermissionError):
            fsutil.atomic_write(project.memory, "# Project Memory: api\n\n## Core Decisions\n")
    finally:
        release.touch()
        holder.wait(timeout=60)
    assert Path(project.memory).read_text(encoding="utf-8") == "# Project Memory: api\n"
