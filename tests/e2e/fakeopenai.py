"""A stand-in for an OpenAI-compatible Chat Completions API on 127.0.0.1, playing the model for OpenCode.

OpenCode (through ``@ai-sdk/openai-compatible``) sends ``POST /v1/chat/completions`` with
``stream: true``: first a title request without tools, then one request per model step with tools.
Each step takes the next scripted turn: a shell command, a final text, or a function of the request
body returning one (a model that reads what it was shown). Requests without tools get "Fake title"
and use up nothing; every step's body is kept. Adapted from the research's ``fake_openai.py``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.fakeapi import FakeAPI

Reply = dict[str, Any]


def shell(command: str) -> Reply:
    """A call of OpenCode's ``bash`` tool."""
    return {"tool": "bash", "args": {"command": command, "description": "scripted command"}}


def say(text: str) -> Reply:
    return {"text": text}


def texts_of(body: dict[str, Any]) -> str:
    """Every text of one request: system and user messages, the model's, tool results."""
    found: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            found.append(content)
        parts = content if isinstance(content, list) else []
        found += [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(found)


class FakeOpenAI(FakeAPI):
    """Serve scripted turns; ``requests`` holds every model step's body, in order."""

    prefix = "/v1"

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        if not path.endswith("/chat/completions"):
            return 404, b'{"error": {"message": "not in the fake"}}', "application/json"
        turn: Reply = say("Fake title")
        if body.get("tools"):
            turn = self.take(body, say("Done."))
        if "text" in turn:
            deltas, finish = [{"role": "assistant", "content": turn["text"]}], "stop"
        else:
            call = {"id": f"call_{next(self._ids)}", "type": "function"}
            call["function"] = {"name": turn["tool"], "arguments": json.dumps(turn["args"])}
            deltas, finish = (
                [{"role": "assistant", "content": None, "tool_calls": [{**call, "index": 0}]}],
                "tool_calls",
            )
        chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"}
        data = "".join(f"data: {json.dumps({**head, **c})}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return 200, data.encode(), "text/event-stream"
