"""``keeper transcript``: a Claude Code transcript or Codex rollout, turn by turn, redacted."""

from __future__ import annotations

from keeper.commands import common

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    """The transcript is the agent's, not Keeper's: nothing in it was redacted, so the output is (with
    the user's patterns too, those of the project it is asked from)."""
    from keeper.capture import transcript
    from keeper.errors import KeeperError
    from keeper.redact import redact as redact_with

    rules = common.resolve_args(args, store=False).cfg.redact_patterns

    def redact(text: str) -> str:
        return redact_with(text, rules)

    if not transcript.readable(args.path):
        raise KeeperError(
            f"{args.path} is not a readable .jsonl transcript; session files name theirs on a Transcript line."
        )
    found = transcript.turns(args.path)
    numbered = list(enumerate(found, 1))
    if args.turn:
        at = next((i for i, t in numbered if args.turn in t.uuids), None)
        if at is None:
            raise KeeperError(
                f"no turn holds an entry {args.turn!r}; run without --turn to see the turns and their uuids."
            )
        numbered = [(i, t) for i, t in numbered if abs(i - at) <= max(args.context, 0)]

    def text() -> list[str]:
        lines = []
        for number, turn in numbered:
            lines.append(f"-- turn {number} of {len(found)} · {turn.timestamp[:19].replace('T', ' ')} · {turn.uuid}")
            lines.append(f"User: {turn.prompt}")
            lines.extend(turn.items)
            lines.append("")
        return lines or ["No prompts in this transcript."]

    data = [
        {"turn": i, **t.as_dict(), "prompt": redact(t.prompt), "items": [redact(item) for item in t.items]}
        for i, t in numbered
    ]
    common.emit(args, data, lambda: [redact(line) for line in text()])
    return 0
