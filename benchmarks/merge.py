"""How long merging memory.md takes as it grows: merge3 at 1,000 / 10,000 / 100,000 items, import's
merge of 3,000 items and a save of 4,000 list items (both under the project lock).

    python benchmarks/merge.py [--sizes 1000 10000 100000] [--import-items 3000] [--save-items 4000]

Each merge: an ancestor with N decisions; one side retires 1% and adds 5%, the other adds 5% and
re-dates 1%; the best of three runs is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def document(decisions: list[str], state: str = "2026-01-01 10:00") -> str:
    lines = ["# Project Memory: bench", "", "## Core Decisions", ""]
    lines += [f"- {d}" for d in decisions]
    lines += ["", "## Current State", "", f"- Last updated: {state}", "- working", ""]
    lines += ["## Recent Context", "", "- 2026-01-01: work", "", "## Known Issues", "", "A hand line.", ""]
    return "\n".join(lines)


def bench_merge(n: int) -> float:
    from keeper.memory.merge import merge3

    base_items = [f"Decision {i} about module m{i} uses store s{i % 97} (2026-01-01)" for i in range(n)]
    extra = max(1, n // 20)
    ours_items = base_items[n // 100 :] + [f"Ours adds {i} for part p{i} (2026-01-02)" for i in range(extra)]
    theirs_items = [
        d.replace("(2026-01-01)", "(2026-01-03)") if i < n // 100 + 5 else d for i, d in enumerate(base_items)
    ]
    theirs_items += [f"Theirs adds {i} for part q{i} (2026-01-03)" for i in range(extra)]
    base, ours, theirs = document(base_items), document(ours_items, "2026-01-02 10:00"), document(theirs_items)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        merge3(base, ours, theirs, recent_sessions=3)
        best = min(best, time.perf_counter() - start)
    return best


def bench_import(n: int) -> float:
    """Seconds import's two-way ``merge_file`` takes for two memory.md of ``n`` items, half shared
    (what ``keeper import`` does under the project lock)."""
    from keeper.memory.merge import merge_file

    mine = document([f"Decision {i} about module m{i} (2026-01-01)" for i in range(n)])
    theirs = document([f"Decision {i} about module m{i} (2026-01-01)" for i in range(n // 2, n + n // 2)])
    start = time.perf_counter()
    merge_file(mine, {}, theirs, {}, frozenset())
    return time.perf_counter() - start


def bench_save(count: int) -> float:
    """Seconds a save of ``count`` decisions (then ``count`` more, half known) spends under the lock."""
    from keeper.capture import saving
    from keeper.memory import document as doc
    from keeper.store import config, paths

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KEEPER_HOME"] = tmp
        project = paths.Project(tmp, "bench", os.path.join(tmp, "projects", "bench"))
        cfg = config.load(None)
        first = doc.SaveInput(decisions=[f"Decision {i} about module m{i}" for i in range(count)])
        saving.save(project, cfg, first, "s1", now=datetime(2026, 1, 1, 10, 0))
        second = doc.SaveInput(
            decisions=[f"Decision {i} about module m{i}" for i in range(count // 2, count + count // 2)]
        )
        start = time.perf_counter()
        saving.save(project, cfg, second, "s1", now=datetime(2026, 1, 2, 10, 0))
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument("--save-items", type=int, default=4000)
    parser.add_argument("--import-items", type=int, default=3000)
    args = parser.parse_args()
    for n in args.sizes:
        print(f"merge3, {n:>7,} items: {bench_merge(n) * 1000:8.1f} ms")
    if args.import_items:
        print(
            f"import merge of {args.import_items:,} items into {args.import_items:,}: {bench_import(args.import_items) * 1000:8.1f} ms"
        )
    if args.save_items:
        print(
            f"save of {args.save_items:,} items into {args.save_items:,}: {bench_save(args.save_items) * 1000:8.1f} ms"
        )


if __name__ == "__main__":
    main()
