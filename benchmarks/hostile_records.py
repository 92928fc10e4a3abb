"""SessionStart and a save with a hostile provenance record, whole process, first start (no cached verdicts).

Two records that arrive by ``keeper import`` or sync, each beside a memory.md of 200 decisions:
``edits``, 20,000 ``edited`` events, each item edited from the one before (a chain that cost
0.4.0 quadratic time and memory), and ``files``, one session line naming 150,000 files with the
200 items' events naming that session. Each round runs ``python -m keeper hook session-start``
(and ``keeper save`` with ``--save``) as a fresh process with the stale-check cache removed first.

    python benchmarks/hostile_records.py [--rounds 3] [--src DIR] [--save]

``--src`` times another source tree (e.g. an export of 0.4.0) with the same interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ITEMS = 200
AT = "2026-11-20T10:00:00.000000"


def _item(i: int) -> str:
    return f"Decision number {i} keeps src/mod{i}.py small"


def _key(i: int) -> str:
    """The item's key in the record (``keeper.memory.items.key``)."""
    sys.path.insert(0, REPO)
    from keeper.memory.items import key

    return key(_item(i))


def _memory(name: str) -> str:
    lines = [f"# Project Memory: {name}", "", "## Core Decisions"]
    lines += [f"- {_item(i)}" for i in range(ITEMS)]
    return "\n".join([*lines, "", "## Current State", "- Last updated: 2026-11-20 10:00", ""]) + "\n"


def _edits() -> list[dict[str, object]]:
    """20,000 edited events, each from the item before; the chain ends at the 200 real items."""
    chain = [f"old item {i}" for i in range(20_000 - ITEMS)] + [_key(i) for i in range(ITEMS)]
    found: list[dict[str, object]] = [{"at": AT, "event": "added", "item": chain[0], "session": "s1"}]
    for before, item in zip(chain, chain[1:]):
        found.append({"at": AT, "event": "edited", "item": item, "from": before, "session": "s1"})
    return found


def _ordinary() -> list[dict[str, object]]:
    """For comparison: 20,000 events as Keeper writes them, 100 saves confirming the 200 items."""
    found: list[dict[str, object]] = []
    for save in range(100):
        at = f"2026-11-{1 + save // 24:02d}T{save % 24:02d}:00:00.000000"
        found.append({"at": at, "event": "session", "item": "", "session": f"s{save}", "files": ["src/a.py"]})
        found += [
            {"at": at, "event": "confirmed", "item": _key(i), "section": "decisions", "session": f"s{save}"}
            for i in range(ITEMS)
        ]
    return found


def _files() -> list[dict[str, object]]:
    """One session line naming 150,000 files; every item's event names that session."""
    line: dict[str, object] = {"at": AT, "event": "session", "item": "", "session": "s1"}
    line["files"] = [f"src/f{i}.py" for i in range(150_000)]
    return [line] + [  # each item saved at its own minute: no two share a staleness check
        {
            "at": f"2026-11-20T{i // 60:02d}:{i % 60:02d}:00.000000",
            "event": "added",
            "item": _key(i),
            "session": "s1",
        }
        for i in range(ITEMS)
    ]


def _store(base: str, events: list[dict[str, object]]) -> tuple[dict[str, str], str, str]:
    """A store with one project holding ``events``; its environment, the project's folder and its state."""
    root = os.path.join(base, "api")
    os.makedirs(os.path.join(root, ".git"))
    env = {**os.environ, "KEEPER_HOME": os.path.join(base, "store"), "HOME": base, "PYTHONPATH": SRC[0]}
    env = {k: v for k, v in env.items() if not k.startswith(("CLAUDE_", "XDG_"))}
    command = [sys.executable, "-m", "keeper", "save", "--summary", "set up", "--project-dir", root]
    subprocess.run(command, env=env, check=True, capture_output=True, cwd=base)
    projects = os.path.join(base, "store", "projects")
    folder = os.path.join(projects, os.listdir(projects)[0])
    with open(os.path.join(folder, "memory.md"), "w", encoding="utf-8") as fh:
        fh.write(_memory("api"))
    with open(os.path.join(folder, "provenance.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e, sort_keys=True) + "\n" for e in events)
    return env, root, folder


def _time(command: list[str], env: dict[str, str], stdin: str, state: str) -> float:
    shutil.rmtree(state, ignore_errors=True)  # no cached verdicts: the first start after a sync
    began = time.perf_counter()
    # run from the project: ``python -m`` puts the working directory first on sys.path
    done = subprocess.run(command, input=stdin.encode(), env=env, capture_output=True, timeout=900, cwd=env["HOME"])
    took = time.perf_counter() - began
    if done.returncode != 0 or (stdin and b"Decision number" not in done.stdout):
        sys.exit(f"failed (no memory given): {done.stdout.decode()[-300:]} {done.stderr.decode()[-500:]}")
    return took


SRC = [REPO]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--src", default=REPO)
    parser.add_argument("--save", action="store_true", help="time a save after the start too")
    args = parser.parse_args()
    SRC[0] = os.path.abspath(args.src)
    cases = (
        ("20,000 ordinary events", _ordinary()),
        ("20,000 edited events", _edits()),
        ("150,000-file session line", _files()),
    )
    for name, events in cases:
        with tempfile.TemporaryDirectory() as base:
            env, root, folder = _store(base, events)
            payload = json.dumps({"session_id": "s9", "cwd": root, "source": "startup"})
            state = os.path.join(folder, "state")
            start = [sys.executable, "-m", "keeper", "hook", "session-start"]
            times = [_time(start, env, payload, state) for _ in range(args.rounds)]
            print(f"session-start, {name}: median {statistics.median(times):.2f} s, max {max(times):.2f} s", flush=True)
            if args.save:
                save = [
                    sys.executable,
                    "-m",
                    "keeper",
                    "save",
                    "--decision",
                    "Decision number 7 keeps src/mod7.py tiny",
                    "--project-dir",
                    root,
                ]
                took = _time(save, env, "", os.path.join(base, "nothing"))
                print(f"save, {name}: {took:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
