"""What a fork will cost in the real client: its context in provider tokens (calibrated,
core.calibration) and whether the client compacts it by itself the moment it resumes it.

The clients decide from the last usage recorded in the file plus their own estimate of what
follows it (measured with Claude Code 2.1.328 and Codex 0.169.0): Claude compacts at its
model's window less a reserve for output and a buffer; Codex at 90 % of its model's window,
having added its estimate of the encrypted reasoning of earlier turns (which the provider
does not count).
"""

from __future__ import annotations

from collections.abc import Container

from pydantic import BaseModel, ConfigDict

from .calibration import Calibration
from .limits import (
    CHARS_PER_TOKEN,
    CODEX_REASONING_OVERHEAD_BYTES,
)
from .model import ItemKind, Provider, TranscriptItem
from .thresholds import client_compact_threshold


def codex_reasoning_tokens(
    items: list[TranscriptItem], card: bool, left_out: Container[int] = ()
) -> int:
    """What Codex adds for encrypted reasoning: the live reasoning before the last user
    message (with a card appended, that is all of it) that the fork still holds (not on a
    `left_out` line), as the client estimates it."""
    reasoning = [
        item
        for item in items
        if item.active and item.kind is ItemKind.REASONING and item.line_index not in left_out
    ]
    if not card:
        users = [item.line_index for item in items if item.active and item.kind is ItemKind.USER]
        last_user = users[-1] if users else -1
        reasoning = [item for item in reasoning if item.line_index < last_user]
    decoded = (
        max(0, item.hidden_bytes * 3 // 4 - CODEX_REASONING_OVERHEAD_BYTES) for item in reasoning
    )
    return sum(decoded) // CHARS_PER_TOKEN


class Projection(BaseModel):
    """A file plan's fork in the client: the context it loads, and whether it compacts."""

    model_config = ConfigDict(frozen=True)

    context_tokens_before: int
    """The session's context as the client would send it now (the last reported usage and
    what follows it)."""
    context_tokens_after: int
    """The fork's, in provider tokens (calibrated)."""
    client_context_tokens: int
    """What the client will reckon the fork at when it resumes it (its own estimate of
    encrypted reasoning added, for Codex)."""
    client_threshold_tokens: int
    client_compacts: bool
    """The client will compact the fork as soon as it resumes it (its summary, not ours)."""
    calibration: Calibration


def project(
    provider: Provider,
    before: int,
    after: int,
    model_window: int | None,
    calibration: Calibration,
    client_extra: int = 0,
) -> Projection:
    """The projection of a plan taking the reported `before` to `after` (both without the
    records after the last usage, calibration.tail_tokens)."""
    tail = calibration.tail_tokens
    threshold = client_compact_threshold(provider, model_window)
    client = after + tail + client_extra
    return Projection(
        context_tokens_before=before + tail,
        context_tokens_after=after + tail,
        client_context_tokens=client,
        client_threshold_tokens=threshold,
        client_compacts=client >= threshold,
        calibration=calibration,
    )
