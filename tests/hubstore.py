"""A store that looks lived in, made by Keeper's own functions: three projects, months of sessions.

``build`` saves through ``keeper.capture.saving.save`` and brings each session file up to date from a
real-format transcript through ``keeper.capture.record.update``, with ``now=`` spread over ten months.
One project's folder is deleted afterwards (a gone root), and one memory holds markup that must
show as text in the hub and never run.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from keeper.capture import record, saving
from keeper.store import counters
from keeper.store.resolve import resolve
from tests.transcripts import Transcript

TODAY = datetime(2026, 11, 20, 18, 0)
PLANTED_SCRIPT = "<script>document.title='PWNED'</script>"
PLANTED_IMG = "<img src=x onerror=\"document.title='PWNED'\">"
TYPO_TARGET = "Refunds still use the old rounding"

# (project folder, sessions, what they are about)
PROJECTS = [
    ("shop-api", 26, ["checkout", "discount stacking", "cart totals", "tax rounding", "refund flow"]),
    ("billing", 14, ["invoice export", "currency formatting", "ledger sync"]),
    ("old-proto", 6, ["prototype search", "spike on embeddings"]),
]


class DatedTranscript(Transcript):
    """A transcript whose entries carry the session's own (UTC) times, not the builder's fixed ones."""

    def __init__(self, path: Path, cwd: str, start: datetime) -> None:
        super().__init__(path, cwd)
        self.start = start

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        entry = super()._base(kind, **extra)
        entry["timestamp"] = (self.start + timedelta(seconds=30 * self.n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        return entry


def _save(values: dict[str, Any], at: Any, session: str, when: datetime) -> None:
    saving.save(at.project, at.cfg, saving.to_save_input(values, []), session, now=when)


def build(base: Path) -> dict[str, Any]:
    """Make the store under ``$KEEPER_HOME``; return each project's root and id, and what was planted."""
    made: dict[str, Any] = {}
    for p_index, (name, count, topics) in enumerate(PROJECTS):
        root = base / "code" / name
        (root / ".git").mkdir(parents=True)
        first = None
        for n in range(count):
            when = TODAY - timedelta(days=300 - p_index * 7 - n * (290 // count), hours=n % 5)
            session = f"{name}-{n:03d}"
            at = resolve(str(root), session, strict=True)
            first = first or at
            topic = topics[n % len(topics)]
            values: dict[str, Any] = {"summary": f"Worked on {topic} in {name} (session {n})"}
            if n % 3 == 0:
                values["decisions"] = [f"Decision {n} for {topic}: keep `{topic.replace(' ', '_')}` in one module"]
            if n % 4 == 1:
                values["issues"] = [f"Flaky test around {topic} number {n}"]
            if n % 4 == 3 and n > 3:
                values["resolved"] = [f"Flaky test around {topics[(n - 2) % len(topics)]} number {n - 2}"]
            if n == 7 and p_index == 0:
                values["retired"] = ["Decision 0 for checkout: keep `checkout` in one module"]
            if n == 5 and p_index == 0:
                values["issues"] = [TYPO_TARGET]
                values["summary"] = "Looked into the refund flow: refunds still use the old rounding in the ledger"
            if n == count - 1 and p_index == 0:
                values["decisions"] = [f"Show markup as text: {PLANTED_SCRIPT}"]
                values["issues"] = [f"An image tag in an issue: {PLANTED_IMG}"]
            _save(values, at, session, when)
            transcript = DatedTranscript(base / "transcripts" / f"{session}.jsonl", str(root), when)
            transcript.prompt(f"Let us continue with the {topic} work in {name}")
            transcript.tool("Edit", {"file_path": str(root / "src" / f"{topic.replace(' ', '_')}.py")})
            transcript.tool("Bash", {"command": "pytest -q"}, "3 passed")
            transcript.reply(f"The {topic} change is in and the tests pass.")
            record.update(at.project, at.cfg, session, {"Tool uses": f"{n + 2} (1 saves)"}, str(transcript.path), when)
            counters.record_hook(at.project.state, "session-start", 1800 + 40 * n)
            counters.record_hook(at.project.state, "post-tool-use", 0)
        assert first is not None
        made[name] = {"root": str(root), "id": first.project.id, "sessions": count}
    shutil.rmtree(base / "code" / "old-proto")
    return made
