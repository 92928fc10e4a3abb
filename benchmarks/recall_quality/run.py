"""Recall quality: R@1, R@5 and MRR of Keeper, plain BM25 and grep-style matching.

    python -m pip install bm25s          # development only: the plain-BM25 baseline
    python benchmarks/recall_quality/run.py [--json results.json]

The corpus and questions come from corpus.py (seeded, 320 sessions, 480 questions). A method's
answer is its ranked list of session files; a question's rank is where its session first
appears (beyond 20: not found).
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
import corpus

from keeper import paths, search, tokens

DEPTH = 20
STOP = set(tokens._STOP)


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="keeper-recall-quality-"))
    questions = corpus.build(folder)
    subsets = {
        "paraphrase": [q for q in questions if q["kind"] == "paraphrase"],
        "identifier": [q for q in questions if q["kind"] == "identifier"],
        "clean (both)": [q for q in questions if q["kind"] != "typo"],
        "typo (both)": [q for q in questions if q["kind"] == "typo"],
    }
    methods = {"keeper": keeper_method(folder), "bm25 (bm25s)": bm25_method(folder), "grep-style": grep_method(folder)}
    sessions = len(list((folder / "sessions").glob("*.md")))
    print(f"{sessions} sessions, {len(subsets['clean (both)'])} questions (+ {len(subsets['typo (both)'])} typo twins)")
    print(f"{'method':14} {'subset':14} {'n':>4} {'R@1':>6} {'R@5':>6} {'MRR':>6}")
    results = []
    for method, ask in methods.items():
        for subset, items in subsets.items():
            row = score(ask, items)
            results.append({"method": method, "subset": subset, **row})
            print(f"{method:14} {subset:14} {row['n']:4d} {row['R@1']:6.3f} {row['R@5']:6.3f} {row['MRR']:6.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
