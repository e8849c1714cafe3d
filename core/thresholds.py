"""Where the providers' clients compact by themselves, and the highest trigger that fires
first: the board needs these for every row, so they live apart from the planning models."""

from __future__ import annotations

from .limits import (
    CLAUDE_AUTOCOMPACT_RESERVE_TOKENS,
    CODEX_AUTOCOMPACT_SHARE,
    CODEX_CLIENT_WINDOW,
    DEFAULT_CLAUDE_WINDOW,
    TRIGGER_CLIENT_SHARE,
)
from .model import Provider


def client_compact_threshold(provider: Provider, model_window: int | None) -> int:
    """The context at which the provider's own client compacts a session it resumes.

    Claude Code: the model's window less CLAUDE_AUTOCOMPACT_RESERVE_TOKENS (200k -> 167k).
    Codex: 90 % of its model's window; the client knows its models' windows (272k for the
    GPT-5 family) whatever window a rollout records, unless the rollout's is larger.
    """
    if provider is Provider.CLAUDE:
        window = model_window or DEFAULT_CLAUDE_WINDOW
        return max(1, window - CLAUDE_AUTOCOMPACT_RESERVE_TOKENS)
    window = max(CODEX_CLIENT_WINDOW, model_window or 0)
    return round(window * CODEX_AUTOCOMPACT_SHARE)


def trigger_cap(provider: Provider, window: int | None) -> int:
    """The highest trigger that fires before the provider's client compacts by itself."""
    return max(1, round(client_compact_threshold(provider, window) * TRIGGER_CLIENT_SHARE))
