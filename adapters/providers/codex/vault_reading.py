"""How Codex's records read in the vault views (adapters.providers.record_text)."""

from __future__ import annotations

from typing import Any

import orjson

from ..record_text import Node, RecordText


def _tool_input(node: Node, key: str, item: Any) -> tuple[str, Any] | None:
    """A function_call's arguments (JSON in a string, read as its object when it is one) or a
    custom_tool_call's input."""
    name = node.get("name")
    if key not in ("input", "arguments") or not isinstance(name, str):
        return None
    if key == "arguments" and isinstance(item, str):
        try:
            parsed = orjson.loads(item)
        except orjson.JSONDecodeError:
            return name, item
        return name, parsed if isinstance(parsed, dict) else item
    return name, item


def _json_text(_node: Node, key: str, item: Any) -> Node | None:
    """A tool output that is a JSON object in a string (apply_patch: {"output": ...,
    "metadata": ...})."""
    if key != "output" or not isinstance(item, str):
        return None
    if not (item.startswith("{") and item.endswith("}")):
        return None
    try:
        parsed = orjson.loads(item)
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


READING = RecordText(
    text_keys=frozenset(
        {"text", "content", "message", "output", "aggregated_output", "last_agent_message"}
        | {"arguments", "input", "prompt", "summary"}
    ),
    labels={
        "function_call_output": "tool output",
        "custom_tool_call_output": "tool output",
        "user_message": "user",
        "agent_message": "agent",
        "agent_reasoning": "reasoning",
        "reasoning": "reasoning",
        "summary_text": "reasoning summary",
        "exec_command_end": "command output",
        "task_complete": "last agent message",
        "compacted": "compaction summary",
        "session_meta": "instructions",
    },
    role_types=frozenset({"text", "input_text", "output_text", "message"}),
    quiet_keys=frozenset(
        {"id", "session_id", "call_id", "turn_id", "timestamp", "type", "encrypted_content"}
        | {"cwd"}
    ),
    short_field_keys=frozenset({"summary"}),  # turn_context's summary setting: "auto"
    tool_input=_tool_input,
    json_text=_json_text,
)
