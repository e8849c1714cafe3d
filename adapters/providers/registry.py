"""The provider registry: one adapter module per provider."""

from __future__ import annotations

from typing import Any

from adapters.providers.reader import TailState
from core.model import Provider, Transcript


def state_class(provider: Provider) -> type[TailState]:
    if provider is Provider.CLAUDE:
        from adapters.providers.claude.state import ClaudeState

        return ClaudeState
    from adapters.providers.codex.state import CodexState

    return CodexState


def parse_transcript(provider: Provider, path: str) -> Transcript:
    """A full parse (every line) into items, for planning and the oracle."""
    if provider is Provider.CLAUDE:
        from adapters.providers.claude import parse as claude_parse

        return claude_parse.parse_transcript(path)
    from adapters.providers.codex import parse as codex_parse

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
