"""The allowance file's test vectors (tests/fixtures/allowance-vectors.json) and the reader docs/counter.md
writes down, in Python: the launchers (launcher/count.bash, launcher/keeper.c) are run against the same
vectors, so the three readers and the spec cannot drift apart.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keeper.hooks import allowance
from tests.conftest import REPO

VECTORS: list[dict[str, Any]] = json.loads(
    (REPO / "tests" / "fixtures" / "allowance-vectors.json").read_text(encoding="utf-8")
)["vectors"]
NAMES = ("tally", "stats", "python", "settings", "missing")
LIMIT = re.compile(rb"-?[0-9]{1,15}")
SIZE = re.compile(rb"[0-9]{1,5}")


def lay_out(vector: dict[str, Any], folder: Path, record: Path, key: str, spell: Callable[[Path], str]) -> Path:
    """The vector's files under ``folder`` and its record at ``record`` (names spelled by ``spell``,
    the launcher's key for ``{key}``); the settings files dated a minute before the record, or after
    it. Returns the tally."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: folder / name for name in NAMES}
    if "python" not in vector.get("missing", []):
        files["python"].write_bytes(b"")
        files["python"].chmod(0o755)
    for name in ("tally", "stats"):
        if name not in vector.get("missing", []):
            files[name].write_bytes(vector.get("tally", "u").encode() if name == "tally" else b"")
    for name in vector.get("links", []):
        files[name].rename(folder / "elsewhere")
        files[name].symlink_to(folder / "elsewhere")
    text = vector["record"].replace("{key}", key)
    for name, path in files.items():
        text = text.replace("{" + name + "}", spell(path))
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_bytes(text.encode())
    now = time.time()
    os.utime(record, (now, now))
    for name, content in vector.get("files", {}).items():
        files[name].write_bytes(content.encode())
        dated = now + 60 if name in vector.get("newer", []) else now - 60
        os.utime(files[name], (dated, dated))
    return files["tally"]


def read(record: Path, key: str) -> tuple[str, bool]:
    """The decision docs/counter.md specifies: ``("count", True)`` when the use is counted within the
    allowance, ``("keeper", appended)`` when Keeper is called, having had the use appended or not."""
    try:
        text = record.read_bytes()
        dated = record.stat().st_mtime
    except OSError:
        return "keeper", False
    lines = text.split(b"\n")[:-1]  # a line is only one with its line break
    if len(lines) < 6:
        return "keeper", False
    tag, found, limit, tally, stats, python = (os.fsdecode(line) for line in lines[:6])
    at = len(b"\n".join(lines[:6])) + 1
    if not _settings_hold(text, at, dated):
        return "keeper", False
    if tag != allowance.FORMAT or found != key or not LIMIT.fullmatch(os.fsencode(limit)):
        return "keeper", False
    if not (_plain(tally) and _plain(stats) and os.path.isabs(python) and os.access(python, os.X_OK)):
        return "keeper", False
    with open(tally, "ab") as fh:
        fh.write(b"u")
    size = os.path.getsize(tally)
    return ("count" if size < 1 << 20 and size <= int(limit) else "keeper"), True


def _settings_hold(text: bytes, at: int, dated: float) -> bool:
    """Every settings line from ``at`` to ``end`` holds: ``+<file>`` older than the record, ``=<size>``
    (after a ``+``) and that many bytes then a line break, the file's bytes; ``-<file>`` absent."""
    file = None
    while (stop := text.find(b"\n", at)) >= 0:
        line, at = text[at:stop], stop + 1
        mark, name = line[:1], os.fsdecode(line[1:])
        if line == b"end":
            return True
        if mark == b"+" and os.path.isabs(name) and os.path.exists(name) and os.stat(name).st_mtime < dated:
            file = name
        elif mark == b"=" and file is not None and SIZE.fullmatch(line[1:]):
            held, at = text[at : at + int(line[1:]) + 1], at + int(line[1:]) + 1
            if held[-1:] != b"\n" or len(held) != int(line[1:]) + 1:
                return False
            with open(file, "rb") as fh:
                if fh.read(len(held)) != held[:-1]:
                    return False
            file = None
        elif not (mark == b"-" and os.path.isabs(name) and not os.path.lexists(name)):
            return False
    return False


def _plain(path: str) -> bool:
    """An absolute path to a regular file, not a link."""
    try:
        return os.path.isabs(path) and stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
