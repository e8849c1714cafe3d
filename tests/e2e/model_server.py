"""A recording model server on 127.0.0.1 for the real clients: Anthropic Messages and OpenAI
Responses, both streamed (SSE), answering every request with one fixed reply.

It binds the loopback interface only and forwards nothing: a request is recorded (path,
headers, decoded JSON body) and answered here. Codex's own compaction (a request whose
`x-codex-turn-metadata` names `request_kind: compaction`) gets the single `compaction`
output item Codex expects; a WebSocket upgrade is refused with 404 (Codex then posts).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Acknowledged: resumed from the fork."
MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass
class Request:
    """One request a client made."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any

    @property
    def is_codex_compaction(self) -> bool:
        meta = self.headers.get("x-codex-turn-metadata", "")
        return "compaction" in meta and "request_kind" in meta

    @property
    def is_claude_compaction(self) -> bool:
        """Claude's own compaction asks the model to summarise the conversation."""
        if not isinstance(self.body, dict):
            return False
        text = json.dumps(self.body.get("messages", [])[-1:])
        return (
            "summary" in text.lower()
            and "conversation" in text.lower()
            and (
                "compact" in json.dumps(self.body.get("system", "")).lower()
                or "<analysis>" in text
                or "detailed summary" in text.lower()
            )
        )


@dataclass
class Recorder:
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def model_requests(self) -> list[Request]:
        with self.lock:
            return [
                r
                for r in self.requests
                if r.method == "POST"
                and (
                    (r.path.startswith("/v1/messages") and "count_tokens" not in r.path)
                    or r.path.startswith("/v1/responses")
                )
            ]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_stream(model: str) -> bytes:
    message = {
        "id": "msg_e2e_reply",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    return b"".join(
        [
            _sse("message_start", {"type": "message_start", "message": message}),
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": REPLY},
                },
            ),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 8},
                },
            ),
            _sse("message_stop", {"type": "message_stop"}),
        ]
    )


def responses_stream(model: str, compaction: bool) -> bytes:
    if compaction:
        item: dict[str, Any] = {
            "type": "compaction",
            "id": "cmp_e2e",
            "encrypted_content": "e2e-compaction-summary",
        }
    else:
        item = {
            "type": "message",
            "id": "msg_e2e",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": REPLY, "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 8,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 18,
    }
    base = {
        "id": "resp_e2e",
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    parts = [
        _sse("response.created", {"type": "response.created", "response": base}),
        _sse(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ),
    ]
    if not compaction:
        parts.append(
            _sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "item_id": "msg_e2e",
                    "delta": REPLY,
                },
            )
        )
    parts += [
        _sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        _sse(
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": [item], "usage": usage},
            },
        ),
    ]
    return b"".join(parts)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _record(self, raw: bytes) -> Request:
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = Request(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body
        )
        self.server.recorder.add(request)
        return request

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._record(b"")
        # A WebSocket upgrade (Codex tries one first) or any other GET: not here.
        self._send(426, b'{"error":"use https"}')

    def do_HEAD(self) -> None:
        self._record(b"")
        self._send(404, b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(min(length, MAX_BODY_BYTES)) if length else b""
        request = self._record(raw)
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or "e2e-model")
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self._send(200, json.dumps({"input_tokens": max(1, len(raw) // 4)}).encode())
        elif path == "/v1/messages":
            if body.get("stream"):
                self._send(200, anthropic_stream(model), "text/event-stream")
            else:
                reply = {
                    "id": "msg_e2e_reply",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": REPLY}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 8},
                }
                self._send(200, json.dumps(reply).encode())
        elif path == "/v1/responses":
            self._send(
                200, responses_stream(model, request.is_codex_compaction), "text/event-stream"
            )
        else:
            self._send(404, b'{"error":"not found"}')


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    recorder: Recorder


@contextmanager
def model_server() -> Iterator[tuple[str, Recorder]]:
    """(base url, recorder) of a server on 127.0.0.1 for the duration of the block."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.recorder = Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", server.recorder
    finally:
        server.shutdown()
        server.server_close()
