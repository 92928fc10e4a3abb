"""Recall quality: R@1, R@5 and MRR of Keeper, plain BM25 and grep-style matching.

    python -m pip install bm25s          # development only: the plain-BM25 baseline
    python benchmarks/recall_quality/run.py [--corpus coding|conversations|both] [--json results.json]

Two seeded corpora: coding sessions of a web shop (corpus.py: 320 sessions, 480 questions) and
dated conversations between friends (conversations.py: 240 sessions, 696 questions). A method's
answer is its ranked list of session files; a question's rank is where its session first
appears (beyond 20: not found). Every kind of question is reported clean and with typos.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conversations
import corpus

from keeper.recall import search
from keeper.store import paths

DEPTH = 20
STOP = set(  # the grep-style baseline's stop words (Keeper's own list before issue 12), kept fixed
    "a an and are as at be but by for from has have how i if in into is it its of on or our so that the their then "  # noqa: SIM905
    "there these this to was we were what when where which who why will with you your did do does".split()
)


def keeper_method(folder: Path) -> Callable[[str], list[str]]:
    project = paths.Project(root=str(folder / "repo"), id="bench", dir=str(folder))

    def ask(question: str) -> list[str]:
        found = search.search(project, question, limit=DEPTH * 3, today=date(2026, 11, 1))
        names = [str(Path(r.chunk.path).relative_to(folder).as_posix()) for r in found]
        return list(dict.fromkeys(names))[:DEPTH]

    return ask


def bm25_method(folder: Path) -> Callable[[str], list[str]]:
    import bm25s

    files = sorted((folder / "sessions").glob("*.md"))
    names = [f"sessions/{f.name}" for f in files]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([f.read_text(encoding="utf-8") for f in files], stopwords="en", show_progress=False),
        show_progress=False,
    )

    def ask(question: str) -> list[str]:
        tokens = bm25s.tokenize([question], stopwords="en", show_progress=False)
        docs, _ = retriever.retrieve(tokens, k=DEPTH, show_progress=False)
        return [names[i] for i in docs[0]]

    return ask


def grep_method(folder: Path) -> Callable[[str], list[str]]:
    texts = {f"sessions/{f.name}": f.read_text(encoding="utf-8").lower() for f in (folder / "sessions").glob("*.md")}

    def ask(question: str) -> list[str]:
        words = {w for w in re.findall(r"\w{3,}", question.lower()) if w not in STOP}
        scored = [(sum(w in text for w in words), name) for name, text in texts.items()]
        ranked = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]), reverse=False)
        return [name for _, name in ranked[:DEPTH]]

    return ask


def score(ask: Callable[[str], list[str]], questions: list[dict[str, str]]) -> dict[str, float]:
    ranks = []
    for q in questions:
        found = ask(q["question"])
        ranks.append(found.index(q["answer"]) + 1 if q["answer"] in found else None)
    n = len(ranks)
    return {
        "n": n,
        "R@1": sum(r == 1 for r in ranks) / n,
        "R@5": sum(r is not None and r <= 5 for r in ranks) / n,
        "MRR": sum(1 / r for r in ranks if r) / n,
    }


CORPORA = {"coding": corpus.build, "conversations": conversations.build}


def subsets(questions: list[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    """Each kind of question, clean and with typos, then all clean and all with typos."""
    kinds = list(dict.fromkeys(q["kind"] for q in questions if q["kind"] != "typo"))
    found: dict[str, list[dict[str, str]]] = {}
    for kind in kinds:
        found[kind] = [q for q in questions if q["kind"] == kind]
        found[f"{kind} (typos)"] = [q for q in questions if q.get("of") == kind]
    found["clean (all)"] = [q for q in questions if q["kind"] != "typo"]
    found["typos (all)"] = [q for q in questions if q["kind"] == "typo"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=[*CORPORA, "both"], default="both")
    parser.add_argument("--methods", default="keeper,bm25,grep", help="comma-separated: keeper, bm25, grep")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    makers = {"keeper": keeper_method, "bm25": bm25_method, "grep": grep_method}
    results = []
    for name, build in CORPORA.items():
        if args.corpus not in (name, "both"):
            continue
        folder = Path(tempfile.mkdtemp(prefix=f"keeper-recall-{name}-"))
        questions = build(folder)
        sessions = len(list((folder / "sessions").glob("*.md")))
        groups = subsets(questions)
        print(f"\n{name}: {sessions} sessions, {len(groups['clean (all)'])} questions (+ typo twins)")
        print(f"{'method':8} {'subset':24} {'n':>4} {'R@1':>6} {'R@5':>6} {'MRR':>6}")
        for method in args.methods.split(","):
            ask = makers[method](folder)
            for subset, items in groups.items():
                row = score(ask, items)
                results.append({"corpus": name, "method": method, "subset": subset, **row})
                print(f"{method:8} {subset:24} {row['n']:4d} {row['R@1']:6.3f} {row['R@5']:6.3f} {row['MRR']:6.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
