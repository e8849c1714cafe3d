"""Record builders for synthetic Claude Code and Codex transcripts (demo home, bench corpus).

A builder collects records as dicts in file order. Timestamps and token usage are left as
slots: `finish()` fills usage so the context grows with the bytes the model has seen (so a
sparkline has a believable shape), shifts the relative clock so the session ends where the
caller wants it, and serialises with orjson (insertion order, so output is deterministic).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

Rec = dict[str, Any]
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
CODEX_WINDOW = 258_400
MIN_STEP = 97
"""Smallest context growth between two requests: more than Claude's streamed output tokens."""
SYSTEM_CACHED = 11_514
"""Claude's globally cached system prompt: what the first request of a session reads."""


def iso(ts: float) -> str:
    """ISO-8601 with milliseconds and Z, as both CLIs write it."""
    ms = round(ts * 1000)
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def uuid7_at(ts: float, bits: str) -> str:
    ms = f"{int(ts * 1000) & 0xFFFF_FFFF_FFFF:012x}"
    return f"{ms[:8]}-{ms[8:]}-7{bits[:3]}-{'89ab'[int(bits[3], 16) & 3]}{bits[4:7]}-{bits[7:]}"


class Ids:
    """Deterministic ids from one rng.

    With `tag` (12 hex chars) every id ends in it instead of random characters, so the bench
    can stamp copies of one template apart with a single bytes.replace.
    """

    def __init__(self, rng: random.Random, tag: str | None = None) -> None:
        self.rng = rng
        self.tag = tag

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def _tail(self) -> str:
        return self.tag or self.hex(12)

    def uuid4(self) -> str:
        h = self.hex(19)
        return (
            f"{h[:8]}-{h[8:12]}-4{h[12:15]}-{'89ab'[int(h[15], 16) & 3]}{h[16:19]}-{self._tail()}"
        )

    def uuid7_bits(self) -> str:
        """The random part of a UUIDv7 whose time part is only known later."""
        return self.hex(7) + self._tail()

    def uuid7(self, ts: float) -> str:
        return uuid7_at(ts, self.uuid7_bits())

    def b62(self, n: int) -> str:
        return "".join(B62[self.rng.randrange(62)] for _ in range(n))

    def _id(self, prefix: str, n: int) -> str:
        return prefix + (self.b62(n - 12) + self.tag if self.tag else self.b62(n))

    def msg(self) -> str:
        return self._id("msg_01", 22)

    def req(self) -> str:
        return self._id("req_011C", 18)

    def toolu(self) -> str:
        return self._id("toolu_01", 22)

    def call(self) -> str:
        return self._id("call_", 24)


@dataclass(slots=True)
class Clock:
    """A relative clock shared by a session and its subagents; finish() anchors it."""

    rng: random.Random
    t: float = 0.0
    scale: float = 1.0

    def step(self, lo: float, hi: float) -> float:
        self.t += self.rng.uniform(lo, hi) * self.scale
        return self.t


def spread(weights: list[int], start: int, end: int) -> list[int]:
    """Context per request: from start to end in proportion to the bytes seen, strictly rising."""
    if not weights:
        return []
    base, top = weights[0], weights[-1]
    span = max(1, top - base)
    out: list[int] = []
    for w in weights:
        value = start + (end - start) * (w - base) // span if len(weights) > 1 else end
        if out and value < out[-1] + MIN_STEP:
            value = out[-1] + MIN_STEP
        out.append(value)
    return out


@dataclass
class Builder:
    ids: Ids
    clock: Clock
    records: list[Rec] = field(default_factory=list)
    seen: int = 0
    """Model-bound bytes so far in the current context segment."""
    segment: int = 0
    marks: list[tuple[int, int, Rec]] = field(default_factory=list)
    """(segment, bytes seen before the request, usage slot) per model request."""
    stamps: list[tuple[Rec, str, float, str]] = field(default_factory=list)
    """(record, key, relative time, "iso" | "epoch" | UUIDv7 random bits) filled at the end."""

    def stamp(self, rec: Rec, key: str = "timestamp", kind: str = "iso", at: float = -1) -> None:
        rec[key] = ""
        self.stamps.append((rec, key, self.clock.t if at < 0 else at, kind))

    def serialise(self, shift: float) -> bytes:
        for rec, key, t, kind in self.stamps:
            if kind == "iso":
                rec[key] = iso(t + shift)
            else:
                rec[key] = int(t + shift) if kind == "epoch" else uuid7_at(t + shift, kind)
        return b"".join(orjson.dumps(r) + b"\n" for r in self.records)

    def contexts(self, targets: list[tuple[int, int]]) -> list[int]:
        """Usage per mark, segment by segment (a compaction starts a new segment)."""
        out: list[int] = []
        for seg, (start, end) in enumerate(targets):
            weights = [w for s, w, _ in self.marks if s == seg and w >= 0]
            out.extend(spread(weights, start, end))
        return out


@dataclass(frozen=True)
class ClaudeMeta:
    session_id: str
    cwd: str
    model: str
    branch: str = "main"
    slug: str = ""
    version: str = "2.1.150"
    agent_id: str | None = None


class ClaudeSession(Builder):
    """One Claude Code 2.1.x transcript (a main session or a subagent file)."""

    def __init__(self, ids: Ids, clock: Clock, meta: ClaudeMeta, leaf: str | None = None):
        super().__init__(ids, clock)
        self.meta = meta
        self.leaf = leaf
        self.boundaries: list[Rec] = []

    def _env(self, kind: str) -> Rec:
        m = self.meta
        rec: Rec = {"parentUuid": self.leaf, "isSidechain": m.agent_id is not None}
        rec.update(userType="external", cwd=m.cwd, sessionId=m.session_id, version=m.version)
        rec["gitBranch"] = m.branch
        if m.agent_id:
            rec["agentId"] = m.agent_id
        if m.slug:
            rec["slug"] = m.slug
        rec["type"] = kind
        return rec

    def _chain(self, rec: Rec, uid: str = "") -> str:
        uid = uid or self.ids.uuid4()
        rec["uuid"] = uid
        self.stamp(rec)
        self.records.append(rec)
        self.leaf = uid
        return uid

    def snapshot(self) -> str:
        """File-history snapshot taken as a prompt is sent; pass its id to prompt(uid=)."""
        self.clock.step(20, 400)
        mid = self.ids.uuid4()
        snap: Rec = {"messageId": mid, "trackedFileBackups": {}}
        self.stamp(snap)
        self.records.append(
            {"type": "file-history-snapshot", "messageId": mid, "snapshot": snap}
            | {"isSnapshotUpdate": False}
        )
        return mid

    def prompt(self, text: str, *, meta: bool = False, uid: str = "") -> str:
        self.clock.step(0.02, 0.08) if uid else self.clock.step(20, 400)
        rec = self._env("user")
        rec["message"] = {"role": "user", "content": text}
        if meta:
            rec["isMeta"] = True
        self.seen += len(text)
        uid = self._chain(rec, uid)
        if not meta:
            rec.update(thinkingMetadata={"maxThinkingTokens": 31999}, todos=[])
            rec["permissionMode"] = "acceptEdits"
        return uid

    def hook(self, event: str, command: str) -> None:
        rec = self._env("progress")
        tid = self.ids.uuid4()
        rec["data"] = {"type": "hook_progress", "hookEvent": event, "hookName": event}
        rec["data"]["command"] = command
        rec.update(parentToolUseID=tid, toolUseID=tid)
        self._chain(rec)

    def call(self, blocks: list[Rec], *, stop: str | None = None) -> list[str]:
        """One API response, written as one assistant record per content block."""
        self.clock.step(2, 14)
        usage: Rec = {}
        self.marks.append((self.segment, self.seen, usage))
        message = {"model": self.meta.model, "id": self.ids.msg(), "type": "message"}
        request = self.ids.req()
        uuids = []
        for block in blocks:
            rec = self._env("assistant")
            del rec["type"]
            body = message | {"role": "assistant", "content": [block], "stop_reason": stop}
            rec["message"] = body | {"stop_sequence": None, "usage": usage}
            rec.update(requestId=request, type="assistant")
            self.seen += len(orjson.dumps(block))
            uuids.append(self._chain(rec))
            self.clock.step(0.2, 1.5)
        return uuids

    def tool_result(self, tool_id: str, content: str, result: Any, source: str) -> str:
        self.clock.step(0.1, 6)
        rec = self._env("user")
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        rec["message"] = {"role": "user", "content": [block | {"is_error": False}]}
        self.seen += len(content)
        uid = self._chain(rec)
        rec.update(toolUseResult=result, sourceToolAssistantUUID=source)
        return uid

    def progress(self, tool_id: str, data: Rec) -> None:
        self.clock.step(0.5, 3)
        rec = self._env("progress")
        rec.update(data=data, toolUseID=f"{tool_id}-p{len(self.records)}", parentToolUseID=tool_id)
        self._chain(rec)

    def system(self, subtype: str, **fields: Any) -> None:
        rec = self._env("system")
        rec["subtype"] = subtype
        rec.update(fields)
        self._chain(rec)
        rec["isMeta"] = False

    def compact(self, summary: str) -> None:
        """Auto-compaction: boundary (chain restarts) + the summary; a new usage segment."""
        self.clock.step(40, 90)
        logical = self.leaf
        self.leaf = None
        rec = self._env("system")
        meta: Rec = {"trigger": "auto", "preTokens": 0}
        rec.update(subtype="compact_boundary", content="Conversation compacted", isMeta=False)
        rec["logicalParentUuid"] = logical
        self._chain(rec)
        rec.update(level="info", compactMetadata=meta)
        self.boundaries.append(meta)
        self.segment += 1
        self.seen = 0
        summary_rec = self._env("user")
        summary_rec["message"] = {"role": "user", "content": summary}
        summary_rec.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
        self.seen += len(summary)
        self._chain(summary_rec)

    def last_prompt(self, text: str) -> None:
        rec = {"type": "last-prompt", "lastPrompt": text, "leafUuid": self.leaf}
        self.records.append(rec | {"sessionId": self.meta.session_id})

    def finish(
        self, targets: list[tuple[int, int]], shift: float, rng: random.Random, prev: int = 0
    ) -> bytes:
        """Fill usage (prompt = input + cache creation + cache read) and serialise.

        `prev` is the context before the first request (an append to an existing file).
        """
        values = self.contexts(targets)
        before = prev
        for i, (ctx, (seg, _, usage)) in enumerate(zip(values, self.marks, strict=True)):
            restart = seg != (self.marks[i - 1][0] if i else 0)
            if restart:  # first request after a compaction: preTokens is the context before it
                self.boundaries[seg - 1]["preTokens"] = before + rng.randint(400, 2600)
            if restart or not before:
                before = min(SYSTEM_CACHED, ctx - 40)
            new = ctx - before
            inp = min(new, rng.randint(1, 9))
            usage.update(input_tokens=inp, cache_creation_input_tokens=new - inp)
            usage["cache_read_input_tokens"] = before
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0}
            usage["cache_creation"]["ephemeral_1h_input_tokens"] = new - inp
            usage.update(output_tokens=rng.randint(3, 40), service_tier="standard")
            usage["inference_geo"] = "not_available"
            before = ctx
        return self.serialise(shift)


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
