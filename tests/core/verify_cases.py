"""Helpers shared by the verify tests: hand-written transcripts and a compact view of findings."""

from __future__ import annotations

from typing import Any

import orjson

from gobtui.core.model import Provider
from gobtui.core.verify import VerifyReport, verify

Triple = tuple[str, str, int | None]
"""(code, severity, line_index) of one finding."""


def jsonl(*records: dict[str, Any] | bytes) -> bytes:
    """One line per record (bytes are taken as the raw line), newline-terminated."""
    return b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)


def triples(report: VerifyReport) -> list[Triple]:
    return [(f.code.value, f.severity.value, f.line_index) for f in report.findings]


def check(data: bytes, provider: Provider) -> list[Triple]:
    report = verify(data, provider)
    # The counts always agree with the findings, whatever the transcript.
    assert report.errors == sum(1 for f in report.findings if f.severity == "error")
    assert report.warnings == len(report.findings) - report.errors
    assert report.bytes == len(data)
    return triples(report)


def user(uuid: str, parent: str | None, content: Any = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "message": {"role": "user", "content": content},
        **extra,
    }


def assistant(uuid: str, parent: str | None, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if "msg_id" in extra:
        message["id"] = extra.pop("msg_id")
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": message, **extra}


def tool_use(*ids: str) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": i, "name": "Read", "input": {}} for i in ids]


def tool_result(*ids: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": i, "content": "done"} for i in ids]


def item(payload: dict[str, Any], ordinal: int | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "response_item", "payload": payload}
    if ordinal is not None:
        record["ordinal"] = ordinal
    return record


def call(call_id: str, kind: str = "function_call") -> dict[str, Any]:
    return {"type": kind, "call_id": call_id, "name": "shell", "arguments": "{}"}


def output(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def compacted(*history: Any) -> dict[str, Any]:
    return {"type": "compacted", "payload": {"replacement_history": list(history)}}
