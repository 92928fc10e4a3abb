"""A stand-in for the Anthropic Messages API on 127.0.0.1, answering with scripted turns.

Each ``POST /v1/messages`` takes the next scripted reply (a list of content blocks, or a function
of the request returning one: a model that reads what it was shown) and streams it
as server-sent events the way the real API does; every request body is recorded so tests can
assert what the model was shown. When the script runs out it answers with a short text reply.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]


def text(message: str) -> list[Block]:
    return [{"type": "text", "text": message}]


def bash(command: str, description: str = "run a command") -> list[Block]:
    return [{"type": "tool_use", "name": "Bash", "input": {"command": command, "description": description}}]


CHECK_WORD = re.compile(r"keeper-live-[0-9a-f]{12}")


def check_word(shown: str) -> str:
    """What a model answers Keeper's live check (``keeper doctor --live``) when it reads what it was
    shown: the check word, or NONE."""
    found = CHECK_WORD.findall(shown)
    return found[-1] if found else "NONE"


def repeats_check_word(body: dict[str, Any]) -> list[Block]:
    """A turn that answers the live check from the request, as a model that reads its context does."""
    return text(check_word(texts_of(body)))


class FakeAPI:
    """Serve scripted replies; ``requests`` holds the JSON body of every inference request."""

    def __init__(self, script: list[Any] | None = None) -> None:
        self.script = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
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

            def do_HEAD(self) -> None:
                self._send(200, b"")

            def do_GET(self) -> None:
                self._send(200, b"{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._send(*api.answer(self.path.split("?")[0], json.loads(self.rfile.read(length) or b"{}")))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    prefix = ""  # the API's path below the server, in the URL a client is given

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.prefix}"

    def __enter__(self) -> FakeAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        """Status, body and content type for one POST (a subclass serves another API)."""
        if path.endswith("/count_tokens"):
            return 200, b'{"input_tokens": 100}', "application/json"
        if not path.endswith("/v1/messages"):
            return 404, b'{"type":"error","error":{"type":"not_found_error","message":"no"}}', "application/json"
        blocks = self._next(body)
        if body.get("stream"):
            return 200, self._sse(body, blocks), "text/event-stream"
        return 200, json.dumps(self._message(body, blocks)).encode(), "application/json"

    def take(self, body: dict[str, Any], done: Any) -> Any:
        """Keep one model step's request and play the next scripted turn (a function of the request is
        called with it), or ``done`` once the script has run out."""
        with self._lock:
            self.requests.append(body)
            turn = self.script.pop(0) if self.script else done
        return turn(body) if callable(turn) else turn

    def _next(self, body: dict[str, Any]) -> list[Block]:
        blocks = self.take(body, text("Done."))
        out = []
        for block in blocks:
            block = dict(block)
            if block["type"] == "tool_use":
                block.setdefault("id", f"toolu_{next(self._ids):06d}")
            out.append(block)
        return out

    @staticmethod
    def _stop_reason(blocks: list[Block]) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"

    def _message(self, body: dict[str, Any], blocks: list[Block]) -> dict[str, Any]:
        return {
            "id": f"msg_{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": blocks,
            "stop_reason": self._stop_reason(blocks),
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _sse(self, body: dict[str, Any], blocks: list[Block]) -> bytes:
        def event(kind: str, data: dict[str, Any]) -> str:
            return f"event: {kind}\ndata: {json.dumps(data)}\n\n"

        message = self._message(body, [])
        message["stop_reason"] = None
        out = [event("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out.append(
                event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            )
            out.append(event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.append(
            event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": self._stop_reason(blocks), "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
        )
        out.append(event("message_stop", {"type": "message_stop"}))
        return "".join(out).encode()


def texts_of(request: dict[str, Any]) -> str:
    """Every piece of text in a request (system blocks and all messages), for 'the model saw X' checks."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for key in ("text", "content", "system", "messages"):
                if key in node:
                    walk(node[key])

    walk(request.get("system"))
    walk(request.get("messages"))
    return "\n".join(parts)
