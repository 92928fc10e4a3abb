"""``keeper demo``: Keeper's whole loop in a few seconds, with no Claude Code and no network.

It replays a short scripted session through the real entry points (``python -m keeper hook …``
and ``keeper save`` as subprocesses, exactly as Claude Code and Claude would run them) against a
throwaway store, then shows what was saved, what the next session is given, and a recall.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from keeper.plugin import install

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

SESSION_1 = "demo-session-1"
SESSION_2 = "demo-session-2"
TOOLS = [
    ("Read", {"file_path": "src/checkout/cart.py"}),
    ("Bash", {"command": "pytest tests/test_cart.py -q"}),
    ("Edit", {"file_path": "src/checkout/discounts.py"}),
    ("Bash", {"command": "pytest -q"}),
    ("Edit", {"file_path": "src/checkout/cart.py"}),
]
SAVE_YAML = """\
summary: Fixed discount stacking in checkout; percentage codes now apply after fixed-amount codes.
decisions:
  - Apply fixed-amount discounts before percentage discounts (matches finance's invoices)
  - Keep money as integer cents end to end, never floats
state:
  - Discount stacking fixed and tested; next is the refund path
issues:
  - Refunds still use the old rounding in src/checkout/refunds.py
"""


def _rule(title: str) -> None:
    print(f"\n── {title} " + "─" * max(0, 66 - len(title)))


def _indent(text: str, limit: int = 1400) -> str:
    text = text if len(text) <= limit else text[:limit] + "\n…"
    return textwrap.indent(text.rstrip(), "   │ ", predicate=lambda _: True)


class Demo:
    def __init__(self, base: str) -> None:
        self.project = os.path.join(base, "shop-api")
        os.makedirs(os.path.join(self.project, ".git"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("KEEPER_", "CLAUDE_"))}
        self.env.update(
            KEEPER_HOME=os.path.join(base, "store"),
            KEEPER_SAVE_EVERY="5",
            KEEPER_FINAL_SAVE_MIN="3",
            CLAUDE_PROJECT_DIR=self.project,
            PYTHONIOENCODING="utf-8",
        )

    def keeper(self, args: list[str], stdin: str = "", session: str | None = None) -> str:
        env = dict(self.env)
        if session:
            env["CLAUDE_CODE_SESSION_ID"] = session
        done = subprocess.run(
            [sys.executable, "-m", "keeper", *args],
            input=stdin.encode("utf-8"),
            capture_output=True,
            env=env,
            cwd=self.project,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"keeper {' '.join(args)} failed: {done.stderr.decode('utf-8', 'replace')}")
        return done.stdout.decode("utf-8", "replace")

    def hook(self, event: str, session: str, **fields: object) -> dict[str, object]:
        payload = {"session_id": session, "cwd": self.project, "transcript_path": "", **fields}
        reply = json.loads(self.keeper(["hook", event], json.dumps(payload)) or "{}")
        return reply if isinstance(reply, dict) else {}


def _context(reply: dict[str, object]) -> str:
    specific = reply.get("hookSpecificOutput")
    return str(specific.get("additionalContext", "")) if isinstance(specific, dict) else ""


def run(args: argparse.Namespace) -> int:
    base = tempfile.mkdtemp(prefix="keeper-demo-")
    try:
        demo = Demo(base)
        print("Keeper demo: a scripted Claude Code session, replayed through Keeper's real hooks.")
        print(f"Throwaway store: {demo.env['KEEPER_HOME']} (deleted at the end). save_every=5 here.")

        _rule("1. Session starts in shop-api (no memory yet)")
        reply = demo.hook("session-start", SESSION_1, hook_event_name="SessionStart", source="startup")
        print(f"   user sees: {reply.get('systemMessage')}")

        _rule("2. Claude works; PostToolUse counts each tool use")
        for number, (tool, tool_input) in enumerate(TOOLS, 1):
            reply = demo.hook(
                "post-tool-use",
                SESSION_1,
                hook_event_name="PostToolUse",
                tool_name=tool,
                tool_input=tool_input,
            )
            shown = tool_input.get("command") or tool_input.get("file_path")
            print(f"   tool use {number}: {tool} {shown}")
            if _context(reply):
                print("   Keeper asks Claude to save (model-visible additionalContext):")
                print(_indent(_context(reply), 520))

        _rule("3. Claude runs the save it was asked for")
        from keeper.hooks.context import end_marker

        end = end_marker()
        print(_indent(f"keeper save <<'{end}'\n" + SAVE_YAML + end))
        print(_indent(demo.keeper(["save"], SAVE_YAML, session=SESSION_1)))
        demo.hook(
            "post-tool-use",
            SESSION_1,
            hook_event_name="PostToolUse",
            tool_name="Bash",
            tool_input={"command": f"keeper save <<'{end}' …"},
        )

        _rule("4. The reply ends: Stop updates the session file, no model call")
        reply = demo.hook(
            "stop",
            SESSION_1,
            hook_event_name="Stop",
            stop_hook_active=False,
            last_assistant_message="Discount stacking is fixed; all tests pass.",
        )
        print("   Stop reply:", json.dumps(reply), "(nothing unsaved, so no final-save request)")
        demo.hook("session-end", SESSION_1, hook_event_name="SessionEnd", reason="prompt_input_exit")

        _rule("5. What memory.md now holds")
        status = json.loads(demo.keeper(["status", "--json"]))
        with open(status["memory"]["path"], encoding="utf-8") as fh:
            print(_indent(fh.read()))

        _rule("6. Next day, a new session starts: what Claude is given")
        reply = demo.hook("session-start", SESSION_2, hook_event_name="SessionStart", source="startup")
        print(f"   user sees: {reply.get('systemMessage')}")
        print("   model sees (additionalContext):")
        print(_indent(_context(reply), 900))

        _rule("7. Recall with a typo: keeper recall 'refund roundig'")
        print(_indent(demo.keeper(["recall", "refund", "roundig", "--limit", "2"])))

        _rule("Done")
        print("   Install the plugin in Claude Code to get this in every project:")
        print(f"     {install.install_hint()}")
        print("   `keeper status` in a project shows where its memory lives.")
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)
