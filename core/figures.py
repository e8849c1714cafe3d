"""Compact figures shared by every face (dashboard, CLI, the sentences core writes)."""

from __future__ import annotations


def tokens_words(n: int) -> str:
    """900, 4.1k, 53k, 1.2M: the figure the dashboard and the CLI print."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"
