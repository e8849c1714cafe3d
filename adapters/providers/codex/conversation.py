"""A Codex rollout as a conversation to read: its records turned into entries
(core.conversation), in the shapes Codex writes them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from ....core.conversation import (
    EntryKind,
    EntryWriter,
    Record,
    first_line,
)
from ....core.model import TranscriptItem
from ..blocks import block_texts
from .inputs import PATCH_BEGIN, patched_paths

_CODEX_TEXT = frozenset({"input_text", "output_text", "text"})
_EXIT_CODE = re.compile(r"(?:Exit code:|Process exited with code) (-?\d+)")
_PREAMBLES = ("Exit code:", "Chunk ID:", "Process exited", "Command:")
_CODEX_REASONING = frozenset({"summary_text", "reasoning_text", "text"})


def output_part(text: str) -> str:
    """A shell output after its preamble (exit code, wall time ... `Output:`)."""
    if text.startswith(_PREAMBLES):
        at = text.find("\nOutput:\n", 0, 600)
        if at >= 0:
            return text[at + len("\nOutput:\n") :]
    return text


def failed_output(text: str) -> bool:
    """An output whose head reports a non-zero exit."""
    found = _EXIT_CODE.search(text[:400])
    return found is not None and found.group(1) != "0"


def _patch_files(text: str) -> str:
    """The files an apply_patch body names (`*** Update File: path`), or ""."""
    if not text.startswith(PATCH_BEGIN):
        return ""
    return "; ".join(dict.fromkeys(patched_paths(text)))


def _decoded(arguments: Any) -> Any:
    """A Codex call's arguments: a JSON string decoded, anything else as it is."""
    if isinstance(arguments, str) and arguments.lstrip().startswith(("{", "[")):
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return arguments


@dataclass(slots=True)
class CodexConversation(EntryWriter):
    INJECTED: ClassVar[tuple[str, ...]] = (
        "<environment_context>",
        "<user_instructions>",
        "<permissions instructions>",
        "<INSTRUCTIONS>",
        "# AGENTS.md instructions",
    )

    def output_of(self, text: str) -> str:
        return output_part(text)

    def add(self, item: TranscriptItem, record: Record) -> None:
        self._codex(item, record)

    def _codex(self, item: TranscriptItem, record: Record) -> None:
        line = item.line_index
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return
        if record.get("type") == "compacted":
            message = payload.get("message")
            text = message if isinstance(message, str) else ""
            header = f"compacted · {first_line(text)}" if text.strip() else "compacted"
            self._emit(EntryKind.NOTICE, header, text if "\n" in text.strip() else "", line)
            return
        ptype = payload.get("type")
        if ptype == "message":
            role = payload.get("role")
            text = block_texts(payload.get("content"), _CODEX_TEXT)
            if role == "assistant":
                self._message(EntryKind.ASSISTANT, text, line)
            elif role == "user":
                self._message(EntryKind.USER, text, line)
            elif text.strip():
                who = role if isinstance(role, str) and role else "system"
                self._emit(EntryKind.CONTEXT, f"{who} · {first_line(text)}", text, line)
        elif ptype == "agent_message":
            message = payload.get("message", payload.get("content"))
            self._message(EntryKind.ASSISTANT, block_texts(message, _CODEX_TEXT), line)
        elif ptype == "reasoning":
            self._codex_reasoning(line, payload)
        elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            self._codex_call(line, item, payload)
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            self._codex_output(line, payload)
        elif ptype == "web_search_call":
            action = payload.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            self._call(line, None, "web_search", query if isinstance(query, str) else action)

    def _codex_reasoning(self, line: int, payload: Record) -> None:
        parts = [block_texts(payload.get(key), _CODEX_REASONING) for key in ("summary", "content")]
        text = "\n\n".join(part for part in parts if part.strip())
        if text:
            self._thinking(line, text, "reasoning")
            return
        hidden = payload.get("encrypted_content")
        size = len(hidden) if isinstance(hidden, str) else 0
        self._thinking(line, "", f"reasoning (encrypted, {size:,} bytes)" if size else "reasoning")

    def _codex_call(self, line: int, item: TranscriptItem, payload: Record) -> None:
        call_id = _codex_call_id(payload)
        if payload.get("type") == "local_shell_call":
            action = payload.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            name = item.label or "shell"
            self._call(line, call_id, name, {"command": command} if command else action)
            return
        args = payload.get("arguments")
        tool_input = _decoded(args) if args is not None else payload.get("input")
        shown = _patch_files(tool_input) if isinstance(tool_input, str) else ""
        self._call(line, call_id, payload.get("name"), tool_input, shown or None)

    def _codex_output(self, line: int, payload: Record) -> None:
        output = payload.get("output")
        error = False
        if isinstance(output, str) and output.startswith('{"output":'):
            wrapped = _decoded(output)  # a custom tool's output: {"output": ..., "metadata"}
            if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
                output = wrapped["output"]
                meta = wrapped.get("metadata")
                code = meta.get("exit_code") if isinstance(meta, dict) else None
                error = isinstance(code, int) and code != 0
        text = block_texts(output, _CODEX_TEXT)
        error = error or failed_output(text)
        self._result(line, _codex_call_id(payload), text, error)


def _codex_call_id(payload: Record) -> str | None:
    for key in ("call_id", "tool_call_id", "id"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None
