"""Replay a repository's history through Keeper: one session per commit, then read the marks.

Each session runs through Keeper's real hooks an hour after the previous one: SessionStart, a
transcript whose Edit/Write tool uses reproduce the commit's changes in its files (the work tree is
checked out at the commit, so content and file dates are real), PostToolUse per tool use, `keeper
save` with one decision made from the commit's subject and naming what it names (its code-shaped
words and the main file it changed), Stop, SessionEnd. Every start records the marks its context
shows and `keeper status --json`'s ``memory.stale``; each mark is judged mechanically against the
tree it was shown on: does a claim the item names (a path, an identifier in the cited file) no
longer hold there? A mark none of whose claims broke is a false mark.

    python benchmarks/stale/replay.py --keeper-src /work/main [--commits 60]
        [--mirror /work/.mirror/simonw+sqlite-utils/repo] [--base d379f43~6] [--watch restkey]
        [--json benchmarks/stale/results/replay-main.json]
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from drive import HOUR, Keeper, Session, context_of, fresh, git, marks_in, move_to, rev, set_mtime, show, work_tree

MAX_HUNKS = 8  # a file changed in more places than this is written whole (Write), as Claude would
CONTEXT = 1  # lines of context an Edit's old_string carries around a change
CODE_WORD = re.compile(
    r"(?<![\w.-])(--[a-z][\w-]*|[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?|[A-Za-z_]\w*\(\)|[a-z]\w*_\w+|[a-z]+(?:-[a-z]+)+)"
)
NAMED_ARG = re.compile(r"\b([a-z]\w*)(?:=|:\s*(?:str|bool|int|float|list|dict)\b)")


@dataclass
class Item:
    """One commit's decision and the claims it names, as they held when it was saved."""

    commit: str
    subject: str
    text: str
    path: str
    names: list[str]  # identifiers found in ``path`` at the commit
    wrote: dict[str, list[str]] = field(default_factory=dict)  # lines the session wrote, per file


def code_words(subject: str) -> list[str]:
    """What a subject names as code: `rows_from_file`, `--functions`, `utils.chunks()`, `restkey:`."""
    found: list[str] = []
    for word in [*CODE_WORD.findall(subject), *NAMED_ARG.findall(subject)]:
        word = word.removesuffix("()").rstrip(".")
        if word and not word[0].isdigit() and word not in found:
            found.append(word)
    return found


def probe(word: str) -> str:
    """The part of a name found in code: `duplicate` of `table.duplicate`."""
    return word if word.startswith("--") else word.rsplit(".", 1)[-1]


def present(word: str, text: str | None) -> bool:
    return text is not None and re.search(rf"(?<![\w-]){re.escape(probe(word))}(?![\w])", text) is not None


def main_file(changed: list[tuple[str, str]]) -> str:
    """The file a decision about the commit cites: its first changed source file that is not a test."""
    live = [p for status, p in changed if status != "D"] or [p for _, p in changed]
    code = [p for p in live if p.endswith(".py") and not p.split("/")[-1].startswith("test")]
    return (code or live)[0]


def decision(mirror: str, commit: str, subject: str, changed: list[tuple[str, str]]) -> Item:
    path = main_file(changed)
    text_now = show(mirror, commit, path)
    names = [w for w in code_words(subject) if present(w, text_now)]
    cited = ", ".join(f"`{w}`" for w in names)
    text = f"{subject.rstrip('.')}: {cited} in `{path}`" if names else f"{subject.rstrip('.')} (in `{path}`)"
    return Item(commit, subject, text, path, names)


def hunks(old: str, new: str) -> list[tuple[str, str]] | None:
    """The commit's change to a file as Edit (old_string, new_string) pairs; None when it is too
    scattered to be a few edits."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT))
    if not groups or len(groups) > MAX_HUNKS:
        return None
    found = []
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        found.append(("".join(a[i1:i2]), "".join(b[j1:j2])))
    return found


def replay_commit(session: Session, mirror: str, parent: str, commit: str, tree: Path) -> Item:
    """Check the commit out in the work tree and tell it as the session's tool uses; save its decision."""
    status = git("-C", mirror, "diff", "--name-status", "--no-renames", parent, commit).split("\n")[:-1]
    changed = [(line.split("\t")[0][0], line.split("\t")[1]) for line in status]
    git("checkout", "-q", "-B", "work", commit, cwd=tree)
    # written in this session, a little before its save (Keeper's own clock is ahead by the same hours)
    set_mtime(tree, [p for _, p in changed], time.time() + session.hours * HOUR - 2)
    subject = git("-C", mirror, "log", "-1", "--format=%s", commit).strip()
    item = decision(mirror, commit, subject, changed)
    for kind, path in changed:
        full = str(tree / path)
        if kind == "D":
            session.use("Bash", {"command": f"git rm -q {path}", "description": "remove the file"})
            continue
        old, new = show(mirror, parent, path) if kind != "A" else None, show(mirror, commit, path) or ""
        if "\0" in new:
            session.use("Bash", {"command": f"git checkout {commit[:7]} -- {path}", "description": "binary file"})
            continue
        edits = hunks(old, new) if old is not None else None
        if edits is None:
            session.use("Write", {"file_path": full, "content": new}, f"File created successfully at: {full}")
            item.wrote[path] = [ln for ln in new.splitlines() if ln.strip()]
            continue
        for before, after in edits:
            session.use("Edit", {"file_path": full, "old_string": before, "new_string": after}, "Updated.")
            item.wrote.setdefault(path, []).extend(ln for ln in after.splitlines() if ln.strip())
    session.save(subject, [item.text])
    return item


def broken(item: Item, mirror: str, commit: str, cache: dict[tuple[str, str], str | None]) -> list[str]:
    """The claims of ``item`` that no longer hold in the tree at ``commit``."""
    if (commit, item.path) not in cache:
        cache[(commit, item.path)] = show(mirror, commit, item.path)
    text = cache[(commit, item.path)]
    if text is None:
        return [f"{item.path} is gone"]
    return [f"`{w}` is no longer in {item.path}" for w in item.names if not present(w, text)]


def kept_share(item: Item, mirror: str, commit: str) -> float | None:
    """The share of the lines the saving session wrote that are still in their files (for a reader)."""
    total = kept = 0
    for path, lines in item.wrote.items():
        now = set((show(mirror, commit, path) or "").splitlines())
        total += len(lines)
        kept += sum(ln in now for ln in lines)
    return round(kept / total, 2) if total else None


def judge(
    marks: dict[str, str], items: list[Item], mirror: str, commit: str, cache: dict[tuple[str, str], str | None]
) -> list[dict[str, Any]]:
    """Each mark with its item, the claims that broke (none: a false mark) and the written lines kept."""
    found: list[dict[str, Any]] = []
    for text, reason in marks.items():
        item = next((i for i in items if i.text in text or i.text.startswith(text)), None)
        if item is None:
            found.append({"text": text, "reason": reason, "item": None, "true": None})
            continue
        why = broken(item, mirror, commit, cache)
        found.append(
            {
                "text": item.text,
                "reason": reason,
                "saved_at": item.commit[:7],
                "broken": why,
                "true": bool(why),
                "lines_kept": kept_share(item, mirror, commit),
            }
        )
    return found


def stale_of(keeper: Keeper, tree: Path, hours: float) -> dict[str, str]:
    return {str(s["text"]): str(s["reason"]) for s in keeper.status(tree, hours)["memory"]["stale"]}


def run(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    mirror = args.mirror
    start = rev(mirror, args.base)
    commits = git("-C", mirror, "rev-list", "--reverse", "--first-parent", "--ancestry-path", f"{start}..HEAD")
    chosen = commits.split()[: args.commits]
    keeper = Keeper(args.keeper_src, base)
    tree = work_tree(mirror, base / "project", start)
    items: list[Item] = []
    sessions: list[dict[str, Any]] = []
    cache: dict[tuple[str, str], str | None] = {}
    parent, seen = start, set[str]()
    for number, commit in enumerate([*chosen, None], start=1):
        session = Session(keeper, tree, float(number), base / "transcripts")
        reply = session.start(git("-C", mirror, "log", "-1", "--format=%s", commit).strip() if commit else "Hello")
        shown = marks_in(context_of(reply))
        stale = stale_of(keeper, tree, float(number))
        judged = judge(shown, items, mirror, parent, cache)
        sessions.append(
            {
                "session": number,
                "tree": parent[:7],
                "items": len(items),
                "stale": len(stale),
                "marks_shown": len(shown),
                "new_marks": len(set(shown) - seen),
                "true_marks": sum(bool(j["true"]) for j in judged),
                "marks": judged,
            }
        )
        seen |= set(shown)
        if commit is None:  # the last start, after the replay: the end state
            sessions[-1]["stale_all"] = judge(stale, items, mirror, parent, cache)
            break
        items.append(replay_commit(session, mirror, parent, commit, tree))
        session.end()
        parent = commit
        print(f"{number:3} {commit[:7]} items {len(items) - 1:3} stale {len(stale):3} shown {len(shown):2}", flush=True)
    result = summary(args, keeper, items, sessions, chosen)
    if args.round_trip:
        result["round_trip"] = round_trip(keeper, tree, chosen, args.round_trip, len(chosen) + 1.0, stale)
    return result


def round_trip(
    keeper: Keeper, tree: Path, chosen: list[str], back: int, hours: float, before: dict[str, str]
) -> dict[str, Any]:
    """Check out the commit ``back`` commits before the end and come back (the same content, new file
    dates, as a branch switched and switched back), start a session: what do the verdicts say now?"""
    for step, commit in enumerate((chosen[-1 - back], chosen[-1]), start=1):
        changed = move_to(tree, commit)
        set_mtime(tree, changed, time.time() + (hours + step / 4) * HOUR)
    Session(keeper, tree, hours + 1, tree.parent / "transcripts").start("Back on the branch")
    after = stale_of(keeper, tree, hours + 1)
    return {
        "back": back,
        "stale_before": len(before),
        "stale_after": len(after),
        "new": sorted(set(after) - set(before)),
        "gone": sorted(set(before) - set(after)),
        "reason_changed": sum(after[t] != before[t] for t in set(after) & set(before)),
    }


def summary(
    args: argparse.Namespace, keeper: Keeper, items: list[Item], sessions: list[dict[str, Any]], chosen: list[str]
) -> dict[str, Any]:
    last = sessions[-1]
    starts = sessions[1:]  # the first start has nothing to mark
    all_marks = [m for s in starts for m in s["marks"]]
    watched = [i.text for i in items if args.watch in i.names]  # the decisions that name it as code
    return {
        "keeper": keeper.version(),
        "mirror": args.mirror,
        "commits": [chosen[0][:7], chosen[-1][:7], len(chosen)],
        "items": len(items),
        "end": {
            "stale": len(last["stale_all"]),
            "stale_pct": round(100 * len(last["stale_all"]) / len(items), 1),
            "stale_true": sum(bool(m["true"]) for m in last["stale_all"]),
            "marks_shown": last["marks_shown"],
            "marks_shown_true": last["true_marks"],
        },
        "per_start": {
            "marks_shown_mean": round(sum(s["marks_shown"] for s in starts) / len(starts), 2),
            "new_marks_mean": round(sum(s["new_marks"] for s in starts) / len(starts), 2),
            "stale_mean": round(sum(s["stale"] for s in starts) / len(starts), 2),
            "marks_shown_total": len(all_marks),
            "marks_shown_true": sum(bool(m["true"]) for m in all_marks),
        },
        "watch": {
            "word": args.watch,
            "items": watched,
            "marked_at": [s["session"] for s in sessions if any(m["text"] in watched for m in s["marks"])],
            "stale_at_end": [m for m in last["stale_all"] if m["text"] in watched],
        },
        "sessions": [
            {**{k: v for k, v in s.items() if k not in ("marks", "stale_all")}, "shown": shown_ids(s["marks"])}
            for s in sessions
        ],
        "end_marks": last["stale_all"],
        "keeper_calls": keeper.calls,
        "keeper_seconds": round(keeper.seconds, 1),
    }


def shown_ids(marks: list[dict[str, Any]]) -> list[str]:
    """A start's marks, short: the commit whose session saved the item, ``!`` where the mark is true."""
    return [f"{m.get('saved_at', '?')}{'!' if m['true'] else ''}" for m in marks]


def without_text(result: dict[str, Any]) -> dict[str, Any]:
    """The results to keep: items by the commit whose session saved them, without their text (made
    from the repository's commit subjects, which stay in the mirror)."""

    def bare(marks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in m.items() if k != "text"} for m in marks]

    watch = result["watch"]
    watch = {**watch, "items": len(watch["items"]), "stale_at_end": bare(watch["stale_at_end"])}
    return {**result, "watch": watch, "end_marks": bare(result["end_marks"])}


def report(result: dict[str, Any]) -> None:
    end, per = result["end"], result["per_start"]
    print(f"\nKeeper {result['keeper']}: {result['items']} items after {result['commits'][2]} commits")
    print(f"  marked at the end: {end['stale']} ({end['stale_pct']}%), true {end['stale_true']}")
    print(f"  shown in the last start's context: {end['marks_shown']}, true {end['marks_shown_true']}")
    print(
        f"  per start: {per['marks_shown_mean']} marks shown ({per['new_marks_mean']} new), "
        f"{per['stale_mean']} stale in all; of {per['marks_shown_total']} marks shown, {per['marks_shown_true']} true"
    )
    trip = result.get("round_trip")
    if trip:
        print(
            f"  {trip['back']} commits back and again: stale {trip['stale_before']} -> {trip['stale_after']}, "
            f"{len(trip['new'])} new, {len(trip['gone'])} gone, {trip['reason_changed']} with another reason"
        )
    watch = result["watch"]
    print(f"  `{watch['word']}`: marked at starts {watch['marked_at']}; at the end: {bool(watch['stale_at_end'])}")
    for mark in result["end_marks"]:
        verdict = "TRUE " if mark["true"] else "false"
        print(f"  {verdict} {mark['saved_at']} {mark['text'][:90]}")
        print(f"        reason: {mark['reason'][:110]}")
        print(f"        broken: {mark['broken'] or '-'}; written lines kept: {mark['lines_kept']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keeper-src", required=True, help="the Keeper source folder to run (PYTHONPATH=DIR)")
    p.add_argument("--mirror", default="/work/.mirror/simonw+sqlite-utils/repo", help="a bare git mirror")
    p.add_argument("--base", default="d379f43~6", help="the commit the work tree starts at")
    p.add_argument("--commits", type=int, default=60, help="commits replayed after --base (first parent)")
    p.add_argument("--watch", default="restkey", help="a word whose decisions are followed start by start")
    p.add_argument("--round-trip", type=int, default=10, help="at the end, check out N commits back and return (0: no)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--work", help="keep the store and work tree in this folder (default: a temporary one)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keeper-replay-") as tmp:
        result = run(args, fresh(Path(args.work)) if args.work else Path(tmp))
    report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(without_text(result), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
