"""Recall quality: R@1, R@5 and MRR of Keeper, BM25 (plain and with a stemmer) and grep-style matching.

    python -m pip install ".[bench]"     # development only: bm25s and PyStemmer, the baselines
    python benchmarks/recall_quality/run.py [--corpus coding|conversations|chats|chats-heldout|all]

Seeded corpora: coding sessions of a web shop (corpus.py: 320 sessions, 480 questions), dated
conversations between friends (conversations.py: 240 sessions, 696 questions) and chat-shaped
days between friends (chats.py, a development seed and a held-out one). A method's answer is its
ranked list of session files (beyond 20: not found). A question's evidence is one session or
several: R@1 counts a first result that is evidence, MRR the rank of the first evidence found,
R@5 the share of the evidence in the top five sessions, S@5 its share among the sessions of the
first five results a method shows (Keeper's results are sections: several may come from one
session; the others' are whole files, so for them S@5 is R@5). A question may carry the day it is asked on
(``today``), for relative dates. Every kind of question is reported clean and with typos.
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
import chats
import conversations
import corpus

from keeper.recall import search
from keeper.store import paths

DEPTH = 20
STOP = set(  # the grep-style baseline's stop words (Keeper's own list before issue 12), kept fixed
    "a an and are as at be but by for from has have how i if in into is it its of on or our so that the their then "  # noqa: SIM905
    "there these this to was we were what when where which who why will with you your did do does".split()
)


TODAY = "2026-11-01"  # the day questions are asked on, unless they say


def keeper_method(folder: Path) -> Callable[[str, str], list[str]]:
    project = paths.Project(root=str(folder / "repo"), id="bench", dir=str(folder))

    def ask(question: str, today: str = TODAY) -> list[str]:
        found = search.search(project, question, limit=DEPTH * 3, today=date.fromisoformat(today))
        return [str(Path(r.chunk.path).relative_to(folder).as_posix()) for r in found]  # one per section

    return ask


def bm25_method(folder: Path, stemmed: bool = False) -> Callable[[str, str], list[str]]:
    """BM25 (bm25s, English stop words), with PyStemmer's English (Porter2) stemmer if ``stemmed``."""
    import bm25s

    stemmer = None
    if stemmed:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    files = sorted((folder / "sessions").glob("*.md"))
    names = [f"sessions/{f.name}" for f in files]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(
            [f.read_text(encoding="utf-8") for f in files], stopwords="en", stemmer=stemmer, show_progress=False
        ),
        show_progress=False,
    )

    def ask(question: str, today: str = TODAY) -> list[str]:
        tokens = bm25s.tokenize([question], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, _ = retriever.retrieve(tokens, k=DEPTH, show_progress=False)
        return [names[i] for i in docs[0]]

    return ask


def grep_method(folder: Path) -> Callable[[str, str], list[str]]:
    texts = {f"sessions/{f.name}": f.read_text(encoding="utf-8").lower() for f in (folder / "sessions").glob("*.md")}

    def ask(question: str, today: str = TODAY) -> list[str]:
        words = {w for w in re.findall(r"\w{3,}", question.lower()) if w not in STOP}
        scored = [(sum(w in text for w in words), name) for name, text in texts.items()]
        ranked = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]), reverse=False)
        return [name for _, name in ranked[:DEPTH]]

    return ask


def score(ask: Callable[[str, str], list[str]], questions: list[dict]) -> dict[str, float]:
    firsts, shares, shown, tops = [], [], [], []
    for q in questions:
        results = ask(q["question"], q.get("today", TODAY))
        found = list(dict.fromkeys(results))[:DEPTH]
        evidence = q.get("answers", [q["answer"]])
        ranks = sorted(found.index(a) + 1 for a in evidence if a in found)
        firsts.append(ranks[0] if ranks else None)
        shares.append(sum(r <= 5 for r in ranks) / len(evidence))
        shown.append(len(set(evidence) & set(results[:5])) / len(evidence))
        tops.append(bool(ranks) and ranks[0] == 1)
    n = len(firsts)
    return {
        "n": n,
        "R@1": sum(tops) / n,
        "R@5": sum(shares) / n,
        "S@5": sum(shown) / n,
        "MRR": sum(1 / r for r in firsts if r) / n,
    }


CORPORA: dict[str, Callable[[Path], list[dict]]] = {
    "coding": corpus.build,
    "conversations": conversations.build,
    "chats": chats.build,  # the development seed
    "chats-heldout": lambda folder: chats.build(folder, seed=2024),  # never looked at while tuning
}


def subsets(questions: list[dict]) -> dict[str, list[dict]]:
    """Each kind of question, clean and with typos, then all clean and all with typos."""
    kinds = list(dict.fromkeys(q["kind"] for q in questions if q["kind"] != "typo"))
    found: dict[str, list[dict]] = {}
    for kind in kinds:
        found[kind] = [q for q in questions if q["kind"] == kind]
        found[f"{kind} (typos)"] = [q for q in questions if q.get("of") == kind]
    found["clean (all)"] = [q for q in questions if q["kind"] != "typo"]
    found["typos (all)"] = [q for q in questions if q["kind"] == "typo"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=[*CORPORA, "all"], default="all")
    parser.add_argument(
        "--methods", default="keeper,bm25-stem,bm25,grep", help="comma-separated: keeper, bm25-stem, bm25, grep"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    makers: dict[str, Callable[[Path], Callable[[str, str], list[str]]]] = {
        "keeper": keeper_method,
        "bm25-stem": lambda folder: bm25_method(folder, stemmed=True),
        "bm25": bm25_method,
        "grep": grep_method,
    }
    results = []
    for name, build in CORPORA.items():
        if args.corpus not in (name, "all"):
            continue
        folder = Path(tempfile.mkdtemp(prefix=f"keeper-recall-{name}-"))
        questions = build(folder)
        sessions = len(list((folder / "sessions").glob("*.md")))
        groups = subsets(questions)
        print(f"\n{name}: {sessions} sessions, {len(groups['clean (all)'])} questions (+ typo twins)")
        print(f"{'method':9} {'subset':24} {'n':>4} {'R@1':>6} {'R@5':>6} {'S@5':>6} {'MRR':>6}")
        for method in args.methods.split(","):
            ask = makers[method](folder)
            for subset, items in groups.items():
                row = score(ask, items)
                results.append({"corpus": name, "method": method, "subset": subset, **row})
                print(
                    f"{method:9} {subset:24} {row['n']:4d} {row['R@1']:6.3f} {row['R@5']:6.3f} {row['S@5']:6.3f} {row['MRR']:6.3f}"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
