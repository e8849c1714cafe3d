"""The provider registry: one adapter module per provider."""

from __future__ import annotations

from typing import Any

from ...core.model import Provider, Transcript
from .reader import TailState


def state_class(provider: Provider) -> type[TailState]:
    if provider is Provider.CLAUDE:
        from .claude.state import ClaudeState

        return ClaudeState
    from .codex.state import CodexState

    return CodexState


def parse_transcript(provider: Provider, path: str) -> Transcript:
    """A full parse (every line) into items, for planning and the oracle."""
    if provider is Provider.CLAUDE:
        from .claude import parse as claude_parse

        return claude_parse.parse_transcript(path)
    from .codex import parse as codex_parse

    return codex_parse.parse_transcript(path)


def sniff_record(record: dict[str, Any]) -> Provider | None:
    """Which provider wrote this record, judged by content, not file name."""
    if "payload" in record and isinstance(record.get("type"), str):
        return Provider.CODEX
    if "sessionId" in record or "session_id" in record or "parentUuid" in record:
        return Provider.CLAUDE
    if record.get("type") in {"user", "assistant", "summary", "file-history-snapshot"}:
        return Provider.CLAUDE
    return None
