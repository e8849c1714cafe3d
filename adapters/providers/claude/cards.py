"""Where a Claude record carries a state card: a user record whose content is the card as a
plain string, or, when the card first answers calls a cut interrupted, tool_result blocks and
then one text block (what the rewrite half writes). Lookalikes elsewhere (assistant text, a
tool's output quoting a card) are not cards."""

from __future__ import annotations

from typing import Any

from ....core.card_text import CARD_MARKERS


def card_text(record: Any) -> str | None:
    """The card text `record` carries, or None."""
    if not isinstance(record, dict) or record.get("type") != "user":
        return None
    message = record.get("message")
    text = message.get("content") if isinstance(message, dict) else None
    if isinstance(text, list):
        text = _card_after_results(text)
    return text if isinstance(text, str) and text.startswith(CARD_MARKERS) else None


def _card_after_results(blocks: list[Any]) -> str | None:
    if len(blocks) < 2 or not all(isinstance(block, dict) for block in blocks):
        return None
    *results, last = blocks
    if last.get("type") != "text" or any(b.get("type") != "tool_result" for b in results):
        return None
    text = last.get("text")
    return text if isinstance(text, str) else None
