"""Store files hold under Windows' sharing rules: saving while another process keeps reading.

On Windows, replacing memory.md while another process has it open fails for that moment
(WinError 5), and opening it while it is being replaced fails too; before ``fsutil.shared``
7 of 300 saves failed this way in the Wine lane, which makes 300 there. On POSIX, where a replaced
file stays readable, 100 saves show that no reader ever sees half a file (300 with KEEPER_LONG_TESTS=1).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from keeper.capture import saving
from keeper.memory.document import SaveInput
from keeper.store import config, counters, identity
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
