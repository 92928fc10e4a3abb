"""How many times one ``keeper sync`` parses a memory.md that changed on both machines.

    python benchmarks/sync_parses.py

Two throwaway stores share a local bare remote and a repository (the same ``origin``); each saves
a decision of its own after the last sync, so the second machine's sync merges a memory.md both
sides changed. ``markdown.Document.parse`` is wrapped to count the calls that read a memory.md
(the text holds ``# Project Memory``) and all calls, during that one sync, run in-process.
Nothing of the counting ships: it is this script's own wrapper.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _project(base: str, name: str) -> str:
    folder = os.path.join(base, f"{name}-home", "proj")
    os.makedirs(folder)
    subprocess.run(["git", "init", "-q", folder], check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://example.com/me/proj.git"], cwd=folder, check=True)
    return folder


def _keeper(store: str, *argv: str) -> None:
    from keeper.cli import main as keeper_main

    os.environ["KEEPER_HOME"] = store
    assert keeper_main(list(argv)) == 0, argv


def count() -> tuple[int, int]:
    """``(parses of a memory.md, all parses)`` during the second machine's sync."""
    from keeper.markdown import Document

    base = tempfile.mkdtemp(prefix="keeper-bench-parses-")
    try:
        remote = os.path.join(base, "remote.git")
        subprocess.run(["git", "init", "-q", "--bare", remote], check=True)
        stores = {n: os.path.join(base, f"store-{n}") for n in "ab"}
        projects = {n: _project(base, n) for n in "ab"}
        _keeper(stores["a"], "save", "--project-dir", projects["a"], "--decision", "Use FTS5", "--summary", "a one")
        for name in "ab":
            _keeper(stores[name], "sync", "--remote", remote)
        _keeper(stores["b"], "save", "--project-dir", projects["b"], "--decision", "Use pytest", "--summary", "b one")
        _keeper(stores["a"], "save", "--project-dir", projects["a"], "--decision", "Tag releases", "--summary", "a two")
        _keeper(stores["a"], "sync")
        real = Document.parse.__func__  # type: ignore[attr-defined]
        counts = [0, 0]

        def counted(cls: type[Document], text: str | None = None, *args: object, **kwargs: object) -> Document:
            counts[1] += 1
            counts[0] += "# Project Memory" in (text or "")
            return real(cls, text, *args, **kwargs)  # type: ignore[no-any-return]

        Document.parse = classmethod(counted)  # type: ignore[assignment,method-assign]
        try:
            _keeper(stores["b"], "sync")
        finally:
            Document.parse = classmethod(real)  # type: ignore[assignment,method-assign]
        return counts[0], counts[1]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    memory, total = count()
    print(f"one sync, memory.md changed on both machines: {memory} parses of memory.md ({total} parses in all)")


if __name__ == "__main__":
    main()
