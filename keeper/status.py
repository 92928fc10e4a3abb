"""What ``keeper status`` reports: counter, files, last save, hook activity, problems, locations."""

from __future__ import annotations

import glob
import os
import shutil

from keeper import __version__, log, memory, paths, sessions, stats, tally
from keeper.config import Config
from keeper.fsutil import read_json, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def collect(project: paths.Project, cfg: Config) -> dict[str, Any]:
    """Everything ``keeper status`` reports, as plain data."""
    text = read_text(project.memory)
    view = memory.overview(text)
    files = sessions.list_files(project)
    session = os.environ.get("CLAUDE_CODE_SESSION_ID")
    if session:  # inside Claude Code: this session's counter; else the most recent one
        tally_file: str | None = tally.path_for(project.state, paths.safe_session_id(session))
    else:
        tallies = glob.glob(os.path.join(project.state, "*.tally"))
        tally_file = max(tallies, key=os.path.getmtime) if tallies else None
    seen = tally.read(tally_file) if tally_file else b""
    saves = [read_json(f).get("last_save") for f in glob.glob(os.path.join(project.state, "*.json"))]
    last_save = max((s for s in saves if isinstance(s, str)), default=None)
    data_root = paths.data_root()
    try:
        import platformdirs

        expected = platformdirs.user_data_dir("keeper", appauthor=False)
    except Exception:  # a broken platformdirs must not break status
        expected = data_root
    return {
        "version": __version__,
        "project": {"name": project.name, "id": project.id, "root": project.root},
        "store": project.dir,
        "memory": {
            "path": project.memory,
            "exists": text is not None,
            "bytes": len(text.encode("utf-8")) if text else 0,
            "decisions": view.decisions,
            "issues": view.issues,
            "recent": view.recent,
            "last_updated": view.last_updated,
        },
        "sessions": {
            "count": len(files),
            "bytes": sum(os.path.getsize(f) for f in files),
            "newest": os.path.basename(files[-1]) if files else None,
        },
        "counter": {
            "session": os.path.basename(tally_file)[: -len(".tally")] if tally_file else None,
            "unsaved": tally.uses_since(seen, tally.SAVE),
            "tool_uses": tally.total_uses(seen),
            "save_every": cfg["save_every"],
            "final_save_min": cfg["final_save_min"],
        },
        "last_save": last_save,
        "hooks": stats.summary(project.state),
        "config": {"global": paths.global_config_file(), "warnings": cfg.warnings},
        "last_error": log.last_error(),
        "log": log.log_file(),
        "keeper_on_path": shutil.which("keeper"),
        "platform_data_dir_agrees": bool(os.environ.get("KEEPER_HOME")) or expected == data_root,
    }
