"""The Memory Hub at scale: page size, generation time, and load and search time in a real browser.

    python benchmarks/hub.py [--sessions 10000] [--projects 12] [--rounds 3] [--keep]

Builds a throwaway store of ``--sessions`` session files (about 2.5 KB each, in Keeper's own
format: written with ``keeper.store.sessions``' renderers, since 10,000 fsynced saves would take
minutes) spread over 400 days and ``--projects`` projects, each with a memory.md made by
``keeper.memory.document.merge``. Then it times ``keeper hub`` (in process) and opens the page in headless
Chromium (``--dump-dom``) for the overview, a search with typos and a project view, reading the
timings the page writes on ``<html>``: ``data-ready-ms`` (navigation start to the first view
drawn, so reading and parsing the file are in it), ``data-index-ms`` (the search index, built on
first use) and ``data-search-ms`` (index plus query). Needs ``chromium`` on PATH for the browser
part (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

WORDS = (  # noqa: SIM905 - a word list reads best as text
    "cache invalidation websocket reconnect backoff thumbnail worker queue invoice renderer tax rounding "
    "checkout discount stacking coupon webhook signature retry jitter timeout pagination cursor index "
    "migration schema column nullable constraint deadlock transaction isolation replica lag failover "
    "token refresh session cookie csrf header cors preflight upload multipart chunked stream gzip brotli "
    "locale fallback translation plural currency exchange rate snapshot nightly report export csv "
    "search ranking synonym stemming analyzer shard latency percentile alert dashboard metric"
).split()
AREAS = ["api", "billing", "checkout", "search", "auth", "jobs", "ui", "db"]
PLANTED = "Refunds still use the old rounding in ledger_export"
QUERY = "refnd roundng ledger"


def sentence(rng: random.Random, words: int) -> str:
    picked = rng.choices(WORDS, k=words)
    if rng.random() < 0.5:
        picked.insert(rng.randrange(len(picked)), f"`{rng.choice(WORDS)}_{rng.choice(WORDS)}`")
    if rng.random() < 0.3:
        a, b = rng.sample(WORDS, 2)
        picked.insert(rng.randrange(len(picked)), f"{a}{b.capitalize()}ById")
    return " ".join(picked).capitalize()


def session_file(name: str, session: str, start: datetime, rng: random.Random, planted: bool) -> tuple[str, list]:
    """One session file's text, written by Keeper's own renderers, and the saves it records."""
    from keeper.capture import transcript
    from keeper.memory import document
    from keeper.store import sessions

    text = f"# Session {start:%Y-%m-%d %H:%M} · {name}\n\n- Session id: {session}\n- Started: {start:%Y-%m-%d %H:%M}\n"
    facts = {
        "Branch": f"feature/{rng.choice(WORDS)}-{rng.choice(WORDS)}",
        "Transcript": f"/home/dev/.claude/projects/-home-dev-{name}/{session}.jsonl",
        "Tool uses": f"{rng.randint(3, 120)} ({rng.randint(0, 3)} saves)",
        "Last activity": (start + timedelta(minutes=rng.randint(5, 240))).strftime("%Y-%m-%d %H:%M"),
        "Last reply": sentence(rng, 30),
    }
    text = sessions.set_facts(text, facts)
    saves = []
    for k in range(rng.randint(1, 3)):
        data = document.SaveInput(
            summary=PLANTED if planted and k == 0 else sentence(rng, rng.randint(12, 28)),
            decisions=[sentence(rng, 12) for _ in range(rng.choice([0, 0, 1, 2]))],
            state=[sentence(rng, 10) for _ in range(rng.randint(1, 2))],
            issues=[sentence(rng, 10) for _ in range(rng.choice([0, 0, 1]))],
        )
        report = document.MergeReport()
        if rng.random() < 0.15:
            report.resolved = [sentence(rng, 9)]
        saves.append(data)
        text = _append_save(text, sessions.render_save(start + timedelta(minutes=20 * (k + 1)), data, report))
    activity = transcript.Activity()
    activity.prompt_count = rng.randint(2, 8)
    activity.prompts = [sentence(rng, rng.randint(8, 40)) for _ in range(activity.prompt_count)]
    area = rng.choice(AREAS)
    activity.files = {
        f"/home/dev/{name}/src/{area}/{rng.choice(WORDS)}_{rng.choice(WORDS)}.py": rng.choice(["edited", "written"])
        for _ in range(rng.randint(1, 9))
    }
    activity.commands = [f"pytest -q tests/test_{rng.choice(WORDS)}.py" for _ in range(rng.randint(1, 5))]
    activity.tools = {"Bash": rng.randint(1, 30), "Edit": rng.randint(1, 40), "Read": rng.randint(1, 60)}
    return sessions.set_activity(text, transcript.render(activity, f"/home/dev/{name}")), saves


def _append_save(text: str, lines: list[str]) -> str:
    """``sessions.append_save`` without the disk round trip (the same document edit)."""
    from keeper.markdown import Document, content_end
    from keeper.store import sessions

    doc = Document.parse(text)
    section = doc.find((sessions.SAVES.lower(),)) or doc.add_section(sessions.SAVES)
    end = content_end(section)
    block = ([""] if end and section.lines[end - 1].strip() else []) + lines
    while block and not block[-1]:
        block.pop()
    doc.insert(section, end, block)
    return doc.render()


def build(store: str, total: int, projects: int) -> list[str]:
    """Write the store; return the project ids."""
    from keeper.memory import document
    from keeper.store import identity

    rng = random.Random(7)
    now = datetime(2026, 11, 20, 18, 0)
    names = [f"{rng.choice(WORDS)}-{rng.choice(AREAS)}" for _ in range(projects)]
    ids = []
    for p, name in enumerate(names):
        project = identity.make_project(f"/home/dev/{name}-{p}")
        os.makedirs(project.sessions)
        os.makedirs(project.state)
        share = total // projects + (1 if p < total % projects else 0)
        text, provenance = None, {}
        for i in range(share):
            start = now - timedelta(days=rng.uniform(0, 400))
            session = f"{p:02d}{i:05d}-{rng.getrandbits(32):08x}"
            body, saves = session_file(name, session, start, rng, planted=(p == 0 and i == share // 2))
            path = os.path.join(project.sessions, f"{start:%Y-%m-%d_%H%M}-{i}.md")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(body)
            if i >= share - 40:  # memory.md from the newest saves, merged as Keeper merges them
                for save in saves:
                    text, provenance, _ = document.merge(
                        text, provenance, save, project_name=name, session_id=session, now=start, recent_sessions=3
                    )
        with open(project.memory, "w", encoding="utf-8") as fh:
            fh.write(text or "")
        with open(project.root_record, "w", encoding="utf-8") as fh:
            fh.write(f'{{"root": "/home/dev/{name}-{p}", "name": "{name}"}}')
        ids.append(project.id)
    return ids


def in_browser(chromium: str, page: str, fragment: str) -> tuple[dict[str, float], float, str]:
    """Open the page at ``fragment``; the timings it wrote on <html>, the wall time, and the DOM."""
    started = time.perf_counter()
    done = subprocess.run(
        [chromium, "--headless=new", "--disable-gpu", "--no-sandbox", "--dump-dom", f"file://{page}#{fragment}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    wall = (time.perf_counter() - started) * 1000
    head = done.stdout[: done.stdout.find(">", done.stdout.find("<html")) + 1]
    return {k: float(v) for k, v in re.findall(r'data-([a-z]+)-ms="([\d.]+)"', head)}, wall, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--projects", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the store and the page (their folder is printed)")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="keeper-hub-bench-")
    os.environ["KEEPER_HOME"] = os.path.join(base, "store")
    from keeper.hub import build

    try:
        started = time.perf_counter()
        ids = build(os.environ["KEEPER_HOME"], args.sessions, args.projects)
        print(
            f"store: {args.sessions} sessions in {args.projects} projects, built in {time.perf_counter() - started:.1f} s"
        )
        timings = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            page = build.write(os.path.join(base, "hub.html"))
            timings.append(time.perf_counter() - started)
        size = os.path.getsize(page)
        data = build.collect()
        left = data["left_out"]
        print(f"keeper hub: {statistics.median(timings):.2f} s to write {size / (1 << 20):.2f} MiB ({size:,} bytes)")
        print(
            f"  embedded: {len(data['sessions']):,} session summaries, {len(data['records']):,} whole records, "
            f"{len(data['events']):,} timeline entries; left out: {left['sessions']:,} sessions, {left['events']:,} entries"
        )
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            print("no chromium on PATH: browser timings skipped (Debian: apt-get install chromium)")
            return 0
        views = [
            ("overview", ""),
            (f"search '{QUERY}'", "q=" + QUERY.replace(" ", "%20")),
            ("project", f"project={ids[0]}"),
        ]
        for label, fragment in views:
            runs = [in_browser(chromium, page, fragment) for _ in range(args.rounds)]
            common = set.intersection(*(set(r[0]) for r in runs))  # the overview builds its index when idle, or not yet
            median = {k: statistics.median(r[0][k] for r in runs) for k in common}
            main = re.sub(r"<[^>]+>", "", runs[0][2].split("<main", 1)[-1].split("</main>", 1)[0])  # the view's text
            found = "(finds the planted session)" if "search" in label and PLANTED in main else ""
            if "search" in median and "index" in median:
                median["query alone"] = median["search"] - median["index"]
            shown = ", ".join(f"{k} {v:.0f} ms" for k, v in sorted(median.items()))
            print(f"  {label:<32} {shown}; chromium process {statistics.median(r[1] for r in runs):.0f} ms {found}")
    finally:
        if args.keep:
            print(f"kept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
