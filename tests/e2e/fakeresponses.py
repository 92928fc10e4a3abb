"""A stand-in for OpenAI's Responses API on 127.0.0.1, playing the model's part for Codex CLI.

Codex sends one ``POST /v1/responses`` per sampling step; each takes the next scripted turn and
answers with the server-sent events Codex reads (``response.output_item.done`` per item, then
``response.completed``). A turn is a shell command, a patch, a final message, or a function of the
request body returning one of those (a model that reads what it was shown). Every request body is
kept so tests can assert what Codex put in front of the model.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

Item = dict[str, Any]
Turn = Union[Item, Callable[[dict[str, Any]], Item]]


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


class FakeResponses:
    """Serve scripted turns; ``requests`` holds every request body, in order."""

    def __init__(self, script: list[Turn]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._tokens = 15
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(200, b'{"object": "list", "data": [], "models": []}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith("/responses"):
                    self._send(404, b'{"error": {"message": "not in the fake", "type": "not_found"}}')
                    return
                self._send(200, api._sse(api._next(body)), "text/event-stream")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeResponses:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self, body: dict[str, Any]) -> Item:
        with self._lock:
            self.requests.append(body)
            turn = self.script.pop(0) if self.script else message("Done.")
        item = dict(turn(body) if callable(turn) else turn)
        self._tokens = item.pop(
            "total_tokens", 15
        )  # a large count makes Codex compact (model_auto_compact_token_limit)
        n = next(self._ids)
        item["id"] = f"item_{n:06d}"
        if item["type"] != "message":
            item["call_id"] = f"call_{n:06d}"
        return item

    def _sse(self, item: Item) -> bytes:
        n = next(self._ids)
        usage = {"input_tokens": self._tokens - 5, "output_tokens": 5, "total_tokens": self._tokens}
        events = [
            {"type": "response.created", "response": {"id": f"resp_{n}"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}},
        ]
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
