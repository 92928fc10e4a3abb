"""Recall at scale: 10,000 session files of about 2 KB, timed as whole processes.

    python benchmarks/recall_scale/run.py [--sessions 10000] [--rounds 15]

Reports the first `keeper recall` (which builds the index), warm `keeper recall` against
`grep -ril` over the same files, the call after one new session file, and automatic recall
(the UserPromptSubmit hook) at 1,000 and at the full count against `python -c pass`.
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

WORDS = (  # noqa: SIM905 - a word list reads best as text
    "cache invalidation websocket reconnect backoff thumbnail worker queue invoice renderer tax rounding "
    "checkout discount stacking coupon webhook signature retry jitter timeout pagination cursor index "
    "migration schema column nullable constraint deadlock transaction isolation replica lag failover "
    "token refresh session cookie csrf header cors preflight upload multipart chunked stream gzip brotli "
    "locale fallback translation plural currency exchange rate snapshot nightly report export csv "
    "search ranking synonym stemming analyzer shard replica latency percentile alert dashboard metric"
).split()


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
    subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    return (time.perf_counter() - start) * 1000


def median_of(rounds: int, *commands: tuple[str, list[str], bytes], env: dict[str, str]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    for _ in range(rounds):
        order = list(commands)
        random.shuffle(order)
        for name, cmd, stdin in order:
            times[name].append(timed(cmd, env, stdin))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    keeper = shutil.which("keeper")
    if not keeper:
        sys.exit("install Keeper first: python -m pip install .")
    python = sys.executable
    base = Path(tempfile.mkdtemp(prefix="keeper-scale-"))
    project = base / "shop-api"
    (project / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE_"))}
    env.update(KEEPER_HOME=str(base / "store"), CLAUDE_PROJECT_DIR=str(project))
    status = json.loads(subprocess.run([keeper, "status", "--json"], env=env, capture_output=True, check=True).stdout)
    sessions = Path(status["store"]) / "sessions"
    sessions.mkdir(parents=True)
    rng = random.Random(11)
    small = min(1000, args.sessions)
    for i in range(args.sessions):
        (sessions / f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}_{i:05d}.md").write_text(
            session_text(i, rng), encoding="utf-8"
        )
        if i + 1 == small:
            hook_payload = json.dumps(
                {
                    "session_id": "bench",
                    "cwd": str(project),
                    "prompt": "why does the websocket reconnect backoff ignore jitter",
                }
            ).encode()
            subprocess.run([keeper, "recall", "warm", "up"], env=env, capture_output=True, check=True)
            at_small = median_of(
                args.rounds,
                ("pass", [python, "-c", "pass"], b""),
                ("auto", [keeper, "hook", "user-prompt-submit"], hook_payload),
                env=env,
            )
    sizes = [f.stat().st_size for f in sessions.iterdir()]
    print(
        f"{len(sizes)} session files, {statistics.mean(sizes) / 1024:.1f} KB on average, {sum(sizes) / (1 << 20):.1f} MiB"
    )
    query = ["websocket", "reconnect", "backoff"]
    first = timed([keeper, "recall", *query], env)
    warm = median_of(
        args.rounds,
        ("keeper recall", [keeper, "recall", *query], b""),
        ("grep -ril", ["grep", "-ril", query[0], str(sessions)], b""),
        env=env,
    )
    (sessions / "2026-12-31_99999.md").write_text(session_text(99999, rng), encoding="utf-8")
    after_new = timed([keeper, "recall", *query], env)
    hook_payload = json.dumps(
        {"session_id": "bench", "cwd": str(project), "prompt": "why does the websocket reconnect backoff ignore jitter"}
    ).encode()
    at_full = median_of(
        args.rounds,
        ("pass", [python, "-c", "pass"], b""),
        ("auto", [keeper, "hook", "user-prompt-submit"], hook_payload),
        env=env,
    )
    print(f"first keeper recall (builds the index)  {first:8.0f} ms")
    print(f"warm keeper recall                      {warm['keeper recall']:8.1f} ms")
    print(f"grep -ril over the same files           {warm['grep -ril']:8.1f} ms")
    print(
        f"  ratio keeper / grep                   {warm['keeper recall'] / warm['grep -ril']:8.2f}x   (target <= 0.5x, must <= 1.0x)"
    )
    print(f"keeper recall after one new file        {after_new:8.1f} ms")
    for label, result in ((f"{small}", at_small), (f"{args.sessions}", at_full)):
        print(
            f"automatic recall hook at {label:>6} sessions {result['auto']:6.1f} ms vs python -c pass {result['pass']:5.1f} ms"
            f" = {result['auto'] / result['pass']:.2f}x (must <= 4x)"
        )
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
