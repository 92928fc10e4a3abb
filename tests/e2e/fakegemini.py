"""A stand-in for Google's Gemini API (``generativelanguage`` v1beta) on 127.0.0.1, playing the model for Gemini CLI.

Gemini CLI sends ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` once per model step
(with ``tools``), plus side requests without tools (its model router asks for a JSON object that
fits a schema) and ``:countTokens``. Each step takes the next scripted turn: a shell command, a
final text, or a function of the request body returning one (a model that reads what it was shown).
Only steps use up turns; every step's body is kept so tests can assert what the model was shown.
Adapted from the research's ``fake_gemini.py``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.fakeapi import FakeAPI

Part = dict[str, Any]


def shell(command: str) -> Part:
    """A call of Gemini's shell tool."""
    return {"functionCall": {"name": "run_shell_command", "args": {"command": command, "description": "scripted"}}}


def say(text: str) -> Part:
    return {"text": text}


def _fill(schema: dict[str, Any]) -> Any:
    """The smallest value that fits a JSON schema, so the router's side requests parse."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _fill(props.get(k, {})) for k in (schema.get("required") or props)}
    return {"string": "fake", "integer": 1, "number": 1, "boolean": False, "array": []}.get(kind)


def texts_of(body: dict[str, Any]) -> str:
    """Every text Gemini sent in one step: the system instruction, each turn's text parts, tool outputs."""
    found: list[str] = []
    system = body.get("systemInstruction") or {}
    found += [p.get("text", "") for p in system.get("parts", []) if isinstance(p, dict)]
    for content in body.get("contents") or []:
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if isinstance(part.get("text"), str):
                found.append(part["text"])
            response = (part.get("functionResponse") or {}).get("response")
            if isinstance(response, dict):
                found += [v for v in response.values() if isinstance(v, str)]
    return "\n".join(found)


def last_user_turn(body: dict[str, Any]) -> list[Part]:
    """The parts of the last ``user`` content of a step: what the model is answering now."""
    users = [c for c in body.get("contents") or [] if isinstance(c, dict) and c.get("role") == "user"]
    return list(users[-1].get("parts", [])) if users else []


class FakeGemini(FakeAPI):
    """Serve scripted turns; ``requests`` holds every model step's body, in order."""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        if path.endswith(":countTokens"):
            return 200, b'{"totalTokens": 100}', "application/json"
        if body.get("tools"):
            part = self.take(body, say("Done."))
        else:
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            wanted = config.get("responseMimeType") == "application/json"
            part = say(json.dumps(_fill(schema or {})) if wanted else "ok")
        reply = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "fake",
        }
        if ":streamGenerateContent" in path:
            return 200, f"data: {json.dumps(reply)}\r\n\r\n".encode(), "text/event-stream"
        return 200, json.dumps(reply).encode(), "application/json"
