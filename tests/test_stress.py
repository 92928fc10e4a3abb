"""Every writer at once — saves, hooks, clears, restores, recalls — then an inventory of every file.

Clear and restore used to destroy files when they raced (old session files vanished, in neither
sessions/ nor the trash). After this run every decision saved and every session file made is
somewhere: in the project, or in a backup in the trash.

The run is as long as the savers' saves (a count, not a time: as many races on a slow machine as
on a fast one); the other writers start with them and go on until they are done.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import traceback
from pathlib import Path
from typing import Any

import pytest

from keeper.capture import saving
from keeper.errors import KeeperError
from keeper.hooks import entry
from keeper.memory.document import SaveInput
from keeper.recall import search
from keeper.store import config, identity, trash
from tests.conftest import LONG

pytestmark = pytest.mark.slow
SAVES = 100 if LONG else 20  # by each of the two savers


def _run(role: str, worker: int, root: str, home: str, saves: int, start: Any, stop: Any, queue: Any) -> None:
    """One writer: a saver makes ``saves`` saves; every other role goes on until ``stop`` is set."""
    os.environ["KEEPER_HOME"] = home
    project, cfg = identity.make_project(root), config.load(root)
    made: dict[str, list[str]] = {"decisions": [], "files": []}
    errors: list[str] = []
    start.wait(120)  # every writer imported and ready: they all begin together
    i = 0
    while (i < saves) if role == "saver" else not stop.is_set():
        i += 1
        try:
            if role == "saver":
                decision = f"Saver {worker} decision {i} about module_{worker}_{i}"
                session = f"saver-{worker}-{i // 5}"
                _, session_file = saving.save(project, cfg, SaveInput(decisions=[decision], summary=f"s{i}"), session)
                made["decisions"].append(decision)
                made["files"].append(os.path.basename(session_file))
            elif role == "hooks":
                base = {"session_id": f"hooked-{worker}", "cwd": root}
                entry.handle("post-tool-use", json.dumps({**base, "tool_name": "Read"}).encode())
                entry.handle("stop", json.dumps({**base, "last_assistant_message": f"r{i}"}).encode())
            elif role == "clearer":
                what = "all" if i % 3 == 0 else "old"
                files = trash.files_to_clear(project, what, 0)
                if files:
                    trash.clear(project, files, f"stress {what}", 14)
            elif role == "restorer":
                try:
                    trash.restore(project)
                except KeeperError as exc:
                    if "nothing to restore" not in str(exc):
                        raise
            else:
                search.search(project, f"module_{i % 3} decision", limit=3)
        except KeeperError as exc:  # a busy lock is a fair answer under this load; anything else is not
            if "held" not in str(exc):
                errors.append(f"{role}: {exc}")
        except Exception:
            errors.append(f"{role}: {traceback.format_exc()[-600:]}")
    queue.put((role, made, errors))


def _everything(folder: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for path in folder.rglob("*.md"):
        found.setdefault(path.name, []).append(path)
    return found


def test_every_writer_at_once_loses_nothing(project_dir: Path, store: Path) -> None:
    root, home = str(project_dir), str(store)
    ctx = multiprocessing.get_context("spawn")
    queue, stop = ctx.Queue(), ctx.Event()
    roles = [("saver", 1), ("saver", 2), ("hooks", 1), ("clearer", 1), ("clearer", 2), ("restorer", 1)]
    roles += [("restorer", 2), ("recaller", 1)]
    start = ctx.Barrier(len(roles))
    procs = [ctx.Process(target=_run, args=(role, n, root, home, SAVES, start, stop, queue)) for role, n in roles]
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=300) for role, _ in roles if role == "saver"]  # only the savers end by themselves
    stop.set()
    results += [queue.get(timeout=120) for role, _ in roles if role != "saver"]
    for proc in procs:
        proc.join(timeout=60)
    errors = [e for _, _, errs in results for e in errs]
    assert not errors, errors[:3]
    project = identity.make_project(root)
    while trash.backups(project):  # bring back what can come back; the rest stays in the trash
        restored, kept = trash.restore(project)
        if not restored and kept:
            break
    decisions = [d for role, made, _ in results if role == "saver" for d in made["decisions"]]
    files = {f for role, made, _ in results if role == "saver" for f in made["files"]}
    assert len(decisions) == 2 * SAVES and files  # every save raced the clears
    texts = [p.read_text(encoding="utf-8") for p in store.rglob("memory.md")]
    missing = [d for d in decisions if not any(f"- {d} (" in text for text in texts)]
    assert not missing, missing[:5]
    everywhere = _everything(store / "projects") | _everything(store / "trash")
    assert not [f for f in files if f not in everywhere], sorted(files - set(everywhere))[:5]
    assert not list(store.rglob("*.tmp"))


def test_two_clears_in_the_same_second_get_their_own_backups(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import datetime as real_datetime

    class Frozen(real_datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:  # type: ignore[override]
            return cls(2026, 11, 22, 9, 30, 0)

    monkeypatch.setattr(trash, "datetime", Frozen)
    project, cfg = identity.make_project(str(project_dir)), config.load(None)
    _, made = saving.save(project, cfg, SaveInput(summary="first"), "a")
    first = trash.move_to_trash(project, [made], "one")
    _, made = saving.save(project, cfg, SaveInput(summary="second"), "b")
    second = trash.move_to_trash(project, [made], "two")
    assert first != second and os.path.basename(second) == os.path.basename(first) + "-2"
    for backup, reason in ((first, "one"), (second, "two")):
        manifest = json.loads(Path(backup, trash.MANIFEST).read_text())
        assert manifest["reason"] == reason and len(manifest["files"]) == 1
        assert manifest["files"] == [str(Path(p).relative_to(backup)) for p in Path(backup).rglob("*.md")]
