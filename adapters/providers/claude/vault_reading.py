"""How Claude Code's records read in the vault views (adapters.providers.record_text)."""

from __future__ import annotations

from typing import Any

from ..record_text import Node, RecordText


def _tool_input(node: Node, key: str, item: Any) -> tuple[str, Any] | None:
    """A tool_use block's input object."""
    name = node.get("name")
    return (name, item) if key == "input" and isinstance(name, str) else None


def _enclosing_label(node: Node) -> str | None:
    """A tool_result heads the text blocks it holds."""
    if node.get("type") != "tool_result":
        return None
    return "tool result" + (" (error)" if node.get("is_error") is True else "")


READING = RecordText(
    text_keys=frozenset(
        {"text", "thinking", "content", "message", "output", "fullOutput", "input"}
        | {"prompt", "lastPrompt", "summary"}
    ),
    labels={
        "thinking": "thinking",
        "redacted_thinking": "thinking",
        "tool_result": "tool result",
        "last-prompt": "last prompt",
        "system": "system",
        "bash_progress": "command progress",
        "agent_progress": "subagent",
        "hook_progress": "hook",
    },
    role_types=frozenset({"text", "message"}),
    quiet_keys=frozenset(
        {"uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sessionId", "session_id"}
        | {"messageId", "requestId", "id", "tool_use_id", "toolUseID", "parentToolUseID"}
        | {"timestamp", "type", "subtype", "signature", "version", "userType", "isSidechain"}
        | {"cwd", "gitBranch", "slug"}
    ),
    tool_input=_tool_input,
    enclosing_label=_enclosing_label,
)
