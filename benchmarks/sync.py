"""``keeper sync`` at scale: a first sync, a sync with nothing new, and one after a new save.

    python benchmarks/sync.py [--sessions 100 10000] [--rounds 3]

For each size, a throwaway store holds one project with that many session files (about 1.5 KB
each, written directly: 10,000 fsynced saves would take minutes) and a memory.md, and a local bare
repository is the remote. Each timing is the whole ``keeper sync`` process (interpreter start
included), the median of ``--rounds``:

- first sync: recording the remote and pushing everything (a fresh store and remote each round);
- first sync on a second machine: receiving everything into an empty store;
- nothing new: the sync the hooks start most often;
- one new save: ``keeper save`` then the timed sync.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BODY = "".join(f"- Tool uses: {i}\n- Note {i}: refactored module_{i} and ran the tests again\n" for i in range(12))


def make_store(home: str, sessions: int) -> str:
    project = os.path.join(home, "work", "proj")
    os.makedirs(os.path.join(project, ".git"))
    with open(os.path.join(project, ".git", "config"), "w") as fh:
        fh.write('[remote "origin"]\n\turl = https://example.com/me/proj.git\n')
    env = {**os.environ, "KEEPER_HOME": os.path.join(home, "store")}
    subprocess.run(
        [sys.executable, "-m", "keeper", "save", "--project-dir", project, "--decision", "Use FTS5"],
        env=env,
        check=True,
        capture_output=True,
    )
    folder = next(
        os.path.join(home, "store", "projects", d, "sessions")
        for d in os.listdir(os.path.join(home, "store", "projects"))
    )
    for n in range(sessions):
        day, minute = divmod(n, 1440)
        name = f"2025-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}_{minute // 60:02d}{minute % 60:02d}.md"
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            fh.write(f"# Session {name[:-3]}\n\n- Session id: s{n}\n{BODY}")
    return project


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "keeper", *argv], env=env, capture_output=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"keeper {' '.join(argv)} failed: {done.stderr.decode()}")
    return took


def run(sessions: int, rounds: int) -> dict[str, float]:
    results: dict[str, list[float]] = {
        "first sync": [],
        "first sync, second machine": [],
        "nothing new": [],
        "one new save": [],
    }
    for _ in range(rounds):
        base = tempfile.mkdtemp(prefix="keeper-bench-sync-")
        try:
            project = make_store(base, sessions)
            remote = os.path.join(base, "remote.git")
            subprocess.run(["git", "init", "-q", "--bare", remote], check=True)
            env = {**os.environ, "KEEPER_HOME": os.path.join(base, "store")}
            other = {**os.environ, "KEEPER_HOME": os.path.join(base, "store-2")}
            results["first sync"].append(timed(["sync", "--remote", remote], env))
            results["first sync, second machine"].append(timed(["sync", "--remote", remote], other))
            results["nothing new"].append(timed(["sync"], env))
            subprocess.run(
                [sys.executable, "-m", "keeper", "save", "--project-dir", project, "--decision", "One more"],
                env=env,
                check=True,
                capture_output=True,
            )
            results["one new save"].append(timed(["sync"], env))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    return {name: statistics.median(values) for name, values in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{'sessions':>8}  {'case':28} {'median s':>8}")
    for size in args.sessions:
        for name, value in run(size, args.rounds).items():
            print(f"{size:>8}  {name:28} {value:8.2f}")


if __name__ == "__main__":
    main()
