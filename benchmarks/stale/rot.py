"""bench/rot's protocol on Keeper: do stale marks flag the memory items whose claims went false?

For each repository (a local bare mirror) and window (t0, t1): take claims from the tree at t0
mechanically (``claims.py``), save each as a decision through `keeper save` in sessions at t0 whose
transcripts edit the cited files, check the work tree out at t1, run SessionStart and read which
items Keeper marks (`keeper status --json`, ``memory.stale``: every verdict, not only the ones the
context has room for). Truth: each claim re-checked against the tree at t1.

    python benchmarks/stale/rot.py --keeper-src /work/main [--claims 150] [--repos requests,cffi]
        [--mirrors /work/.mirror] [--json benchmarks/stale/results/rot-main.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claims import CLASSES, Claim, extract, holds, sample
from drive import HOUR, Keeper, Session, context_of, fresh, marks_in, move_to, set_mtime, work_tree


@dataclass(frozen=True)
class Window:
    name: str
    mirror: str  # folder under --mirrors ('': this repository)
    t0: str
    t1: str
    under: str
    note: str


# bench/rot's corpus.json pins where the local mirror holds them; otherwise a window of the mirror's
# own history that ends at its newest commit (the pinned t1 is not in the mirror).
CORPUS = (
    Window(
        "requests",
        "psf+requests",
        "70298332899f25826e35e42f8d83425124f755a5",
        "69f84847045bef7a849cc994a26fe7ba8a169e95",
        "src/requests",
        "bench/rot pin",
    ),
    Window(
        "cffi",
        "python-cffi+cffi",
        "c36c02fa6f4f1d12a9cead81861c6f42af47da22",
        "45f531087c53e1977de2712056a1d3193eab73bc",
        "src/cffi",
        "bench/rot t0, t1 = the mirror's newest commit",
    ),
    Window(
        "pyyaml",
        "yaml+pyyaml",
        "f20947ae251fd1a7f21ad40f9423fa4c0e167fd4",
        "d51d8a138f7230834fc6e95635ff09ebd329185f",
        "lib/yaml",
        "own window: the pinned t0 is the mirror's newest commit",
    ),
    Window(
        "dateutil",
        "dateutil+dateutil",
        "6a79d59935db4ad3dc44306b6747c0a79a2ba0b8",
        "c981f9c7aa91b83cc9bd33a09ecee9e751b06e8d",
        "src/dateutil",
        "own window: the pinned t0..newest commit changes nothing under src/dateutil",
    ),
    Window(
        "sqlite-utils",
        "simonw+sqlite-utils",
        "6915fbcce24d03d7e7fbcb901c18be84b5568a9d",
        "f5c63088e1454811ce8361208b72297408eb5237",
        "sqlite_utils",
        "own window: release 3.26 to 14 months later",
    ),
    Window(
        "keeper",
        "",
        "b28bcfda17077a571b6edaacfdc5d3dd3bba6c13",
        "49425f37fc7758cbe5c57d7c4a9cb10110aec8e2",
        "keeper",
        "Keeper's own history: 80 commits before 0.4.0 to 0.4.0 (this repository)",
    ),
)
HERE = Path(__file__).resolve().parents[2]  # this repository: Keeper's own history


def save_claims(keeper: Keeper, tree: Path, chosen: list[Claim], per_session: int, transcripts: Path) -> None:
    """Sessions at t0, each editing one cited file and saving at most ``per_session`` decisions, one
    per claim: what an item rests on is the file it names, as in bench/rot. What a session wrote is
    what its claims rest on: the definition (at most ``WROTE_LINES`` lines), the assignment, the
    file's head, each filling in a placeholder."""
    by_file: dict[str, list[Claim]] = {}
    for claim in chosen:
        by_file.setdefault(claim.path, []).append(claim)
    for path, claims in by_file.items():
        for first in range(0, len(claims), per_session):
            batch = claims[first : first + per_session]
            session = Session(keeper, tree, 0.0, transcripts)
            session.start(f"Tidy up {path}")
            for claim in batch:
                placeholder = f"# TODO {claim.name or path}"
                edit = {"file_path": str(tree / path), "old_string": placeholder, "new_string": claim.wrote or path}
                session.use("Edit", edit, "The file has been updated.")
            session.save(f"Recorded {len(batch)} facts about {path}", [c.text() for c in batch])
            session.end()


def judged(window: Window, mirror: str, chosen: list[Claim], stale: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each claim with its truth at t1 and Keeper's verdict (and reason)."""
    reasons: dict[str, str] = {}
    for entry in stale:
        match = next((c.text() for c in chosen if c.text() in str(entry.get("text", ""))), None)
        if match is not None:
            reasons[match] = str(entry.get("reason", ""))
    cache: dict[str, str | None] = {}
    return [
        {**c.as_dict(), "false": not holds(c, mirror, window.t1, cache), "reason": reasons.get(c.text())}
        for c in chosen
    ]


def counts(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per class and ALL: claims, false ones, flagged ones, flagged false ones (caught)."""
    out: dict[str, dict[str, int]] = {}
    for kind in (*CLASSES, "ALL"):
        mine = [r for r in rows if kind in ("ALL", r["kind"])]
        flagged = [r for r in mine if r["reason"] is not None]
        out[kind] = {
            "n": len(mine),
            "false": sum(r["false"] for r in mine),
            "flagged": len(flagged),
            "caught": sum(r["false"] for r in flagged),
        }
    return out


def table(tallies: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, Any]]:
    """``counts`` added up, with flagged %, precision, recall of the false claims, alerts per catch."""
    out: dict[str, dict[str, Any]] = {}
    for kind in (*CLASSES, "ALL"):
        n, false, flagged, caught = (sum(t[kind][k] for t in tallies) for k in ("n", "false", "flagged", "caught"))
        out[kind] = {
            "n": n,
            "false": false,
            "flagged": flagged,
            "caught": caught,
            "flagged_pct": round(100 * flagged / n, 1) if n else None,
            "precision": round(caught / flagged, 3) if flagged else None,
            "recall": round(caught / false, 3) if false else None,
            "alerts_per_catch": round(flagged / caught, 2) if caught else None,
        }
    return out


def run_window(window: Window, args: argparse.Namespace, base: Path) -> dict[str, Any]:
    mirror = os.path.join(args.mirrors, window.mirror, "repo") if window.mirror else str(HERE)
    began = time.perf_counter()
    chosen = sample(extract(mirror, window.t0, window.under), args.claims, args.seed)
    keeper = Keeper(args.keeper_src, base / window.name)
    tree = work_tree(mirror, base / window.name / window.name, window.t0)
    save_claims(keeper, tree, chosen, args.per_session, base / window.name / "transcripts")
    memory = next((base / window.name / "keeper-home" / "projects").glob("*/memory.md")).read_text(encoding="utf-8")
    saved = sum(c.text() in memory for c in chosen)  # every claim an item of its own (a check of the harness)
    changed = move_to(tree, window.t1)
    set_mtime(tree, changed, time.time() + HOUR)  # t1's checkout, an hour after the sessions
    later = Session(keeper, tree, 2.0, base / window.name / "transcripts")
    reply = later.start("What do we know about this code?")
    stale = keeper.status(tree, 2.0)["memory"]["stale"]
    rows = judged(window, mirror, chosen, stale)
    shown = marks_in(context_of(reply))
    short = ("kind", "path", "name", "reason")  # not the item's text: values stay in the mirror
    picked = {
        "false_alarms": [r for r in rows if r["reason"] is not None and not r["false"]],
        "misses": [r for r in rows if r["reason"] is None and r["false"]],
        "catches": [r for r in rows if r["reason"] is not None and r["false"]],
    }
    return {
        "window": {**window.__dict__, "files_changed": len(changed)},
        "counts": counts(rows),
        "table": table([counts(rows)]),
        "saved": saved,
        "marked_in_context": len(shown),
        "keeper_calls": keeper.calls,
        "keeper_seconds": round(keeper.seconds, 1),
        "seconds": round(time.perf_counter() - began, 1),
        **{name: [{k: r[k] for k in short} for r in found[: args.examples]] for name, found in picked.items()},
    }


def print_table(name: str, rows: dict[str, dict[str, Any]]) -> None:
    print(f"\n{name}")
    print(f"{'class':8} {'n':>5} {'false':>6} {'flagged%':>9} {'precision':>10} {'recall':>7} {'alerts/catch':>13}")
    for kind, r in rows.items():
        cells = [r["flagged_pct"], r["precision"], r["recall"], r["alerts_per_catch"]]
        shown = ["-" if v is None else str(v) for v in cells]
        print(f"{kind:8} {r['n']:>5} {r['false']:>6} {shown[0]:>9} {shown[1]:>10} {shown[2]:>7} {shown[3]:>13}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keeper-src", required=True, help="the Keeper source folder to run (PYTHONPATH=DIR)")
    p.add_argument("--mirrors", default="/work/.mirror", help="folder of bare mirrors, OWNER+NAME/repo")
    p.add_argument("--repos", default=",".join(w.name for w in CORPUS))
    p.add_argument("--claims", type=int, default=150, help="claims per repository (a third per class)")
    p.add_argument("--per-session", type=int, default=5, help="most claims saved by one session at t0 (one file each)")
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--examples", type=int, default=8, help="false alarms, misses and catches kept per repository")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--work", help="keep the stores and work trees in this folder (default: a temporary one)")
    args = p.parse_args(argv)
    ran = [w for w in CORPUS if w.name in args.repos.split(",")]
    windows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="keeper-rot-") as tmp:
        work = fresh(Path(args.work)) if args.work else Path(tmp)
        for window in ran:
            windows[window.name] = run_window(window, args, work)
            print_table(f"{window.name} ({windows[window.name]['seconds']} s)", windows[window.name]["table"])
    results: dict[str, Any] = {
        "build": Keeper(args.keeper_src, Path(tempfile.gettempdir())).version(),
        "ALL": table([windows[w.name]["counts"] for w in ran]),
        "public": table([windows[w.name]["counts"] for w in ran if w.mirror]),
        "windows": windows,
    }
    print_table("public repositories (the mirrors)", results["public"])
    print_table("ALL repositories", results["ALL"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
