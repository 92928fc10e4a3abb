"""Redaction in linear time: adversarial 1 MB inputs, and what importing and a first call cost.

    python benchmarks/redact.py                  # every shape at 1 MiB, slowest first
    python benchmarks/redact.py --mb 4 --top 10  # four times the size: times should grow ~4x
    python benchmarks/redact.py --check 1.0      # exit 1 when a shape takes longer than 1 s

Shapes are the inputs that make backtracking regexes blow up (long runs of one character, a
rule's prefix repeated, unterminated quotes, dense near-matches, dense real matches) plus, for
every rule, each of its keywords repeated alone, followed by "=", and heading a long token.
tests/test_redact.py runs the same shapes at 16 KB, untimed, so a hang shows in the suite.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from keeper import redact, secret_rules  # noqa: E402 - after the path is set, to time this checkout

FIXED = {
    "dashes": "-",
    "equals": "=",
    "x-token": "x-token",
    "a:a@": "a:a@",
    "://a:": "://a:",
    "unterminated password": '"password": "',
    "token=": "token=",
    "token=a ": "token=a ",
    "dense assignments": "DB_PASS=hunter2x\n",
    "bearer": "Authorization: Bearer ",
    "cookie pairs": "Cookie: a=bcd; ",
    "curl -u a:": "curl -u a:",
    "mysql args": "mysql -x ",
    "markers": "[REDACTED:secret]",
    "private key headers": "-----BEGIN RSA PRIVATE KEY-----",
    "dotted identifiers": "self.password.token.",
    "camel names": "dbPassword",
    "dotless I": "İ",
}
PROSE = (  # noqa: SIM905 - a word list reads best as text
    "the token bucket limits requests password reset flow passes the test and the secret santa "
    "key of the map auth module credentials page commit 3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a "
    "uuid 123e4567-e89b-12d3-a456-426614174000 docker run -p 8080:80 https://example.com/a?b=c"
).split()


def shapes(size: int) -> dict[str, str]:
    """Name -> an adversarial text of ``size`` characters."""
    rng = random.Random(7)
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    made = {name: (unit * (size // len(unit) + 1))[:size] for name, unit in FIXED.items()}
    made["base64 blob"] = "".join(rng.choice(b64) for _ in range(size))
    made["unterminated password + a"] = ('"password": "' + "a" * size)[:size]
    made["url + a:"] = ("https://" + "a:" * (size // 2))[:size]
    made["prose"] = " ".join(rng.choice(PROSE) for _ in range(size // 6))[:size]
    for rule in secret_rules.RULES:
        for keyword in rule.keywords:
            for label, unit in (("", keyword), ("=", keyword + "="), (" long", keyword + "A1b2" * 40 + " ")):
                made[f"{rule.kind} {keyword!r}{label}"] = (unit * (size // len(unit) + 1))[:size]
    return made


def time_one(text: str, rounds: int) -> float:
    """Median seconds of ``rounds`` calls (a first, untimed call compiles the rules the text needs)."""
    redact.redact(text[:1000])
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        redact.redact(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_cost(rounds: int) -> None:
    """Fresh processes: the import alone, then a first call on clean text and on text with a secret."""
    snippets = {
        "import keeper.redact": "import keeper.redact",
        "+ first call, nothing to redact": "import keeper.redact as r; r.redact('ran the tests, all green')",
        "+ first call, one secret": "import keeper.redact as r; r.redact('export API_TOKEN=abc123def456')",
    }
    env = {**os.environ, "PYTHONPATH": ROOT}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for label, code in snippets.items():
        probe = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
        runs = [
            float(
                subprocess.run(
                    [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
                ).stdout
            )
            for _ in range(rounds)
        ]
        print(f"{label:<34} {statistics.median(runs) * 1000:6.2f} ms (median of {rounds} processes)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="input size in MiB (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="timed calls per shape (default 3)")
    parser.add_argument("--top", type=int, default=15, help="print the slowest N shapes (default 15)")
    parser.add_argument("--check", type=float, help="exit 1 if a shape takes longer than this many seconds")
    parser.add_argument("--imports", type=int, default=20, help="fresh processes for the import timing (0: skip)")
    args = parser.parse_args()
    size = int(args.mb * (1 << 20))
    results = sorted(((time_one(text, args.rounds), name) for name, text in shapes(size).items()), reverse=True)
    print(f"{len(results)} shapes of {size:,} characters, median of {args.rounds} calls, slowest first:")
    for seconds, name in results[: args.top]:
        print(f"{seconds * 1000:9.1f} ms  {name}")
    print(f"median shape {statistics.median(s for s, _ in results) * 1000:.1f} ms")
    if args.imports:
        import_cost(args.imports)
    return 1 if args.check is not None and results[0][0] > args.check else 0


if __name__ == "__main__":
    sys.exit(main())
