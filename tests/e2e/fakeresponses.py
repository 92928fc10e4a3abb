"""A stand-in for OpenAI's Responses API on 127.0.0.1, playing the model's part for Codex CLI.

Codex sends one ``POST /v1/responses`` per sampling step; each takes the next scripted turn and
answers with the server-sent events Codex reads (``response.output_item.done`` per item, then
``response.completed``). A turn is a shell command, a patch, a final message, or a function of the
request body returning one of those (a model that reads what it was shown). Every request body is
kept so tests can assert what Codex put in front of the model.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.fakeapi import FakeAPI

Item = dict[str, Any]


def shell(command: str) -> Item:
    """A call of Codex's shell tool (``exec_command``), which Codex runs as ``bash -lc COMMAND``."""
    return {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": command})}


def patch(text: str) -> Item:
    """A freeform ``apply_patch`` call (offered to ``gpt-5.5``-class models)."""
    return {"type": "custom_tool_call", "name": "apply_patch", "input": text}


def message(text: str) -> Item:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def texts_of(body: dict[str, Any]) -> str:
    """Every text Codex sent in one request (instructions, messages of every role, tool outputs)."""
    parts: list[str] = [body.get("instructions") or ""]
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("output"), str):
            parts.append(item["output"])
        blocks = item.get("content") or []
        parts.extend(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
    return "\n".join(parts)


class FakeResponses(FakeAPI):
    """Serve scripted turns; ``requests`` holds every request body, in order."""

    prefix = "/v1"

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        if not path.endswith("/responses"):
            return 404, b'{"error": {"message": "not in the fake", "type": "not_found"}}', "application/json"
        item = self._turn(body)
        tokens = item.pop("total_tokens", 15)  # a large count makes Codex compact (model_auto_compact_token_limit)
        return 200, self._events(item, tokens), "text/event-stream"

    def _turn(self, body: dict[str, Any]) -> Item:
        item = dict(self.take(body, message("Done.")))
        n = next(self._ids)
        item["id"] = f"item_{n:06d}"
        if item["type"] != "message":
            item["call_id"] = f"call_{n:06d}"
        return item

    def _events(self, item: Item, tokens: int) -> bytes:
        n = next(self._ids)
        usage = {"input_tokens": tokens - 5, "output_tokens": 5, "total_tokens": tokens}
        events = [
            {"type": "response.created", "response": {"id": f"resp_{n}"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}},
        ]
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
