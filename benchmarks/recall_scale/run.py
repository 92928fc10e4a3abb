"""Recall at scale: stores of 100 to 50,000 session files of about 2 KB, timed as whole processes.

    python benchmarks/recall_scale/run.py [--sizes 100,1000,10000,50000] [--rounds 15] [--keeper PATH]

For each size, in a fresh store: the first `keeper recall` (which builds the index), the index's
size against the text's, then interleaved rounds of warm `keeper recall`, `grep -ril` over the
same files, automatic recall (the UserPromptSubmit hook with a 9-word prompt) and `python -c
pass`; then the call after one new session file. By default Keeper runs as a plugin install runs
it, through `bin/keeper` and the environment `keeper/plugin/bootstrap.py` sets up (see
benchmarks/hooks.py); `--keeper PATH` times a console script instead.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from hooks import keeper_command, plugin_command

WORDS = (  # noqa: SIM905 - a word list reads best as text
    "cache invalidation websocket reconnect backoff thumbnail worker queue invoice renderer tax rounding "
    "checkout discount stacking coupon webhook signature retry jitter timeout pagination cursor index "
    "migration schema column nullable constraint deadlock transaction isolation replica lag failover "
    "token refresh session cookie csrf header cors preflight upload multipart chunked stream gzip brotli "
    "locale fallback translation plural currency exchange rate snapshot nightly report export csv "
    "search ranking synonym stemming analyzer shard replica latency percentile alert dashboard metric"
).split()
QUERY = ["websocket", "reconnect", "backoff"]
PROMPT = "why does the websocket reconnect backoff ignore jitter"


def _vocabulary(size: int = 20_000, seed: int = 3) -> list[str]:
    """Made-up words, so that word frequencies follow a Zipf curve as in real text."""
    rng = random.Random(seed)
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    made = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size * 2)}
    return sorted(made)[:size]


VOCABULARY = _vocabulary()
ZIPF = [1 / (rank + 1) for rank in range(len(VOCABULARY))]


def session_text(i: int, rng: random.Random) -> str:
    topic = rng.sample(WORDS, 6)
    body = " ".join(rng.choices(VOCABULARY, weights=ZIPF, k=200) + rng.choices(topic, k=30))
    return (
        f"# Session 2026-{1 + i % 12:02d}-{1 + i % 28:02d} 10:00 · shop-api\n\n- Session id: s{i:05d}\n\n"
        f"## Saves\n\n### 11:00 save\n\nWorked on {' '.join(topic)} in module_{i % 97}.\n\n{body}\n\n"
        f"## Activity\n\n- Prompts (1):\n  1. look at {topic[0]} {topic[1]}\n- Commands (1 most recent):\n  - `pytest tests/test_{topic[2]}.py`\n"
    )


def timed(cmd: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    if done.returncode not in (0, 1):  # grep -l exits 1 when nothing matches
        sys.exit(f"{cmd[:3]} failed: {done.stderr[-400:]!r}")
    return (time.perf_counter() - start) * 1000


def medians(rounds: int, commands: dict[str, tuple[list[str], bytes]], env: dict[str, str]) -> dict[str, float]:
    """Each command ``rounds`` times, in a new random order every round, so noise hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for _ in range(rounds):
        random.shuffle(names)
        for name in names:
            cmd, stdin = commands[name]
            times[name].append(timed(cmd, env, stdin))
    return {name: statistics.median(values) for name, values in times.items()}


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def make_store(
    keeper: list[str], size: int, env_extra: dict[str, str], prefix: str
) -> tuple[Path, dict[str, str], Path]:
    """A fresh store of ``size`` session files (the same ones for every build): its base folder, the
    environment that points ``keeper`` at it, and its sessions folder."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    project = base / "shop-api"
    (project / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE_"))}
    env.update(KEEPER_HOME=str(base / "store"), CLAUDE_PROJECT_DIR=str(project), **env_extra)
    status = subprocess.run([*keeper, "status", "--json"], env=env, capture_output=True, check=True)
    sessions = Path(json.loads(status.stdout)["store"]) / "sessions"
    sessions.mkdir(parents=True)
    rng = random.Random(11)
    for i in range(size):
        (sessions / f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}_{i:05d}.md").write_text(
            session_text(i, rng), encoding="utf-8"
        )
    return base, env, sessions


def measure(size: int, rounds: int, keeper: list[str], hook: list[str], python: str, env_extra: dict[str, str]) -> dict:
    """One fresh store of ``size`` session files, measured."""
    base, env, sessions = make_store(keeper, size, env_extra, "keeper-scale-")
    store, project = sessions.parent, base / "shop-api"
    text = folder_bytes(sessions)
    first = timed([*keeper, "recall", *QUERY], env)
    index = sum(f.stat().st_size for f in (store / "state").glob("index.sqlite3*"))
    payload = json.dumps({"session_id": "bench", "cwd": str(project), "prompt": PROMPT}).encode()
    warm = medians(
        rounds,
        {
            "pass": ([python, "-c", "pass"], b""),
            "recall": ([*keeper, "recall", *QUERY], b""),
            "grep": (["grep", "-ril", QUERY[0], str(sessions)], b""),
            "auto": ([*hook, "user-prompt-submit"], payload),
        },
        env,
    )
    (sessions / "2026-12-31_99999.md").write_text(session_text(99999, random.Random(11)), encoding="utf-8")
    after_new = timed([*keeper, "recall", *QUERY], env)
    shutil.rmtree(base, ignore_errors=True)
    return {
        "sessions": size,
        "text_bytes": text,
        "index_bytes": index,
        "first_ms": first,
        "after_new_ms": after_new,
        **warm,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated session counts")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--keeper", help="time this keeper script instead of the plugin's launcher")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="keeper-scale-env-")
    if args.keeper:
        script, python = keeper_command(args.keeper)
        keeper, hook, env_extra = [script], [script, "hook"], {}
    else:
        hook, python, env_extra = plugin_command(base)
        keeper = [os.path.join(env_extra["CLAUDE_PLUGIN_ROOT"], "bin", "keeper")]
    print(f"keeper: {' '.join(keeper)}; hooks: {' '.join(hook)}; python: {python}; {args.rounds} rounds")
    head = f"{'sessions':>8} {'text MiB':>8} {'index/text':>10} {'first s':>8} {'recall ms':>9} {'grep ms':>8}"
    print(head + f" {'recall/grep':>11} {'auto ms':>8} {'auto/pass':>9} {'after new ms':>12}")
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        r = measure(size, args.rounds, keeper, hook, python, env_extra)
        results.append(r)
        print(
            f"{size:8d} {r['text_bytes'] / (1 << 20):8.1f} {r['index_bytes'] / r['text_bytes']:10.2f} "
            f"{r['first_ms'] / 1000:8.2f} {r['recall']:9.1f} {r['grep']:8.1f} {r['recall'] / r['grep']:11.2f} "
            f"{r['auto']:8.1f} {r['auto'] / r['pass']:9.2f} {r['after_new_ms']:12.1f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
