"""Two builds of Keeper on the same large store, timed in one interleaved run: is recall slower?

    python benchmarks/recall_scale/ab.py --before OLD/bin/keeper --after NEW/bin/keeper [--sessions 10000] [--rounds 25]

Each build gets its own copy of run.py's store (same seed, same files) and builds its index
twice (the first recall, timed); then warm `keeper recall`, a recall with a numeric date and
automatic recall (the UserPromptSubmit hook) of both builds, `grep -ril` over the same files and
`python -c pass`, run in a new random order every round, so that a busy machine slows both alike.
Reports the median wall time and the median CPU time of each process tree (user + system: what a
loaded machine inflates least), and each build's warm recall against grep.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run
from run import PROMPT, QUERY, timed


def cpu_timed(cmd: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, float]:
    """``(wall ms, CPU ms of the process tree)`` of one run."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, env, stdin)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime) * 1000


def make_store(keeper: str, size: int) -> tuple[Path, dict[str, str], Path]:
    base, env, sessions = run.make_store([keeper], size, {}, "keeper-ab-")
    return base, env, sessions.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the older build's keeper script")
    parser.add_argument("--after", required=True, help="the newer build's keeper script")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    builds = {"before": args.before, "after": args.after}
    stores = {name: make_store(keeper, args.sessions) for name, keeper in builds.items()}
    first: dict[str, list[float]] = {name: [] for name in builds}
    for name in ["before", "after", "before", "after"]:
        _, env, store = stores[name]
        for part in (store / "state").glob("index.sqlite3*"):
            part.unlink()
        first[name].append(timed([builds[name], "recall", *QUERY], env))
    commands: list[tuple[str, list[str], dict[str, str], bytes]] = []
    for name, (base, env, _) in stores.items():
        payload = json.dumps({"session_id": "bench", "cwd": str(base / "shop-api"), "prompt": PROMPT}).encode()
        commands += [
            (f"{name}: recall", [builds[name], "recall", *QUERY], env, b""),
            (f"{name}: recall with a date", [builds[name], "recall", QUERY[0], QUERY[2], "on", "19.01.2026"], env, b""),
            (f"{name}: automatic recall", [builds[name], "hook", "user-prompt-submit"], env, payload),
        ]
    commands.append(("python -c pass", [sys.executable, "-c", "pass"], stores["after"][1], b""))
    grep = ["grep", "-ril", QUERY[0], str(stores["after"][2] / "sessions")]
    commands.append(("grep -ril", grep, stores["after"][1], b""))
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in commands}
    for _ in range(args.rounds):
        random.shuffle(commands)
        for name, cmd, env, stdin in commands:
            times[name].append(cpu_timed(cmd, env, stdin))
    for name, values in first.items():
        print(f"{name}: first build {', '.join(f'{v / 1000:.2f} s' for v in values)}")
    wall = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    for name in sorted(times):
        print(f"{name:32} median {wall[name]:7.1f} ms, cpu {cpu[name]:7.1f} ms")
    for name in builds:
        recall, against = f"{name}: recall", "grep -ril"
        print(
            f"{name}: warm recall / grep: {wall[recall] / wall[against]:.2f}x wall, {cpu[recall] / cpu[against]:.2f}x cpu"
        )
    for base, _, _ in stores.values():
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
