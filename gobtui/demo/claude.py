"""A synthetic Claude Code session: the records of its main file and its subagents'."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import orjson

from gobtui.demo.records import Builder, Clock, Ids, Rec

SYSTEM_CACHED = 11_514
"""Claude's globally cached system prompt: what the first request of a session reads."""


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
