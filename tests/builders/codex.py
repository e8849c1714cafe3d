"""Deterministic Codex CLI rollouts, line by line, in the 0.9x shape.

A CodexSession writes what Codex writes: session_meta, turn_context and task_started per turn,
response_items (messages, reasoning with encrypted_content, function calls and outputs,
apply_patch custom tool calls), their event_msg echoes, and token_count events written twice.
The reported context is a base plus the model-bound estimate (encrypted reasoning left out,
as the provider does not count it) times a slope.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.builders.common import Record, dumps, iso, stable_uuid

BASE_TOKENS = 8_000
SLOPE = 0.9
START = 1_790_000_000
WINDOW = 258_400


def uuid7_like(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"019a{digest[:4]}-{digest[4:8]}-7{digest[9:12]}-8{digest[13:16]}-{digest[16:28]}"


def record(
    kind: str, payload: Record, timestamp: str | None = None, ordinal: int | None = None
) -> Record:
    """One rollout line: its stamp, (in some versions) its ordinal, its type and payload; a
    hand-made case may go without the stamp."""
    out: Record = {} if timestamp is None else {"timestamp": timestamp}
    if ordinal is not None:
        out["ordinal"] = ordinal
    out["type"] = kind
    out["payload"] = payload
    return out


def item(payload: Record, ordinal: int | None = None, timestamp: str | None = None) -> Record:
    """A response_item line."""
    return record("response_item", payload, timestamp, ordinal)


def message(role: str, text: str) -> Record:
    """A message payload: the user's input_text, the model's output_text."""
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def call(call_id: str, kind: str = "function_call") -> Record:
    return {"type": kind, "call_id": call_id, "name": "shell", "arguments": "{}"}


def output(call_id: str, text: str = "ok") -> Record:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def compacted(*history: Any) -> Record:
    return {"type": "compacted", "payload": {"replacement_history": list(history)}}


@dataclass
class CodexSession:
    session_id: str
    cwd: str = "/home/dev/projects/api"
    model: str = "gpt-5.2-codex"
    cli_version: str = "0.92.0"
    window: int = WINDOW
    base_tokens: int = BASE_TOKENS
    slope: float = SLOPE
    records: list[Record] = field(default_factory=list)
    clock: float = START
    est_chars: int = 0
    total_input: int = 0
    total_output: int = 0
    _n: int = 0
    _turn: str | None = None

    def _next(self, what: str) -> str:
        self._n += 1
        return stable_uuid(self.session_id, what, self._n)

    def _add(self, kind: str, payload: Record, secs: float = 1.0) -> Record:
        self.clock += secs
        line = record(kind, payload, iso(self.clock))
        self.records.append(line)
        if kind == "response_item":
            counted = {k: v for k, v in payload.items() if k != "encrypted_content"}
            self.est_chars += len(dumps(counted))
        return line

    def context_now(self) -> int:
        return self.base_tokens + round(self.slope * self.est_chars / 4)

    def meta(self) -> Record:
        return self._add(
            "session_meta",
            {
                "id": self.session_id,
                "timestamp": iso(self.clock),
                "cwd": self.cwd,
                "originator": "codex_cli_rs",
                "cli_version": self.cli_version,
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent."},
            },
            secs=0,
        )

    def turn(self, prompt: str) -> None:
        self._turn = self._next("turn")
        self._add(
            "event_msg",
            {"type": "task_started", "turn_id": self._turn, "model_context_window": self.window},
        )
        self._add(
            "turn_context",
            {
                "turn_id": self._turn,
                "cwd": self.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "network_access": False},
                "model": self.model,
                "effort": "medium",
                "summary": "auto",
            },
        )
        self._add("response_item", message("user", prompt))
        self._add("event_msg", {"type": "user_message", "message": prompt, "images": []})

    def compact(self, summary: str, kept_prompts: tuple[str, ...] = ()) -> None:
        """A local compaction (transcript-formats.md 2.6): the replacement history is the
        whole new model history, then context_compacted."""
        history = [message("user", p) for p in kept_prompts]
        history.append(
            message(
                "user",
                "Another language model started to solve this problem and "
                f"produced a summary of its thinking process.\n{summary}",
            )
        )
        self._add("compacted", {"message": "", "replacement_history": history})
        self.est_chars = len(dumps(history))
        self._add("event_msg", {"type": "context_compacted"})

    def _count(self, output_tokens: int) -> None:
        context = self.context_now()
        last = {
            "input_tokens": context - output_tokens,
            "cached_input_tokens": max(0, context - output_tokens - 1_000),
            "output_tokens": output_tokens,
            "reasoning_output_tokens": output_tokens // 2,
            "total_tokens": context,
        }
        self.total_input += last["input_tokens"]
        self.total_output += output_tokens
        total = {
            "input_tokens": self.total_input,
            "cached_input_tokens": max(0, self.total_input - 1_000),
            "output_tokens": self.total_output,
            "reasoning_output_tokens": self.total_output // 2,
            "total_tokens": self.total_input + self.total_output,
        }
        payload = {
            "type": "token_count",
            "info": {
                "total_token_usage": total,
                "last_token_usage": last,
                "model_context_window": self.window,
            },
            "rate_limits": {"primary": {"used_percent": 12.0, "window_minutes": 300}},
        }
        self._add("event_msg", payload, secs=0.3)
        self._add("event_msg", json.loads(json.dumps(payload)), secs=0.1)  # written twice

    def reason(self, summary: str, encrypted_bytes: int = 1_200) -> None:
        blob = base64.b64encode(
            hashlib.sha256(summary.encode()).digest() * (encrypted_bytes // 32 + 1)
        )
        self._add("event_msg", {"type": "agent_reasoning", "text": summary})
        self._add(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": summary}],
                "content": None,
                "encrypted_content": "gAAAAA" + blob.decode()[:encrypted_bytes],
            },
        )

    def shell(self, command: str, output: str, exit_code: int = 0) -> str:
        call_id = "call_" + self._next("call").replace("-", "")[:24]
        self._add(
            "response_item",
            {
                "type": "function_call",
                "name": "shell_command",
                "arguments": json.dumps({"command": command, "workdir": self.cwd}),
                "call_id": call_id,
            },
        )
        self._count(output_tokens=40)
        self._add(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": f"Exit code: {exit_code}\nWall time: 0.2 seconds\nOutput:\n{output}",
            },
        )
        return call_id

    def tool(self, name: str, arguments: Record, output: str) -> str:
        """A function call of any tool (an MCP server's `read`, say) and its output."""
        call_id = "call_" + self._next("call").replace("-", "")[:24]
        self._add(
            "response_item",
            {
                "type": "function_call",
                "name": name,
                "arguments": json.dumps(arguments),
                "call_id": call_id,
            },
        )
        self._count(output_tokens=40)
        self._add(
            "response_item",
            {"type": "function_call_output", "call_id": call_id, "output": output},
        )
        return call_id

    def patch(self, path: str, body: str) -> str:
        call_id = "call_" + self._next("call").replace("-", "")[:24]
        patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}\n*** End Patch"
        self._add(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            },
        )
        self._count(output_tokens=len(patch) // 4)
        result = {
            "output": f"Success. Updated the following files:\nM {path}\n",
            "metadata": {"exit_code": 0, "duration_seconds": 0.0},
        }
        self._add(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": call_id, "output": json.dumps(result)},
        )
        return call_id

    def answer(self, text: str) -> None:
        self._add("response_item", message("assistant", text))
        self._count(output_tokens=max(1, len(text) // 4))
        self._add("event_msg", {"type": "agent_message", "message": text})
        self._add(
            "event_msg",
            {"type": "task_complete", "turn_id": self._turn, "last_agent_message": text},
        )

    def text(self) -> str:
        return "".join(dumps(record) + "\n" for record in self.records)

    def filename(self) -> str:
        stamp = iso(START).replace(":", "-")[:19]
        return f"rollout-{stamp}-{self.session_id}.jsonl"

    def write(self, sessions: Path) -> Path:
        folder = sessions / "2026" / "09" / "21"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / self.filename()
        path.write_text(self.text(), encoding="utf-8")
        return path
