"""Where a record carries a state card, and its text: the markers a card starts with and the
three places cards are written. Light on purpose: every summary reader asks it of every
record (core.edits, the card model, is not loaded for that)."""

from __future__ import annotations

from typing import Any

CARD_MARKER = "[gobtui state card]"
REFERENCE_CARD_MARKER = "[gobstopper state card]"
"""Cards written by the reference parse too, so recall reads both."""
CARD_MARKERS = (CARD_MARKER, REFERENCE_CARD_MARKER)
CARD_PREFILTER = b" state card]"
"""Bytes every line holding a card has (a cheap test before decoding one)."""


def card_text_of(record: Any) -> str | None:
    """The state-card text a record carries, from the three places cards are written.

    A Claude user record whose content is a plain string; a Codex user response message whose
    input_text starts with the marker; the first replacement_history item of a Codex
    compacted record. Lookalikes elsewhere (assistant text, tool output) are not cards.
    """
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    payload = record.get("payload")
    text: Any = None
    if kind == "user":
        message = record.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        if isinstance(text, list):
            text = _card_after_results(text)
    elif kind == "response_item" and isinstance(payload, dict):
        if payload.get("type") == "message" and payload.get("role") == "user":
            text = _input_text(payload.get("content"), first_only=False)
    elif kind == "compacted" and isinstance(payload, dict):
        history = payload.get("replacement_history")
        if isinstance(history, list) and history and isinstance(history[0], dict):
            text = _input_text(history[0].get("content"), first_only=True)
    if isinstance(text, str) and text.startswith(CARD_MARKERS):
        return text
    return None


def _card_after_results(blocks: list[Any]) -> str | None:
    """The card of a Claude card record that first answers interrupted calls: tool_result
    blocks, then one text block (what gobtui writes; any other block list is not a card)."""
    if len(blocks) < 2 or not all(isinstance(block, dict) for block in blocks):
        return None
    *results, last = blocks
    if last.get("type") != "text" or any(b.get("type") != "tool_result" for b in results):
        return None
    text = last.get("text")
    return text if isinstance(text, str) else None


def _input_text(content: Any, *, first_only: bool) -> str | None:
    if not isinstance(content, list):
        return None
    for item in content[:1] if first_only else content:
        if isinstance(item, dict) and item.get("type") == "input_text":
            text = item.get("text")
            if isinstance(text, str) and text.startswith(CARD_MARKERS):
                return text
    return None
