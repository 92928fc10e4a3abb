"""Drive Keeper as Claude Code does: real `keeper hook` and `keeper save` processes on a throwaway
store, Claude Code transcripts (JSONL) written beside them, a project work tree cloned from a local
bare mirror.

Which Keeper runs is a source folder (``--keeper-src``: ``PYTHONPATH=DIR python -m keeper``), so one
harness measures two builds. Time passes between sessions through libfaketime (``apt install
faketime``): session ``k`` runs with the clock ``k`` hours ahead, and the files it changes carry that
time, so a check that compares file dates with save dates sees the history spread out as it was, not
squeezed into the few minutes the run takes. Stat results are left real (``NO_FAKE_STAT``): Keeper
reads the file dates the harness set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAKETIME_LIBS = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)
HOUR = 3600
MARK = "[may be stale: "


def faketime_lib() -> str:
    """The libfaketime library, or exit saying how to get it."""
    for lib in FAKETIME_LIBS:
        if os.path.exists(lib):
            return lib
    sys.exit("benchmarks/stale: libfaketime is needed to let time pass between sessions (apt install faketime)")


def git(*args: str, cwd: str | Path | None = None) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)
    return out.stdout.decode("utf-8", "replace")


def show(mirror: str, commit: str, path: str) -> str | None:
    """A file's text at a commit of the mirror; None when it is not there."""
    out = subprocess.run(["git", "-C", mirror, "show", f"{commit}:{path}"], capture_output=True)
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def files_at(mirror: str, commit: str, under: str = "") -> list[str]:
    args = ["-C", mirror, "ls-tree", "-r", "--name-only", commit]
    return git(*args, *(["--", under] if under else [])).split("\n")[:-1]


def rev(mirror: str, spec: str) -> str:
    return git("-C", mirror, "rev-parse", "--verify", spec + "^{commit}").strip()


def work_tree(mirror: str, folder: Path, commit: str) -> Path:
    """A project work tree of the mirror at ``commit``: a clone sharing the mirror's objects (the
    mirror is only read), on a branch ``work``."""
    git("clone", "-q", "--shared", "--no-checkout", mirror, str(folder))
    git("-c", "advice.detachedHead=false", "checkout", "-q", "-B", "work", commit, cwd=folder)
    return folder


def move_to(tree: Path, commit: str) -> list[str]:
    """Check the work tree out at ``commit`` (what git rewrites, with real content and mtimes);
    returns the paths that differ from the commit it was at."""
    before = git("rev-parse", "HEAD", cwd=tree).strip()
    changed = git("diff", "--name-only", "--no-renames", before, commit, cwd=tree).split("\n")[:-1]
    git("checkout", "-q", "-B", "work", commit, cwd=tree)
    return changed


def set_mtime(tree: Path, paths: list[str], when: float) -> None:
    for rel in paths:
        full = tree / rel
        if full.exists():
            os.utime(full, (when, when))


def need_python_3_11() -> None:
    if sys.version_info < (3, 11):
        sys.exit("benchmarks/stale: Python 3.11 or newer (python -P) is needed")


class Keeper:
    """One Keeper build (a source folder) on one throwaway store, run as separate processes."""

    def __init__(self, src: str, base: Path, python: str = sys.executable) -> None:
        need_python_3_11()
        self.src, self.python = os.path.abspath(src), python
        self.home = base / "keeper-home"
        self.user_home = base / "home"
        self.user_home.mkdir(parents=True, exist_ok=True)
        self.lib = faketime_lib()
        self.calls = 0
        self.seconds = 0.0

    def env(self, project: Path, hours: float) -> dict[str, str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE", "CODEX", "XDG_"))}
        clean.update(
            KEEPER_HOME=str(self.home),
            HOME=str(self.user_home),
            PYTHONPATH=self.src,
            CLAUDE_PROJECT_DIR=str(project),
            PYTHONDONTWRITEBYTECODE="1",
            LD_PRELOAD=self.lib,
            FAKETIME=f"+{int(hours * HOUR)}",
            NO_FAKE_STAT="1",
        )
        return clean

    def run(self, project: Path, hours: float, *args: str, stdin: str = "") -> str:
        began = time.perf_counter()
        out = subprocess.run(  # -P: the project's own folder is not on sys.path (Keeper's history holds a keeper/)
            [self.python, "-P", "-m", "keeper", *args],
            input=stdin.encode("utf-8"),
            capture_output=True,
            cwd=project,
            env=self.env(project, hours),
        )
        self.calls += 1
        self.seconds += time.perf_counter() - began
        if out.returncode != 0:
            raise RuntimeError(f"keeper {' '.join(args)} exited {out.returncode}: {out.stderr.decode()[-2000:]}")
        return out.stdout.decode("utf-8", "replace")

    def version(self) -> str:
        code = "import keeper, os; print(keeper.__version__, os.path.dirname(keeper.__file__))"
        env = {**os.environ, "PYTHONPATH": self.src}
        out: str = subprocess.run([self.python, "-c", code], capture_output=True, text=True, env=env).stdout
        return out.strip()

    def hook(self, project: Path, hours: float, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        out = self.run(project, hours, "hook", event, stdin=json.dumps(payload)).strip()
        reply: dict[str, Any] = json.loads(out) if out else {}
        return reply

    def status(self, project: Path, hours: float) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.run(project, hours, "status", "--json"))
        return found


def context_of(reply: dict[str, Any]) -> str:
    return str(reply.get("hookSpecificOutput", {}).get("additionalContext", ""))


UNSEEN = "May be stale, left out above for size (keeper why): "  # since 0.5: marked items with no room


def marks_in(context: str) -> dict[str, str]:
    """The items the start-up context marks: the line's text (before the mark) -> the reason; an
    item named in the line of marked items left out for size by its text as cut there (no ``…``)."""
    found: dict[str, str] = {}
    for line in context.splitlines():
        at = line.rfind(MARK)
        if line.startswith(UNSEEN):
            for one in line[len(UNSEEN) :].split("]; "):
                text, _, why = one.partition(MARK)
                found[text.strip().rstrip("…")] = why.removesuffix("]")
        elif at >= 0 and line.endswith("]"):
            found[line[:at].strip()] = line[at + len(MARK) : -1]
    return found


@dataclass
class Transcript:
    """A Claude Code 2.1.330 transcript, written record by record as the session goes."""

    path: Path
    cwd: str
    session: str
    clock: float  # the session's time (seconds since the epoch) for the records' timestamps
    n: int = 0
    branch: str = "work"

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.n += 1
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock + self.n)) + ".000Z"
        return {
            "type": kind,
            "uuid": f"{self.session[:8]}-{self.n}",
            "parentUuid": f"{self.session[:8]}-{self.n - 1}" if self.n > 1 else None,
            "timestamp": stamp,
            "sessionId": self.session,
            "cwd": self.cwd,
            "version": "2.1.330",
            "gitBranch": self.branch,
            "isSidechain": False,
            "userType": "external",
            **extra,
        }

    def _add(self, entry: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")

    def prompt(self, text: str) -> None:
        self._add(self._base("user", message={"role": "user", "content": text}, promptId=f"p{self.n}"))

    def tool(self, name: str, tool_input: dict[str, Any], result: str = "ok") -> None:
        tool_id = f"toolu_{self.session[:6]}{self.n:04d}"
        message = {
            "id": f"msg_{self.n}",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [
                {"type": "text", "text": f"Running {name}."},
                {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        self._add(self._base("assistant", message=message, requestId=f"req_{self.n}"))
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": False}
        self._add(self._base("user", message={"role": "user", "content": [block]}, toolUseResult={"stdout": result}))

    def reply(self, text: str) -> None:
        message = {"id": f"msg_{self.n}", "role": "assistant", "content": [{"type": "text", "text": text}]}
        self._add(self._base("assistant", message=message))


@dataclass
class Session:
    """One Claude Code session in the project: SessionStart, tool uses (each with its PostToolUse),
    one `keeper save`, Stop and SessionEnd, all at ``hours`` past the run's start."""

    keeper: Keeper
    project: Path
    hours: float
    transcripts: Path
    session: str = field(default_factory=lambda: str(uuid.uuid4()))
    reply: dict[str, Any] = field(default_factory=dict)
    transcript: Transcript | None = None

    def payload(self, event: str, **extra: Any) -> dict[str, Any]:
        assert self.transcript is not None
        return {
            "session_id": self.session,
            "transcript_path": str(self.transcript.path),
            "cwd": str(self.project),
            "hook_event_name": event,
            **extra,
        }

    def start(self, prompt: str) -> dict[str, Any]:
        self.transcripts.mkdir(parents=True, exist_ok=True)
        path = self.transcripts / f"{self.session}.jsonl"
        self.transcript = Transcript(path, str(self.project), self.session, time.time() + self.hours * HOUR)
        path.touch()
        self.reply = self.keeper.hook(
            self.project, self.hours, "session-start", self.payload("SessionStart", source="startup")
        )
        self.transcript.prompt(prompt)
        return self.reply

    def use(self, name: str, tool_input: dict[str, Any], result: str = "ok") -> None:
        assert self.transcript is not None
        self.transcript.tool(name, tool_input, result)
        response = {"stdout": result} if name == "Bash" else {"filePath": tool_input.get("file_path", "")}
        payload = self.payload("PostToolUse", tool_name=name, tool_input=tool_input, tool_response=response)
        self.keeper.hook(self.project, self.hours, "post-tool-use", payload)

    def save(self, summary: str, decisions: list[str]) -> str:
        body = "summary: " + summary.replace("\n", " ") + "\ndecisions:\n"
        body += "".join("  - " + d.replace("\n", " ") + "\n" for d in decisions)
        return self.keeper.run(self.project, self.hours, "save", "--session", self.session, stdin=body)

    def end(self, last: str = "Done.") -> None:
        assert self.transcript is not None
        self.transcript.reply(last)
        self.keeper.hook(
            self.project,
            self.hours,
            "stop",
            self.payload("Stop", stop_hook_active=False, last_assistant_message=last),
        )
        self.keeper.hook(self.project, self.hours, "session-end", self.payload("SessionEnd", reason="other"))


def fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder
