"""Build Claude Code transcripts (JSONL) in the documented 2.1.330 format, record kind by kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "5d1e7a52-7a0b-4c43-9a41-2f1f0c5b7a11"


class Transcript:
    """Appends entries the way Claude Code writes them: one JSON object per line."""

    def __init__(self, path: Path, cwd: str = "/work/shop") -> None:
        self.path, self.cwd = path, cwd
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.n += 1
        return {
            "type": kind,
            "uuid": f"u-{self.n}",
            "parentUuid": f"u-{self.n - 1}" if self.n > 1 else None,
            "timestamp": f"2026-11-20T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
            "sessionId": SESSION,
            "cwd": self.cwd,
            "version": "2.1.330",
            "gitBranch": "feature/checkout",
            "isSidechain": False,
            "userType": "external",
            **extra,
        }

    def raw(self, text: str) -> Transcript:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(text)
        return self

    def add(self, entry: dict[str, Any]) -> Transcript:
        return self.raw(json.dumps(entry) + "\n")

    def prompt(self, text: str, **extra: Any) -> Transcript:
        return self.add(self._base("user", message={"role": "user", "content": text}, promptId=f"p{self.n}", **extra))

    def prompt_blocks(self, *texts: str) -> Transcript:
        content = [{"type": "text", "text": t} for t in texts]
        return self.add(self._base("user", message={"role": "user", "content": content}))

    def slash(self, name: str, args: str) -> Transcript:
        markup = f"<command-message>{name.lstrip('/')}</command-message>\n<command-name>{name}</command-name>\n<command-args>{args}</command-args>"
        self.prompt(markup)
        return self.add(
            self._base(
                "user",
                isMeta=True,
                message={"role": "user", "content": [{"type": "text", "text": "rendered command body"}]},
            )
        )

    def tool(
        self, name: str, tool_input: dict[str, Any], result: str = "ok", error: bool = False, tool_id: str | None = None
    ) -> Transcript:
        tool_id = tool_id or f"toolu_{self.n:04d}"
        message = {
            "id": f"msg_{self.n}",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [
                {"type": "thinking", "thinking": "let me think", "signature": "sig"},
                {"type": "text", "text": f"Running {name}."},
                {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        self.add(self._base("assistant", message=message, requestId="req_1"))
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": error}
        return self.add(
            self._base("user", message={"role": "user", "content": [block]}, toolUseResult={"stdout": result})
        )

    def reply(self, text: str) -> Transcript:
        message = {
            "id": f"msg_{self.n}",
            "role": "assistant",
            "content": [{"type": "text", "text": text}, {"type": "redacted_thinking", "data": "xx"}],
        }
        return self.add(self._base("assistant", message=message))

    def compact(self) -> Transcript:
        self.add(
            self._base(
                "system",
                subtype="compact_boundary",
                content="Conversation compacted",
                compactMetadata={"trigger": "auto", "preTokens": 1000},
            )
        )
        return self.prompt(
            "This session is being continued from a previous conversation. Summary: …", isCompactSummary=True
        )

    def noise(self) -> Transcript:
        """Every non-conversation record kind Claude Code writes, plus one it does not know yet."""
        for kind, extra in [
            ("queue-operation", {"operation": "enqueue"}),
            ("attachment", {"attachment": {"type": "hook_success", "content": "x"}}),
            ("progress", {"data": {"type": "bash_progress", "output": "..."}}),
            ("summary", {"summary": "Old style title", "leafUuid": "u-1"}),
            ("custom-title", {"customTitle": "Checkout work"}),
            (
                "file-history-snapshot",
                {"messageId": "m1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False},
            ),
            ("system", {"subtype": "stop_hook_summary", "hookCount": 1}),
            ("system", {"subtype": "turn_duration", "durationMs": 1200}),
            ("last-prompt", {"lastPrompt": "x"}),
            ("a-type-from-the-future", {"payload": {"nested": [1, 2, 3]}}),
        ]:
            self.add(self._base(kind, **extra))
        return self

    def sidechain(self) -> Transcript:
        return self.add(
            self._base(
                "user", isSidechain=True, agentId="a1", message={"role": "user", "content": "subagent task prompt"}
            )
        )


def realistic(path: Path) -> Transcript:
    """A session touching every record kind a parser must survive."""
    t = Transcript(path)
    t.prompt("Fix the discount stacking bug in checkout")
    t.noise()
    t.tool("Read", {"file_path": "/work/shop/src/checkout/cart.py"})
    t.tool("Edit", {"file_path": "/work/shop/src/checkout/discounts.py", "old_string": "a", "new_string": "b"})
    t.tool(
        "Bash",
        {"command": "pytest -q tests/test_cart.py\n# second line", "description": "run tests"},
        "1 failed",
        error=True,
    )
    t.tool("Write", {"file_path": "/work/shop/tests/test_stacking.py", "content": "def test(): pass"})
    t.reply("Fixed; the test passes now.")
    t.prompt_blocks("Now add a changelog entry", "and bump the version")
    t.tool("Bash", {"command": "git diff --stat"})
    t.sidechain()
    t.raw('{"type": "user", "message": {"content": "broken json\n')
    t.raw("not json at all\n")
    t.compact()
    t.slash("/keeper:recall", "discount rounding")
    t.tool("Edit", {"file_path": "/work/shop/tests/test_stacking.py"})
    t.prompt("Deploy key is sk-ant-api03-" + "Z9" * 20 + " do not commit it")
    t.reply("Done.")
    return t
