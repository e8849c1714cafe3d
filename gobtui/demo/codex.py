"""A synthetic Codex rollout: envelope records {timestamp, type, payload}."""

from __future__ import annotations

import random
from dataclasses import dataclass

import orjson

from gobtui.demo.records import Builder, Clock, Ids, Rec

CODEX_WINDOW = 258_400


@dataclass(frozen=True)
class CodexMeta:
    session_id: str
    cwd: str
    model: str
    cli_version: str = "0.104.0"
    originator: str = "codex_cli_rs"
    effort: str = "high"
    branch: str = "main"


class CodexSession(Builder):
    """One Codex 0.1xx rollout: envelope {timestamp, type, payload}."""

    def __init__(
        self, ids: Ids, clock: Clock, meta: CodexMeta, totals: Rec | None = None, used: float = 4.0
    ):
        super().__init__(ids, clock)
        self.meta = meta
        self.turn_id: str | tuple[float, str] = ""
        """A plain id (appends to a real file) or (start, UUIDv7 bits) filled at the end."""
        self.totals: Rec = totals or dict.fromkeys(_USAGE_KEYS, 0)
        self.used = used

    def _add(self, kind: str, payload: Rec) -> Rec:
        rec: Rec = {"timestamp": "", "type": kind, "payload": payload}
        self.stamp(rec)
        self.records.append(rec)
        return rec

    def event(self, payload: Rec) -> None:
        """An event_msg the model never sees (exec_command_end, ...)."""
        self._add("event_msg", payload)

    def session_meta(self, instructions: str) -> None:
        m = self.meta
        payload: Rec = {"id": m.session_id, "timestamp": "", "cwd": m.cwd}
        payload["originator"] = m.originator
        payload.update(cli_version=m.cli_version, source="cli", model_provider="openai")
        payload["base_instructions"] = {"text": instructions}
        payload["git"] = {"commit_hash": self.ids.hex(40), "branch": m.branch}
        self.stamp(payload)
        self._add("session_meta", payload)
        self.seen += len(instructions)

    def _turn(self, payload: Rec) -> Rec:
        if isinstance(self.turn_id, str):
            payload["turn_id"] = self.turn_id
        else:
            self.stamp(payload, "turn_id", self.turn_id[1], at=self.turn_id[0])
        return payload

    def turn_context(self) -> None:
        m = self.meta
        payload = self._turn({})
        payload.update(cwd=m.cwd, approval_policy="on-request")
        payload["sandbox_policy"] = {"type": "workspace-write", "writable_roots": [m.cwd]}
        payload.update(model=m.model, personality="pragmatic", effort=m.effort, summary="auto")
        self._add("turn_context", payload)

    def user(self, text: str, *, shown: bool = True) -> None:
        content = [{"type": "input_text", "text": text}]
        self._add("response_item", {"type": "message", "role": "user", "content": content})
        self.seen += len(text)
        if shown:
            event = {"type": "user_message", "message": text, "images": [], "local_images": []}
            self._add("event_msg", event | {"text_elements": []})

    def turn(self, prompt: str, *, preamble: tuple[str, ...] = ()) -> None:
        self.clock.step(30, 500)
        self.turn_id = (self.clock.t, self.ids.uuid7_bits())
        started = self._turn({"type": "task_started"})
        self._add("event_msg", started | {"model_context_window": CODEX_WINDOW})
        for text in preamble:
            self.user(text, shown=False)
        self.user(prompt)
        self.turn_context()
        self.token_count(null=True)

    def reasoning(self, summary: str) -> None:
        self.clock.step(1, 8)
        self._add("event_msg", {"type": "agent_reasoning", "text": summary})
        item = {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}]}
        enc = "gAAAAAB" + self.ids.b62(self.ids.rng.randint(600, 2400))
        self._add("response_item", item | {"content": None, "encrypted_content": enc})
        self.seen += len(summary)

    def say(self, text: str, phase: str = "commentary") -> None:
        self.clock.step(0.5, 4)
        self._add("event_msg", {"type": "agent_message", "message": text})
        content = [{"type": "output_text", "text": text}]
        msg = {"type": "message", "role": "assistant", "content": content, "phase": phase}
        self._add("response_item", msg)
        self.seen += len(text)

    def call(self, name: str, args: Rec) -> str:
        cid = self.ids.call()
        arguments = orjson.dumps(args).decode()
        self._add("response_item", {"type": "function_call", "name": name} | {
            "arguments": arguments, "call_id": cid})  # fmt: skip
        self.seen += len(arguments)
        return cid

    def output(self, cid: str, text: str) -> None:
        self.clock.step(0.05, 5)
        self._add("response_item", {"type": "function_call_output", "call_id": cid, "output": text})
        self.seen += len(text)

    def patch(self, body: str, path: str) -> None:
        cid = self.ids.call()
        self._add("response_item", {"type": "custom_tool_call", "status": "completed"} | {
            "call_id": cid, "name": "apply_patch", "input": body})  # fmt: skip
        self.clock.step(0.05, 1)
        out: Rec = {"output": f"Success. Updated the following files:\nM {path}\n"}
        out["metadata"] = {"exit_code": 0, "duration_seconds": 0.0}
        self._add("response_item", {"type": "custom_tool_call_output", "call_id": cid} | {
            "output": orjson.dumps(out).decode()})  # fmt: skip
        self.seen += len(body) + 80

    def token_count(self, *, null: bool = False) -> None:
        """Written twice in a row with the same info, as real Codex does."""
        self.used = min(99.0, self.used + 0.5)
        limits: Rec = {"limit_id": "codex", "limit_name": None}
        limits["primary"] = {"used_percent": self.used, "window_minutes": 300, "resets_at": 0}
        self.stamp(limits["primary"], "resets_at", "epoch")
        limits["secondary"] = {"used_percent": round(self.used / 4), "window_minutes": 10080}
        limits.update(credits=None, plan_type="pro")
        info: Rec | None = None
        if not null:
            info = {}
            self.marks.append((self.segment, self.seen, info))
        for _ in range(1 if null else 2):
            self._add("event_msg", {"type": "token_count", "info": info, "rate_limits": limits})

    def task_complete(self, last: str) -> None:
        done = self._turn({"type": "task_complete"}) | {"last_agent_message": last}
        self._add("event_msg", done)

    def compacted(self, kept: list[str], summary: str) -> None:
        """Local compaction: the replacement history keeps user messages + a summary."""
        self.clock.step(20, 60)
        history: list[Rec] = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}
            for t in [*kept, summary]
        ]
        self._add("compacted", {"message": summary, "replacement_history": history})
        self._add("event_msg", {"type": "context_compacted"})
        self.segment += 1
        self.seen = sum(len(t) for t in [*kept, summary])
        self.turn_context()
        zero: Rec = {}
        self.marks.append((self.segment, -1, zero))
        self._add("event_msg", {"type": "token_count", "info": zero, "rate_limits": None})

    def finish(
        self, targets: list[tuple[int, int]], shift: float, rng: random.Random, prev: int = 0
    ) -> bytes:
        """last_token_usage.input_tokens is the context (it includes cached input)."""
        values = self.contexts(targets)
        index = 0
        for _, seen, info in self.marks:  # file order
            if seen < 0:  # right after a compaction: last usage is all zeros
                last = dict.fromkeys(_USAGE_KEYS, 0)
            else:
                ctx = values[index]
                index += 1
                # The next request's input holds this output: keep input + output rising.
                room = values[index] - ctx - 1 if index < len(values) else 900
                out = max(1, min(rng.randint(60, 900), room))
                cached = (prev // 128) * 128 if prev else rng.randint(20, 140) * 128
                last = {"input_tokens": ctx, "cached_input_tokens": min(cached, ctx)}
                last.update(output_tokens=out, reasoning_output_tokens=out // 3)
                last["total_tokens"] = ctx + out
            prev = last["input_tokens"]
            for key in _USAGE_KEYS:
                self.totals[key] += last[key]
            info["total_token_usage"] = dict(self.totals)
            info["last_token_usage"] = last
            info["model_context_window"] = CODEX_WINDOW
        return self.serialise(shift)


_USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)
