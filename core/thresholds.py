"""Where the providers' clients compact by themselves, and the highest trigger that fires
first: the board needs these for every row, so they live apart from the planning models."""

from __future__ import annotations

from .limits import TRIGGER_CLIENT_SHARE
from .model import Provider


def client_compact_threshold(provider: Provider, model_window: int | None) -> int:
    """The context at which the provider's own client compacts a session it resumes.

    Claude Code: the model's window less CLAUDE_AUTOCOMPACT_RESERVE_TOKENS (200k -> 167k).
    Codex: 90 % of its model's window; the client knows its models' windows (272k for the
    GPT-5 family) whatever window a rollout records, unless the rollout's is larger. (The
    figures are the provider's traits: core.model.ProviderTraits.)
    """
    traits = provider.traits
    if traits.window_floor:
        window = max(traits.default_window, model_window or 0)
    else:
        window = model_window or traits.default_window
    return max(1, round((window - traits.compact_reserve) * traits.compact_share))


def trigger_cap(provider: Provider, window: int | None) -> int:
    """The highest trigger that fires before the provider's client compacts by itself."""
    return max(1, round(client_compact_threshold(provider, window) * TRIGGER_CLIENT_SHARE))
