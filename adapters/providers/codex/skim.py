"""A rollout line read from its first bytes when the summary needs no more of it.

Most of a rollout's bytes are in payloads the running summary (CodexState.feed_parts) reads
only the type of: command output, tool calls and their results, encrypted reasoning. Codex
writes every line as `{"timestamp":...,"type":...,"payload":{"type":...` (serde's field and
tag order), so for those the first hundred bytes say all the summary uses and the rest is not
decoded. Any other line, or one of another shape, is decoded whole. A line skimmed is not
checked past its first bytes: a damaged one counts as a record here and as a bad line in a
full parse, which decodes every line (and is what plans and rewrites read).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

OPAQUE_PAYLOADS: dict[str, frozenset[str]] = {
    "response_item": frozenset(
        {
            "function_call",
            "function_call_output",
            "custom_tool_call",
            "custom_tool_call_output",
            "local_shell_call",
            "reasoning",
            "web_search_call",
        }
    ),
    "event_msg": frozenset(
        {"exec_command_end", "agent_reasoning", "mcp_tool_call_end", "web_search_end"}
    ),
}
"""Record and payload types whose payload the summary reads nothing of but the type (a test
feeds each whole and skimmed and compares the states)."""

_HEAD = re.compile(
    rb'\{"timestamp":"([0-9T:.Z+-]{1,40})","type":"(response_item|event_msg)",'
    rb'"payload":\{"type":"([a-z_]{1,64})"[,}]'
)


def tail_loads(line: bytes) -> Any:
    """orjson.loads(line), or for an opaque payload in Codex's own shape the record the
    summary would see of it: its timestamp, type and payload type."""
    head = _HEAD.match(line)
    if head is not None and line.endswith(b"}"):
        rtype = head[2].decode("ascii")
        ptype = head[3].decode("ascii")
        if ptype in OPAQUE_PAYLOADS[rtype]:
            return {"timestamp": head[1].decode("ascii"), "type": rtype, "payload": {"type": ptype}}
    return orjson.loads(line)
