"""A recording model server on 127.0.0.1 for the real clients: Anthropic Messages and OpenAI
Responses, both streamed (SSE), answering every request with one fixed reply.

It binds the loopback interface only and forwards nothing: a request is recorded (path,
headers, decoded JSON body) and answered here. Codex's own compaction (a request whose
`x-codex-turn-metadata` names `request_kind: compaction`) gets the single `compaction`
output item Codex expects; a WebSocket upgrade is refused with 404 (Codex then posts). A
Responses request's `input` is checked as the API checks a stateless one
(`invalid_responses_input`: tool calls and outputs paired) and refused with the API's HTTP
400 otherwise, in every mode.

Preserved thinking, as the provider checks it: every thinking block this server produces is
signed (`sign`) over its canonical prefix (`canonical`, `block_prefix`), and in the modes
"reject" and "drop" every thinking / redacted_thinking block a Messages request sends back is
verified against it (`invalid_thinking`): the first block whose prefix is not the one it was
produced after, and every later one, is invalid. "reject" answers such a request with the
provider's HTTP 400, "drop" leaves those blocks out and lists them in the response's
`input_transformations` (as "reject" does when the request asks for `drop_block`). The default
mode, "record", checks nothing.

A `Script` (tests/e2e/drive.py) makes the server a scripted agent instead of the fixed reply:
thinking, then a tool call the client runs, step after step, then thinking and a final text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

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


Mode = Literal["record", "reject", "drop"]
"""What the server does with the thinking blocks a request sends back (see the module's doc)."""


@dataclass
class Recorder:
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rejected: list[str] = field(default_factory=list)
    """The message of each HTTP 400 the server answered (the provider's, naming the block)."""
    dropped: list[str] = field(default_factory=list)
    """Where each thinking block the server dropped was (`messages.N.content.M`)."""

    def add(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def reject(self, message: str) -> None:
        with self.lock:
            self.rejected.append(message)

    def drop(self, locations: list[str]) -> None:
        with self.lock:
            self.dropped.extend(locations)

    @property
    def rejections(self) -> int:
        """How many requests the server answered with 400."""
        with self.lock:
            return len(self.rejected)

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


# -- preserved thinking: signing and checking -------------------------------------------------

SIGNING_KEY = b"gobtui-e2e preserved-thinking key (tests only)"
SIGNATURE_FILLER_BYTES = 1_824
"""Deterministic bytes after the HMAC, so a signature is a few KB long, as the real ones are."""
THINKING_TYPES = ("thinking", "redacted_thinking")


@dataclass
class Canonical:
    """One message as the API sees it: consecutive messages of one role merged, string content
    as one text block, `cache_control` left out; `origin` is each block's (message, block)
    index in the request as sent, for the error message."""

    role: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    origin: list[tuple[int, int]] = field(default_factory=list)


def canonical(messages: list[Any]) -> list[Canonical]:
    merged: list[Canonical] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not merged or merged[-1].role != role:
            merged.append(Canonical(role))
        for position, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict):
                block = {k: v for k, v in block.items() if k != "cache_control"}
            merged[-1].blocks.append(block)
            merged[-1].origin.append((index, position))
    return merged


def block_prefix(messages: list[Canonical], at: int, position: int) -> bytes:
    """What the model saw before block `position` of canonical message `at`: every earlier
    message and the blocks before it in its own.

    The top-level `system` and `tools` are left out, unlike the provider's check: the client
    rebuilds its system prompt on every run (the per-run working directory and date), so a
    session resumed in another folder could never verify, and gobtui never touches either: what
    this server checks is what a fork can change, the messages."""
    prefix = [{"role": m.role, "content": m.blocks} for m in messages[:at]]
    prefix.append({"role": messages[at].role, "content": messages[at].blocks[:position]})
    return json.dumps(prefix, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def sign(prefix: bytes) -> str:
    """base64(HMAC-SHA256(SIGNING_KEY, prefix) || filler derived from it)."""
    mac = hmac.new(SIGNING_KEY, prefix, hashlib.sha256).digest()
    filler = b"".join(
        hashlib.sha256(mac + n.to_bytes(4, "big")).digest()
        for n in range(SIGNATURE_FILLER_BYTES // 32)
    )
    return base64.b64encode(mac + filler).decode()


def _signature_of(block: dict[str, Any]) -> str:
    value = block.get("signature") if block.get("type") == "thinking" else block.get("data")
    return value if isinstance(value, str) else ""


def invalid_thinking(messages: list[Any]) -> list[str]:
    """Where the invalid thinking blocks of a request's messages are (`messages.N.content.M`,
    in order): the first block not signed over its own prefix, and every later one."""
    merged = canonical(messages)
    invalid: list[str] = []
    for at, message in enumerate(merged):
        for position, block in enumerate(message.blocks):
            if not isinstance(block, dict) or block.get("type") not in THINKING_TYPES:
                continue
            if invalid or not hmac.compare_digest(
                _signature_of(block), sign(block_prefix(merged, at, position))
            ):
                index, content = message.origin[position]
                invalid.append(f"messages.{index}.content.{content}")
    return invalid


def rejection_message(location: str) -> str:
    return (
        f"{location}: Invalid `signature` in `thinking` block. The block is bound to a "
        "different conversation. Remove the block, or set "
        '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )


def asks_to_drop(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, dict) else None
    return isinstance(binding, dict) and binding.get("prefix_mismatch_behavior") == "drop_block"


def without_blocks(messages: list[Any], locations: list[str]) -> list[Any]:
    """The messages less the blocks at `locations` (a message left empty is left out)."""
    gone = {tuple(int(part.split(".")[1]) for part in loc.split(".content")) for loc in locations}
    kept: list[Any] = []
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            kept.append(message)
            continue
        blocks = [b for n, b in enumerate(content) if (index, n) not in gone]
        if blocks:
            kept.append({**message, "content": blocks})
    return kept


# -- the scripted agent -----------------------------------------------------------------------

SYSTEM_AND_TOOLS_TOKENS = 15_000
"""What the usage adds for the system prompt and the tools (the client's are about that)."""


@dataclass(frozen=True)
class Step:
    """One tool call of the scripted agent (the client runs it)."""

    tool: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """What the agent does for one user prompt: its tool calls, one a response, then a final
    text. The prompt names the turn by holding `[[drive:<tag>]]`."""

    tag: str
    steps: tuple[Step, ...]
    final: str


@dataclass(frozen=True)
class Script:
    turns: tuple[Turn, ...]

    def next_step(self, messages: list[Any]) -> tuple[Turn, int] | None:
        """The turn the request's last tagged prompt names and how many of its steps are done
        (the assistant messages since that prompt); None when no prompt names one."""
        merged = canonical(messages)
        for at in range(len(merged) - 1, -1, -1):
            if merged[at].role != "user":
                continue
            texts = [
                str(b.get("text", "")) for b in merged[at].blocks
                if isinstance(b, dict) and b.get("type") == "text"
            ]  # fmt: skip
            for turn in self.turns:
                if any(f"[[drive:{turn.tag}]]" in text for text in texts):
                    done = sum(1 for m in merged[at + 1 :] if m.role == "assistant")
                    return turn, done
        return None


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def usage_for(raw: bytes, output_tokens: int) -> dict[str, int]:
    """Usage that grows with the request, as a cached conversation's does."""
    context = len(raw) // 4 + SYSTEM_AND_TOOLS_TOKENS
    fresh = min(context, 1_500)
    return {
        "input_tokens": 6,
        "cache_creation_input_tokens": fresh,
        "cache_read_input_tokens": context - fresh,
        "output_tokens": output_tokens,
    }


def scripted_stream(
    model: str, request: Request, messages: list[Any], turn: Turn, done: int
) -> bytes:
    """Thinking (signed over its prefix in `messages`, the request's as checked), then the
    next tool call, or the final text."""
    merged = canonical([*messages, {"role": "assistant", "content": []}])
    signature = sign(block_prefix(merged, len(merged) - 1, len(merged[-1].blocks)))
    key = _digest(turn.tag, done, len(messages))
    usage = usage_for(request.raw, 1)
    message: dict[str, Any] = {
        "id": f"msg_01{key[:22]}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage,
    }  # fmt: skip
    events = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse("content_block_start", {"type": "content_block_start", "index": 0,
             "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
             "delta": {"type": "signature_delta", "signature": signature}}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ]  # fmt: skip
    if done < len(turn.steps):
        step = turn.steps[done]
        block = {"type": "tool_use", "id": f"toolu_01{key[22:44]}", "name": step.tool,
                 "input": {}}  # fmt: skip
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
        stop, output = "tool_use", 40 + len(json.dumps(step.input)) // 4
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": turn.final}
        stop, output = "end_turn", 40 + len(turn.final) // 4
    events += [
        _sse("content_block_start", {"type": "content_block_start", "index": 1,
             "content_block": block}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": delta}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _sse("message_delta", {"type": "message_delta",
             "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {**usage, "output_tokens": output}}),
        _sse("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(events)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_stream(model: str, transformations: list[str] | None = None) -> bytes:
    message: dict[str, Any] = {
        "id": "msg_e2e_reply",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    if transformations:
        message["input_transformations"] = [
            {"type": "drop_block", "reason": "prefix_mismatch", "location": location}
            for location in transformations
        ]
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


COMPACTION_CONTENT = "e2e-compaction-summary"
"""The encrypted content of the one compaction item this server produces."""
RESPONSES_CALLS = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}
RESPONSES_OUTPUTS = {output: call for call, output in RESPONSES_CALLS.items()}


def invalid_responses_input(items: list[Any]) -> str | None:
    """The provider's 400 message for a Responses `input` it refuses, else None. Stateless
    requests (no previous_response_id, as Codex sends them) are checked as the API checks
    them: every tool call output answers a call earlier in the input, and every call has its
    output. (A `compaction` item's encrypted content is checked by the API too, but a
    genuine session's was made by the real one: the suite checks that no fork adds one.)"""
    calls: dict[str, str] = {}
    answered: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        call_id = item.get("call_id")
        if kind in RESPONSES_CALLS and isinstance(call_id, str):
            calls[call_id] = str(kind)
        elif kind in RESPONSES_OUTPUTS and isinstance(call_id, str):
            if calls.get(call_id) != RESPONSES_OUTPUTS[str(kind)]:
                return f"No tool call found for function call output with call_id {call_id}."
            answered.add(call_id)
    for call_id in calls:
        if call_id not in answered:
            return f"No tool output found for function call {call_id}."
    return None


def responses_stream(model: str, compaction: bool) -> bytes:
    if compaction:
        item: dict[str, Any] = {
            "type": "compaction",
            "id": "cmp_e2e",
            "encrypted_content": COMPACTION_CONTENT,
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
            self._messages(request, body, model)
        elif path == "/v1/responses":
            sent = body.get("input")
            refused = invalid_responses_input(sent if isinstance(sent, list) else [])
            if refused is not None and "previous_response_id" not in body:
                self.server.recorder.reject(refused)
                error = {"error": {"type": "invalid_request_error", "message": refused}}
                self._send(400, json.dumps(error).encode())
                return
            self._send(
                200, responses_stream(model, request.is_codex_compaction), "text/event-stream"
            )
        else:
            self._send(404, b'{"error":"not found"}')

    def _messages(self, request: Request, body: dict[str, Any], model: str) -> None:
        """A Messages request: its thinking blocks checked (per the mode), then answered."""
        sent = body.get("messages")
        messages: list[Any] = sent if isinstance(sent, list) else []
        invalid = invalid_thinking(messages) if self.server.mode != "record" else []
        if invalid and self.server.mode == "reject" and not asks_to_drop(body):
            message = rejection_message(invalid[0])
            self.server.recorder.reject(message)
            error = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": message},
            }
            self._send(400, json.dumps(error).encode())
            return
        if invalid:
            self.server.recorder.drop(invalid)
            messages = without_blocks(messages, invalid)
        step = self.server.script.next_step(messages) if self.server.script else None
        if step is not None and body.get("stream"):
            self._send(200, scripted_stream(model, request, messages, *step), "text/event-stream")
        elif body.get("stream"):
            self._send(200, anthropic_stream(model, invalid), "text/event-stream")
        else:
            reply: dict[str, Any] = {
                "id": "msg_e2e_reply",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": REPLY}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 8},
            }
            if invalid:
                reply["input_transformations"] = [
                    {"type": "drop_block", "reason": "prefix_mismatch", "location": location}
                    for location in invalid
                ]
            self._send(200, json.dumps(reply).encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    recorder: Recorder
    mode: Mode
    script: Script | None


@contextmanager
def model_server(
    mode: Mode = "record", script: Script | None = None
) -> Iterator[tuple[str, Recorder]]:
    """(base url, recorder) of a server on 127.0.0.1 for the duration of the block; `mode`
    says what it does with the thinking blocks sent back, `script` makes it an agent."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.recorder = Recorder()
    server.mode = mode
    server.script = script
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}", server.recorder
    finally:
        server.shutdown()
        server.server_close()
