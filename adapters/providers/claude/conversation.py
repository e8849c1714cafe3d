"""A Claude Code transcript as a conversation to read: its records turned into entries
(core.conversation), in the shapes Claude Code writes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ....core.conversation import (
    HEADER_MAX_CHARS,
    EntryKind,
    EntryWriter,
    Record,
    first_line,
)
from ....core.model import TranscriptItem
from ..blocks import block_texts

_CLAUDE_TEXT = frozenset({"text"})
_QUIET_SYSTEM = frozenset({"turn_duration", "stop_hook_summary"})


@dataclass(slots=True)
class ClaudeConversation(EntryWriter):
    INJECTED: ClassVar[tuple[str, ...]] = (
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
        "<system-reminder>",
    )

    def add(self, item: TranscriptItem, record: Record) -> None:
        self._claude(item, record)

    def _claude(self, item: TranscriptItem, record: Record) -> None:
        line = item.line_index
        rtype = record.get("type")
        if rtype == "assistant" or rtype == "user":
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if rtype == "assistant":
                self._claude_assistant(line, content)
            else:
                self._claude_user(line, record, content)
        elif rtype == "system":
            self._claude_system(line, record)
        elif rtype == "tool_use":  # schema drift: the record is the call
            self._call(line, record.get("id"), record.get("name"), record.get("input"))
        elif rtype == "tool_result":
            output = record.get("content", record.get("output"))
            text = block_texts(output, _CLAUDE_TEXT)
            self._result(line, record.get("tool_use_id"), text, record.get("is_error") is True)

    def _claude_assistant(self, line: int, content: Any) -> None:
        if isinstance(content, str):
            self._message(EntryKind.ASSISTANT, content, line)
            return
        texts: list[str] = []  # adjacent text blocks make one answer

        def flush() -> None:
            if texts:
                self._message(EntryKind.ASSISTANT, "\n\n".join(texts), line)
                texts.clear()

        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                continue
            flush()
            if btype == "tool_use":
                self._call(line, block.get("id"), block.get("name"), block.get("input"))
            elif btype == "thinking":
                thought = block.get("thinking")
                self._thinking(line, thought if isinstance(thought, str) else "")
            elif btype == "redacted_thinking":
                self._thinking(line, "", "thinking (redacted)")
        flush()

    def _claude_user(self, line: int, record: Record, content: Any) -> None:
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = block_texts(block.get("content"), _CLAUDE_TEXT)
                    error = block.get("is_error") is True
                    self._result(line, block.get("tool_use_id"), text, error)
            blocks = [b for b in content if isinstance(b, dict) and b.get("type") != "tool_result"]
            text = block_texts(blocks, _CLAUDE_TEXT)
        else:
            text = content if isinstance(content, str) else ""
        if not text.strip():
            return
        if record.get("isCompactSummary") is True:
            self._emit(EntryKind.CONTEXT, f"compaction summary · {first_line(text)}", text, line)
        elif record.get("isMeta") is True:
            self._emit(EntryKind.CONTEXT, f"meta · {first_line(text)}", text, line)
        else:
            self._message(EntryKind.USER, text, line)

    def _claude_system(self, line: int, record: Record) -> None:
        subtype = record.get("subtype")
        if subtype in _QUIET_SYSTEM:
            return
        content = record.get("content")
        text = content if isinstance(content, str) else ""
        if subtype == "compact_boundary":
            meta = record.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            words = ["compacted"]
            if isinstance(meta.get("trigger"), str):
                words.append(meta["trigger"])
            pre = meta.get("preTokens")
            if isinstance(pre, int) and not isinstance(pre, bool):
                words.append(f"{pre:,} tokens before")
            self._emit(EntryKind.NOTICE, " · ".join(words), "", line)
            return
        label = subtype if isinstance(subtype, str) and subtype else "system"
        header = f"{label} · {first_line(text)}" if text.strip() else label
        body = text if "\n" in text.strip() or len(text) > HEADER_MAX_CHARS else ""
        self._emit(EntryKind.NOTICE, header, body, line)
