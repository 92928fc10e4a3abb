"""The allowance file as docs/counter.md writes it down, read in Python against the test vectors that
launcher/count.bash (tests/test_launcher_counter.py) and launcher/keeper.c (tests/test_windows_launcher.py)
are run against too."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.allowance_vectors import VECTORS, lay_out, read
from tests.conftest import REPO

KEY = "cwd=2:/p HOME=5:/home"


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_the_written_down_reader_decides_each_vector(tmp_path: Path, vector: dict[str, Any]) -> None:
    if vector.get("posix_only") and sys.platform == "win32":
        pytest.skip("a link to a file needs privileges on Windows")
    record = tmp_path / "data" / "counter" / "s-1"
    tally = lay_out(vector, tmp_path / "store", record, KEY, str)
    before = tally.read_bytes() if tally.is_file() else None
    decision, appended = read(record, KEY)
    assert (decision, appended) == (vector["decision"], vector["appended"])
    if before is not None and not vector.get("links"):
        assert tally.read_bytes() == before + b"u" * appended


def test_the_spec_names_the_vectors_and_every_line_of_the_record() -> None:
    spec = (REPO / "docs" / "counter.md").read_text(encoding="utf-8")
    assert "tests/fixtures/allowance-vectors.json" in spec
    for line in ("keeper-allowance 1", "+<file>", "=<size>", "-<file>", "end"):
        assert f"`{line}`" in spec
