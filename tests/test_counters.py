"""The counting logs: exact tool-use counts even when hooks run in parallel."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from keeper.store import counters


def _hammer(path: str, count: int, queue: multiprocessing.Queue) -> None:
    seen = [len(counters.append(path, counters.USE)) for _ in range(count)]
    queue.put(seen)


def test_parallel_appends_are_exact_and_each_sees_its_own_prefix(tmp_path: Path) -> None:
    path = str(tmp_path / "state" / "sessions" / "s.tally")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(path, 200, queue)) for _ in range(8)]
    for proc in procs:
        proc.start()
    lengths = [n for _ in procs for n in queue.get(timeout=60)]
    for proc in procs:
        proc.join(60)
    assert counters.total_uses(counters.read(path)) == 1600
    assert sorted(lengths) == list(range(1, 1601))  # a threshold is crossed by exactly one hook


def test_counts_since_marks() -> None:
    log = b"uuusuuruu" + b"f" + b"u"
    assert counters.uses_since(log, counters.SAVE) == 5
    assert counters.uses_since(log, counters.SAVE, counters.REMIND) == 3
    assert counters.uses_since(log, counters.SAVE, counters.FINAL_ASK) == 1
    assert counters.uses_since(b"uu", counters.SAVE) == 2
    assert (counters.total_uses(log), counters.saves(log)) == (8, 1)
