"""What adding to a large provenance record costs: a save and a Stop's use receipts, at records of
1,000 / 10,000 / 50,000 events, merged whole (before) and appended in place (now).

    python benchmarks/provenance_append.py [--sizes 1000 10000 50000] [--rounds 7]

Each size: a throwaway store whose project's record holds N events as Keeper writes them (a
quarter use receipts, a quarter session lines with five changed files, half confirmations with a
claim). Then, CPU time of the process (median of the rounds):
- ``provenance.append`` with a save's events (a session line, two added items, one confirmed)
  and with a Stop's receipts (two ``used`` events), as ``keeper.capture.saving`` and
  ``keeper.capture.receipts.record`` call it;
- a whole ``keeper save`` in process (``main(["save", ...])``: memory.md merged, the record read
  for hand edits, the events appended).
"Merged whole" removes the record's seal before each call, which sends ``append`` down the full
merge it always took before (plus the seal it now writes after it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def past_event(i: int) -> dict[str, Any]:
    """The i-th event of a record built over the past year: receipts, session lines, confirmations."""
    at = f"2026-01-01T00:{i // 1_000_000:02d}:00.{i % 1_000_000:06d}+00:00"
    item = f"Item {i % 300} says something about src/mod{i % 300}.py and X = {i % 300}"
    session = f"{i // 40:08x}-aaaa-4bbb-8ccc-dddddddddddd"
    if i % 4 == 0:
        return {"at": at, "event": "used", "item": item, "session": session, "where": "reply"}
    if i % 4 == 1:
        files = [f"src/mod{(i + j) % 300}.py" for j in range(5)]
        return {"at": at, "event": "session", "item": "", "session": session, "machine": "host", "files": files}
    claim = [{"kind": "path", "name": f"src/mod{i % 300}.py", "in": []}]
    return {"at": at, "event": "confirmed", "item": item, "text": item, "section": "decisions", "claims": claim}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def save_events() -> list[dict[str, Any]]:
    at = now()
    return [
        {"at": at, "event": "session", "item": "", "session": "s", "machine": "host", "files": ["src/a.py"]},
        {"at": at, "event": "added", "item": "Use Postgres", "text": "Use Postgres", "section": "decisions"},
        {"at": at, "event": "added", "item": "Cache in src/cache.py", "text": "Cache in src/cache.py"},
        {"at": at, "event": "confirmed", "item": "Item 1 says", "text": "Item 1 says", "section": "decisions"},
    ]


def receipt_events() -> list[dict[str, Any]]:
    at = now()
    return [{"at": at, "event": "used", "item": f"Item {n} says", "session": "s", "where": "tool"} for n in (1, 2)]


def cpu(action: Callable[[], object], before: Callable[[], object], rounds: int) -> float:
    """Median CPU seconds of ``action`` (``before`` runs first each round, untimed)."""
    found = []
    for _ in range(rounds):
        before()
        start = time.process_time()
        action()
        found.append(time.process_time() - start)
    return statistics.median(found)


def bench(size: int, rounds: int) -> dict[str, float]:
    from keeper.cli import main
    from keeper.store import identity, paths, provenance

    with tempfile.TemporaryDirectory() as top:
        os.environ["KEEPER_HOME"] = os.path.join(top, "store")
        root = os.path.join(top, "project")
        os.makedirs(root)
        os.chdir(root)
        project = identity.make_project(identity.find_project_root(root))
        provenance.append(project.dir, [past_event(i) for i in range(size)])  # merged whole, and sealed
        seal = os.path.join(project.dir, paths.STATE_DIR, paths.RECORD_SEAL)

        def unseal() -> None:
            if os.path.exists(seal):
                os.unlink(seal)

        def kept() -> None:
            pass

        count = [0]

        def save() -> None:
            count[0] += 1
            with contextlib.redirect_stdout(io.StringIO()):
                main(["save", "--session", f"bench-{count[0]}", "--decision", f"Decision {count[0]} of the bench"])

        found: dict[str, float] = {}
        for name, events in (("save", save_events), ("stop", receipt_events)):
            for way, ready in (("whole", unseal), ("appended", kept)):
                add = lambda made=events: provenance.append(project.dir, made())  # noqa: E731
                found[f"{name} append, {way}"] = cpu(add, ready, rounds)
        for way, ready in (("whole", unseal), ("appended", kept)):
            found[f"keeper save, {way}"] = cpu(save, ready, rounds)
        return found


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 50_000])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for size in args.sizes:
        for name, seconds in bench(size, args.rounds).items():
            print(f"{size:>6} events  {name:<24} {seconds * 1000:8.1f} ms CPU")


if __name__ == "__main__":
    main_()
