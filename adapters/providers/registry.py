"""The provider registry: one adapter package per provider, and this the only switch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...core.model import Provider, Transcript
from ..files.jsonl import Record
from .reader import TailState


def state_class(provider: Provider) -> type[TailState]:
    if provider is Provider.CLAUDE:
        from .claude.state import ClaudeState

        return ClaudeState
    from .codex.state import CodexState

    return CodexState


def _parse_module(provider: Provider) -> Any:
    """The provider's parse module (imported on first use: the board never parses whole)."""
    if provider is Provider.CLAUDE:
        from .claude import parse as claude_parse

        return claude_parse
    from .codex import parse as codex_parse

    return codex_parse


def parse_transcript(provider: Provider, path: str) -> Transcript:
    """A full parse (every line) into items, for planning and the oracle."""
    transcript: Transcript = _parse_module(provider).parse_transcript(path)
    return transcript


def parse_data(
    provider: Provider, path: str, data: bytes, mtime_ns: int, *, part: bool
) -> Transcript | None:
    """parse_transcript() of `path`'s bytes, read from `data`: the whole file, or (`part`) a
    live part's text (adapters.providers.live_part), None when its live branch reaches back
    before it (read the whole file then)."""
    parse = _parse_module(provider).parse_data
    transcript: Transcript | None = parse(path, data, mtime_ns, part=part)
    return transcript


@dataclass(frozen=True)
class BoundaryRule:
    """How a provider marks a compaction: bytes to search for, the record test, and the
    lines of the file's start a reader of what follows still needs."""

    marker: bytes
    is_boundary: Callable[[Record], bool]
    head: Callable[[bytes], bytes]


def boundary_rule(provider: Provider) -> BoundaryRule:
    module = _parse_module(provider)
    return BoundaryRule(module.BOUNDARY_MARKER, module.is_boundary, module.live_head)


def sniff_record(record: dict[str, Any]) -> Provider | None:
    """Which provider wrote this record, judged by content, not file name."""
    if "payload" in record and isinstance(record.get("type"), str):
        return Provider.CODEX
    if "sessionId" in record or "session_id" in record or "parentUuid" in record:
        return Provider.CLAUDE
    if record.get("type") in {"user", "assistant", "summary", "file-history-snapshot"}:
        return Provider.CLAUDE
    return None
