"""Where a Codex record carries a state card: a user response message whose input_text is the
card, or the first replacement_history item of a compacted record (--experimental-compacted
writes the card there). Lookalikes elsewhere (assistant text, a tool's output) are not cards."""

from __future__ import annotations

from typing import Any

from ....core.card_text import CARD_MARKERS


def card_text(record: Any) -> str | None:
    """The card text `record` carries, or None."""
    if not isinstance(record, dict):
        return None
    kind, payload = record.get("type"), record.get("payload")
    if not isinstance(payload, dict):
        return None
    if kind == "response_item":
        if payload.get("type") == "message" and payload.get("role") == "user":
            return _input_text(payload.get("content"), first_only=False)
    elif kind == "compacted":
        history = payload.get("replacement_history")
        if isinstance(history, list) and history and isinstance(history[0], dict):
            return _input_text(history[0].get("content"), first_only=True)
    return None


def _input_text(content: Any, *, first_only: bool) -> str | None:
    if not isinstance(content, list):
        return None
    for item in content[:1] if first_only else content:
        if isinstance(item, dict) and item.get("type") == "input_text":
            text = item.get("text")
            if isinstance(text, str) and text.startswith(CARD_MARKERS):
                return text
    return None
