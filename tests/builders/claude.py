"""Deterministic Claude Code transcripts, record by record, in the 2.1.x shape.

A ClaudeSession writes what Claude Code writes: a uuid chain (progress noise included), user
prompts, assistant responses split into one record per content block sharing message.id and
usage, tool_use / tool_result pairs with the UI's toolUseResult copy, file-history-snapshot
and last-prompt bookkeeping. Usage grows with the content the way a provider reports it: a
fixed base (system prompt and tools) plus the request's estimated tokens times a slope, so
calibration has something real to fit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.builders.common import Record, dumps, iso, stable_uuid

BASE_TOKENS = 24_000
"""What the system prompt and tool definitions cost (not in the file)."""
SLOPE = 1.25
"""Provider tokens per estimated (chars/4) token of the transcript."""
START = 1_790_000_000  # 2026-09-21T13:33:20Z


def envelope(
    kind: str,
    parent: str | None,
    session_id: str,
    cwd: str = "/home/dev/projects/shop",
    version: str = "2.1.39",
    branch: str = "main",
    **extra: Any,
) -> Record:
    """The fields every chained record of Claude Code 2.1.x opens with, then `extra`."""
    record: Record = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": version,
        "gitBranch": branch,
        "type": kind,
    }
    record.update(extra)
    return record


def user(uuid: str, parent: str | None, content: Any = "hi", **extra: Any) -> Record:
    """A bare user record (no envelope): what a hand-made case needs, and no more."""
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "message": {"role": "user", "content": content},
        **extra,
    }


def assistant(
    uuid: str,
    parent: str | None,
    content: Any = "ok",
    msg_id: str | None = None,
    model: str | None = None,
    usage: Record | None = None,
    **extra: Any,
) -> Record:
    """A bare assistant record; the message's id, model and usage only when given."""
    message: Record = {} if msg_id is None else {"id": msg_id}
    if model is not None:
        message["model"] = model
    message |= {"role": "assistant", "content": content}
    if usage is not None:
        message["usage"] = usage
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": message, **extra}


def tool_use(*ids: str) -> list[Record]:
    return [{"type": "tool_use", "id": i, "name": "Read", "input": {}} for i in ids]


def tool_result(*ids: str) -> list[Record]:
    return [{"type": "tool_result", "tool_use_id": i, "content": "done"} for i in ids]


@dataclass
class ClaudeSession:
    session_id: str
    cwd: str = "/home/dev/projects/shop"
    model: str = "claude-opus-4-6"
    version: str = "2.1.39"
    branch: str = "main"
    base_tokens: int = BASE_TOKENS
    slope: float = SLOPE
    records: list[Record] = field(default_factory=list)
    parent: str | None = None
    clock: float = START
    est_chars: int = 0
    """Characters of message JSON so far: the request the next response answers."""
    _n: int = 0

    # -- plumbing --------------------------------------------------------------------------

    def _next(self, what: str) -> str:
        self._n += 1
        return stable_uuid(self.session_id, what, self._n)

    def _tick(self, secs: float = 7.0) -> str:
        self.clock += secs
        return iso(self.clock)

    def _envelope(self, kind: str, **extra: Any) -> Record:
        return envelope(
            kind, self.parent, self.session_id, self.cwd, self.version, self.branch, **extra
        )

    def _add(self, record: Record, chain: bool = True) -> Record:
        self.records.append(record)
        if chain and "uuid" in record:
            self.parent = record["uuid"]
        message = record.get("message")
        if isinstance(message, dict) and record.get("type") in ("user", "assistant"):
            self.est_chars += len(json.dumps(message, ensure_ascii=False, separators=(",", ":")))
        return record

    def context_now(self) -> int:
        return self.base_tokens + round(self.slope * self.est_chars / 4)

    # -- records ---------------------------------------------------------------------------

    def progress(self, tool_use_id: str, text: str = "hook") -> Record:
        uuid = self._next("progress")
        return self._add(
            self._envelope(
                "progress",
                data={"type": "hook_progress", "hookEvent": "PreToolUse", "hookName": text},
                toolUseID=tool_use_id,
                parentToolUseID=tool_use_id,
                uuid=uuid,
                timestamp=self._tick(0.2),
            )
        )

    def prompt(self, text: str) -> Record:
        uuid = self._next("prompt")
        self._add(
            {
                "type": "file-history-snapshot",
                "messageId": uuid,
                "snapshot": {
                    "messageId": uuid,
                    "trackedFileBackups": {},
                    "timestamp": iso(self.clock),
                },
                "isSnapshotUpdate": False,
            },
            chain=False,
        )
        return self._add(
            self._envelope(
                "user",
                message={"role": "user", "content": text},
                uuid=uuid,
                timestamp=self._tick(30),
                permissionMode="default",
            )
        )

    def compact(self, summary: str, trigger: str = "auto") -> Record:
        """The 2.x compaction markers (transcript-formats.md 1.8): a boundary that starts the
        chain again, then the summary the new context opens with."""
        before = self.parent
        boundary_uuid = self._next("boundary")
        self.parent = None
        self._add(
            self._envelope(
                "system",
                subtype="compact_boundary",
                content="Conversation compacted",
                isMeta=False,
                level="info",
                logicalParentUuid=before,
                compactMetadata={"trigger": trigger, "preTokens": self.context_now()},
                uuid=boundary_uuid,
                timestamp=self._tick(5),
            )
        )
        self.est_chars = 0
        return self._add(
            self._envelope(
                "user",
                message={
                    "role": "user",
                    "content": "This session is being continued from a previous conversation "
                    f"that ran out of context. The summary below covers the earlier portion.\n{summary}",
                },
                isCompactSummary=True,
                isVisibleInTranscriptOnly=True,
                uuid=self._next("summary"),
                timestamp=self._tick(1),
            )
        )

    def _usage(self, output_tokens: int) -> Record:
        context = self.context_now()
        creation = min(2_000, context // 10)
        return {
            "input_tokens": 3,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": max(0, context - 3 - creation),
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0,
                "ephemeral_1h_input_tokens": creation,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    def respond(self, *blocks: Record, stop_reason: str | None = None) -> list[Record]:
        """One API response, one record per block (the streaming split), one shared usage."""
        msg_id = "msg_" + self._next("msg").replace("-", "")[:24]
        request = "req_" + self._next("req").replace("-", "")[:24]
        # the usage is what the request cost: the context before this response, plus output
        usage = self._usage(output_tokens=max(1, sum(len(json.dumps(b)) for b in blocks) // 4))
        out = []
        for index, block in enumerate(blocks):
            message = {
                "model": self.model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop_reason if index == len(blocks) - 1 else None,
                "stop_sequence": None,
                "usage": usage,
            }
            uuid = self._next("assistant")
            out.append(
                self._add(
                    self._envelope(
                        "assistant",
                        message=message,
                        requestId=request,
                        uuid=uuid,
                        timestamp=self._tick(3),
                    )
                )
            )
        return out

    def say(self, text: str, final: bool = False) -> list[Record]:
        return self.respond(
            {"type": "text", "text": text}, stop_reason="end_turn" if final else None
        )

    def call(self, name: str, tool_input: Record) -> str:
        """An assistant tool_use (its own response); returns its id."""
        tool_id = "toolu_" + self._next("tool").replace("-", "")[:24]
        self.respond(
            {
                "type": "tool_use",
                "id": tool_id,
                "name": name,
                "input": tool_input,
                "caller": {"type": "direct"},
            },
            stop_reason="tool_use",
        )
        self.progress(tool_id, f"PreToolUse:{name}")
        return tool_id

    def result(self, tool_id: str, output: str | list[Record], is_error: bool = False) -> Record:
        assistant_uuid = self.parent
        uuid = self._next("result")
        text = (
            output
            if isinstance(output, str)
            else "".join(b.get("text", "") for b in output if isinstance(b, dict))
        )
        return self._add(
            self._envelope(
                "user",
                message={
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_id,
                            "type": "tool_result",
                            "content": output,
                            "is_error": is_error,
                        }
                    ],
                },
                uuid=uuid,
                timestamp=self._tick(2),
                toolUseResult={
                    "stdout": text,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                },
                sourceToolAssistantUUID=assistant_uuid,
            )
        )

    def tool(self, name: str, tool_input: Record, output: str, is_error: bool = False) -> str:
        tool_id = self.call(name, tool_input)
        self.result(tool_id, output, is_error)
        return tool_id

    def last_prompt(self, leaf: bool = True) -> Record:
        """The bookkeeping record 2.1.x writes; 2.1.97+ writes no leafUuid."""
        prompts = [
            r
            for r in self.records
            if r.get("type") == "user" and isinstance(r["message"].get("content"), str)
        ]
        text = prompts[-1]["message"]["content"] if prompts else ""
        record: Record = {"type": "last-prompt", "lastPrompt": text[:200]}
        if leaf:
            record["leafUuid"] = self.parent
        record["sessionId"] = self.session_id
        return self._add(record, chain=False)

    # -- output ----------------------------------------------------------------------------

    def text(self) -> str:
        return "".join(dumps(record) + "\n" for record in self.records)

    def write(self, projects: Path, slug: str | None = None) -> Path:
        folder = projects / (slug or self.cwd.replace("/", "-").replace(".", "-"))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        path.write_text(self.text(), encoding="utf-8")
        return path
