"""Shared test helpers: run a hook the way Claude Code does, through ``keeper.hooks.entry.run``."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from keeper.hooks import entry


class Stdin:
    """Stands in for ``sys.stdin``: the hook reads raw bytes from ``.buffer``."""

    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def run_hook(event: str, payload: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    """Feed ``payload`` (bytes, or anything JSON) to ``keeper hook EVENT``; return its one reply object."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    monkeypatch.setattr(sys, "stdin", Stdin(raw))
    assert entry.run([event]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert isinstance(reply, dict) and "continue" not in reply
    return reply


def shift(folders: list[Path], seconds: int) -> None:
    """Every file's and folder's times moved back by ``seconds`` (forward when negative): the clock
    as seen from the files jumped forward (or back). Whole hours, so no "saved N ago" is near a turn."""
    for folder in folders:
        for where, dirs, files in os.walk(folder):
            for name in [*files, *dirs, ""]:
                path = os.path.join(where, name) if name else where
                moved = os.stat(path).st_mtime_ns - seconds * 1_000_000_000  # the tests' folders hold no link
                os.utime(path, ns=(moved, moved))
