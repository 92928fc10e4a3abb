"""Use receipts, measured: precision and recall of "used" on a labelled set of scripted sessions.

A project's memory.md holds twelve decisions and issues (``ITEMS``). Each of the 40 sessions
(``SESSIONS``) starts through the real ``keeper hook session-start`` (which shows the items and
remembers their ids), writes its Claude Code transcript (``tests.transcripts``), and stops through
the real ``keeper hook stop``; the ``used`` events in the provenance record are then compared with
the labels. Half the sessions (20) use one item by its specific tokens (a command it names, a file, a
port, an identifier), in a tool's input or in a reply; the other half share only common words with
an item, or name a specific token only after the user's prompt did, or only in a save restating
the item, or only in a tool's result, or nothing at all. Every (session, item) pair is one
decision: 40 x 12 = 480. Then the cost of looking: the words of 2 MB of replies and tool inputs
checked against 200 watched items (the bounds a Stop keeps to).

    python benchmarks/receipts.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from tests.transcripts import Transcript  # noqa: E402

ITEMS = [
    "Retries go through `with_backoff()` in src/net/retry.py, capped at 5 attempts",
    "The dev server listens on port 8731; never bind 8080",
    "Prices are cached for 30 seconds in src/cache.py (PRICE_TTL)",
    "Run `make lint-all` before pushing; CI rejects unformatted code",
    "Migrations are written with Alembic, never by hand: `alembic revision --autogenerate`",
    "Feature flags live in config/flags.yaml and are read by FlagStore",
    "We prefer small commits and clear messages when we change the code",
    "Timestamps are stored as UTC; convert only in the UI layer",
    "The payment client is StripeGateway; test keys come from STRIPE_TEST_KEY",
    "Logs go to Loki through Promtail, not to files",
    "Use pnpm, not npm, for the web app in apps/web",
    "test_checkout_rounding is flaky on CI",  # an open issue
]
Step = tuple[str, ...]  # ("prompt", text) | ("reply", text) | ("tool", name, json input[, result])
# (label: the item used, or None; steps). How each was made: a positive does what the item says or
# names what it names, as an agent that read it would; a negative is a session an agent without
# the memory could write word for word.
SESSIONS: list[tuple[int | None, list[Step]]] = [
    (0, [("prompt", "the payment call times out sometimes, make it sturdier"),
         ("tool", "Edit", '{"file_path": "src/pay.py", "old_string": "charge()", "new_string": "with_backoff(charge)"}')]),
    (1, [("prompt", "start the dev server"), ("tool", "Bash", '{"command": "npm run dev -- --port 8731"}')]),
    (2, [("prompt", "prices look outdated after a minute?"), ("tool", "Read", '{"file_path": "src/cache.py"}'),
         ("reply", "PRICE_TTL is 30 seconds, so a minute-old price should not be served.")]),
    (3, [("prompt", "push my branch"), ("tool", "Bash", '{"command": "make lint-all && git push"}')]),
    (4, [("prompt", "add a column for the invoice note"),
         ("tool", "Bash", '{"command": "alembic revision --autogenerate -m invoice_note"}')]),
    (5, [("prompt", "turn on the new checkout for staff"),
         ("tool", "Edit", '{"file_path": "config/flags.yaml", "old_string": "", "new_string": "staff_checkout: true"}')]),
    (8, [("prompt", "write a test for refunds"),
         ("tool", "Write", '{"file_path": "tests/test_refund.py", "content": "gw = StripeGateway(os.environ[\\"STRIPE_TEST_KEY\\"])"}')]),
    (9, [("prompt", "where do the logs of the worker end up?"),
         ("reply", "Promtail ships them to Loki; query them in Grafana.")]),
    (10, [("prompt", "add lodash to the web app"), ("tool", "Bash", '{"command": "cd apps/web && pnpm add lodash"}')]),
    (11, [("prompt", "CI failed on my PR, take a look"),
          ("reply", "It is test_checkout_rounding, known to be flaky; rerunning the job.")]),
    (0, [("prompt", "how do we handle retries?"), ("reply", "Through with_backoff, at most 5 attempts.")]),
    (1, [("prompt", "what port should the proxy forward to?"), ("reply", "Forward to 8731, the dev server's port.")]),
    (2, [("prompt", "make prices stay longer"),
         ("tool", "Edit", '{"file_path": "src/cache.py", "old_string": "PRICE_TTL = 30", "new_string": "PRICE_TTL = 45"}')]),
    (5, [("prompt", "how do I add a flag?"), ("reply", "FlagStore reads them; add `beta_search: false` to the file.")]),
    (8, [("prompt", "where is the payment client used?"), ("tool", "Grep", '{"pattern": "StripeGateway", "path": "src"}')]),
    (10, [("prompt", "install the deps of the frontend"), ("tool", "Bash", '{"command": "cd apps/web && pnpm install"}')]),
    (4, [("prompt", "how do I change the schema?"),
         ("reply", "Let Alembic write it: `alembic revision --autogenerate`, then review the file.")]),
    (3, [("prompt", "is my change ready?"), ("tool", "Bash", '{"command": "make lint-all"}'), ("reply", "Clean.")]),
    (7, [("prompt", "show the order time to the user"),
         ("reply", "The order time stays in UTC in the database; I convert it in the UI component.")]),
    (9, [("prompt", "the worker crashed at night"), ("reply", "Let me look in Loki for its errors.")]),
    # negatives
    (None, [("prompt", "tidy up"), ("reply", "I will keep the commits small with clear messages as I change the code.")]),
    (None, [("prompt", "fix the typo in the readme"),
            ("tool", "Edit", '{"file_path": "README.md", "old_string": "teh", "new_string": "the"}')]),
    (None, [("prompt", "why does the server hang?"), ("tool", "Bash", '{"command": "ps aux | grep node"}'),
            ("reply", "The server process waits on a lock; the dev server was never started.")]),
    (None, [("prompt", "prices are slow"), ("reply", "Caching the prices would help; for how many seconds?")]),
    (None, [("prompt", "is anything listening on 8731?"), ("tool", "Bash", '{"command": "lsof -i :8731"}'),
            ("reply", "Nothing listens on 8731.")]),
    (None, [("prompt", "save what we know"),
            ("tool", "Bash", '{"command": "keeper save <<\'EOF\'\\ndecisions: The dev server listens on port 8731; never bind 8080\\nEOF"}')]),
    (None, [("prompt", "look at the network code"),
            ("tool", "Read", '{"file_path": "src/net/client.py"}', "def with_backoff(fn):\\n    ..."),
            ("reply", "The client wraps every call in a helper; nothing to change.")]),
    (None, [("prompt", "allow fewer attempts"),
            ("tool", "Edit", '{"file_path": "src/net/retry_policy.py", "old_string": "5", "new_string": "MAX_ATTEMPTS = 3"}')]),
    (None, [("prompt", "is the app healthy?"), ("tool", "Bash", '{"command": "curl -s localhost:3000/health"}')]),
    (None, [("prompt", "did the refund go through?"), ("reply", "Stripe's dashboard shows the refund as paid.")]),
    (None, [("prompt", "upgrade the packages"), ("tool", "Bash", '{"command": "npm outdated"}')]),
    (None, [("prompt", "roll this out slowly"), ("reply", "Feature flags could help roll this out to staff first.")]),
    (None, [("prompt", "write the changelog"),
            ("tool", "Write", '{"file_path": "CHANGELOG.md", "content": "- Fixed checkout rounding for discounts"}')]),
    (None, [("prompt", "move us to postgres 16"), ("reply", "Upgrading Postgres to 16 needs a dump and a restore.")]),
    (None, [("prompt", "the log times look odd"), ("reply", "The log timestamps are an hour off.")]),
    (None, [("prompt", "hello"), ("reply", "Hi! What shall we work on?")]),
    (None, [("prompt", "run `make lint-all` and tell me"), ("tool", "Bash", '{"command": "make lint-all"}'),
            ("reply", "make lint-all passes.")]),
    (None, [("prompt", "where are the tests?"), ("tool", "Bash", '{"command": "ls tests"}'),
            ("reply", "Tests are in tests/, one file a module.")]),
    (None, [("prompt", "add the discount to the order response"),
            ("reply", "The API returns JSON; I added a discount field to the order response.")]),
    (None, [("prompt", "what changed lately?"), ("tool", "Bash", '{"command": "git log --oneline -5"}')]),
]  # fmt: skip


def keeper(args: list[str], env: dict[str, str], cwd: str, data: dict[str, Any] | str) -> str:
    raw = data if isinstance(data, str) else json.dumps(data)
    run = subprocess.run(
        [sys.executable, "-m", "keeper", *args], input=raw, env=env, cwd=cwd, capture_output=True, text=True
    )
    if run.returncode != 0:
        raise SystemExit(f"keeper {' '.join(args)} failed: {run.stderr}")
    return run.stdout


def session(index: int, steps: list[Step], root: Path, env: dict[str, str]) -> None:
    """One scripted session: start (Keeper shows memory), the transcript, stop."""
    name = f"5e55{index:04d}-0000-4000-8000-00000000{index:04d}"
    transcript = Transcript(root.parent / f"{name}.jsonl", cwd=str(root))
    base = {"session_id": name, "transcript_path": str(transcript.path), "cwd": str(root)}
    for tally in Path(env["KEEPER_HOME"], "projects").glob("*/state/loads.cache"):  # every item shown at each
        tally.unlink()  # start: this measures attribution, not what the start loads by evidence (store.loads)
    keeper(["hook", "session-start"], env, str(root), {**base, "source": "startup"})
    for step in steps:
        if step[0] == "prompt":
            transcript.prompt(step[1])
        elif step[0] == "reply":
            transcript.reply(step[1])
        else:
            transcript.tool(step[1], json.loads(step[2]), step[3] if len(step) > 3 else "ok")
    keeper(["hook", "stop"], env, str(root), {**base, "stop_hook_active": False, "last_assistant_message": "Done."})


def labelled(workdir: str) -> dict[str, Any]:
    """Every session run, then each (session, item) pair's receipt compared with its label."""
    root = Path(workdir) / "shop"
    (root / ".git").mkdir(parents=True)
    env = {**os.environ, "KEEPER_HOME": os.path.join(workdir, "store"), "PYTHONPATH": REPO}
    env.pop("CLAUDE_SESSION_ID", None)
    listed = "decisions:\n" + "".join(f" - {item}\n" for item in ITEMS[:-1]) + f"issues:\n - {ITEMS[-1]}\n"
    keeper(["save"], env, str(root), listed)
    for index, (_, steps) in enumerate(SESSIONS):
        session(index, steps, root, env)
    sys.path.insert(0, REPO)
    os.environ["KEEPER_HOME"] = env["KEEPER_HOME"]
    from keeper.memory.items import key
    from keeper.store import identity, provenance

    project = identity.make_project(identity.find_project_root(str(root)))
    used = {(e.session, e.item) for e in provenance.read(project.dir) if e.kind == "used"}
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    wrong: list[str] = []
    for index, (label, _) in enumerate(SESSIONS):
        name = f"5e55{index:04d}-0000-4000-8000-00000000{index:04d}"
        for number, item in enumerate(ITEMS):
            truth, said = label == number, (name, key(item)) in used
            counts[
                {(True, True): "tp", (False, True): "fp", (True, False): "fn", (False, False): "tn"}[truth, said]
            ] += 1
            if truth != said:
                wrong.append(f"session {index} item {number}: {'missed' if truth else 'false receipt'}")
    precision = counts["tp"] / max(counts["tp"] + counts["fp"], 1)
    recall = counts["tp"] / max(counts["tp"] + counts["fn"], 1)
    return {"sessions": len(SESSIONS), "pairs": sum(counts.values()), **counts, "precision": precision,
            "recall": recall, "wrong": wrong}  # fmt: skip


def cost() -> dict[str, float]:
    """The words of 2 MB of replies and tool inputs against 200 watched items: a Stop's bound."""
    from keeper.capture import receipts

    items = [
        f"Decision {i}: handler_{i} in src/mod_{i}/impl_{i}.py uses port {9000 + i} and Vendor{i}" for i in range(200)
    ]
    watch = {str(i): {"key": text.lower(), "tokens": receipts.distinctive(text)} for i, text in enumerate(items)}
    piece = "Looking at the request flow; the handler calls into the store and returns the rows. " * 40
    pieces = [piece] * (receipts.MAX_SCAN // len(piece))
    watcher = receipts.Watch("", {"watch": watch})
    start = time.perf_counter()
    for text in pieces:
        watcher.hear("text", text)
    return {"seconds": time.perf_counter() - start, "characters": watcher.scanned, "items": len(items)}


def stop_cost(workdir: str, items: int = 100, rounds: int = 30) -> dict[str, float]:
    """A Stop's update of the session record, in process, with and without receipts to look for:
    ``items`` decisions shown at the start, a turn of about 2 KB (a prompt, a reply, a command)
    new at each Stop; the medians of ``rounds`` Stops each."""
    import statistics

    os.environ["KEEPER_HOME"] = os.path.join(workdir, "cost-store")
    root = Path(workdir) / "cost"
    (root / ".git").mkdir(parents=True)
    from keeper.capture import record, saving
    from keeper.hooks import marks
    from keeper.memory.document import SaveInput
    from keeper.store import config, identity, provenance

    project = identity.make_project(identity.find_project_root(str(root)))
    cfg = config.load(project.root)
    texts = [f"Module {i} keeps its cache in src/mod_{i}/cache_{i}.py, port {9000 + i}" for i in range(items)]
    saving.save(project, cfg, SaveInput(decisions=texts), "cost-seed")
    ids = {provenance.shown_id(k) for _, k, _, _ in provenance.listed(Path(project.memory).read_text())}
    spent: dict[str, list[float]] = {"without": [], "with": []}  # without first: it pays the imports
    scripts = {}
    for name in spent:
        session = f"c0575e55-0000-4000-8000-0000000000{len(scripts):02d}"
        scripts[name] = (session, Transcript(root.parent / f"{session}.jsonl", cwd=str(root)))
        if name == "with":
            marks.remember_shown(project, session, ids)
    for turn in range(rounds):
        for name, (session, script) in scripts.items():
            script.prompt(f"Look at the request flow, part {turn}")
            script.reply("The handler reads the rows and returns them; nothing stands out yet. " * 20)
            script.tool("Bash", {"command": f"pytest -q tests/test_flow.py -k part_{turn}"}, "1 passed")
            start = time.perf_counter()
            record.update(project, cfg, session, {}, str(script.path))
            spent[name].append(time.perf_counter() - start)
    with_, without = statistics.median(spent["with"]), statistics.median(spent["without"])
    return {
        "items": items,
        "with_ms": with_ * 1000,
        "without_ms": without * 1000,
        "added_ms": (with_ - without) * 1000,
        "first_with_ms": spent["with"][0] * 1000,  # works out the items' tokens from memory.md
        "first_without_ms": spent["without"][0] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keeper-receipts-") as workdir:
        result = labelled(workdir)
        result["stop"] = stop_cost(workdir)
    result["cost"] = cost()
    print(f"{result['sessions']} sessions, {result['pairs']} (session, item) pairs: "
          f"tp {result['tp']} fp {result['fp']} fn {result['fn']} tn {result['tn']}")  # fmt: skip
    print(f"precision of 'used' {result['precision']:.3f}, recall {result['recall']:.3f}")
    for line in result["wrong"]:
        print("  " + line)
    spent = result["cost"]
    print(f"looking: {spent['characters'] / 1e6:.1f} M characters against {spent['items']} items in "
          f"{spent['seconds'] * 1000:.0f} ms")  # fmt: skip
    stop = result["stop"]
    print(f"a Stop's record update, {stop['items']} items shown, a 2 KB turn new: {stop['with_ms']:.1f} ms "
          f"(without receipts {stop['without_ms']:.1f} ms; added {stop['added_ms']:.1f} ms); the first Stop "
          f"{stop['first_with_ms']:.1f} ms (without {stop['first_without_ms']:.1f} ms)")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
