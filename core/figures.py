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


def bytes_words(n: int) -> str:
    """812 B, 12.3 KB, 4.1 MB (binary units; no decimal from 100 up)."""
    sign = "-" if n < 0 else ""
    value = float(abs(n))
    if value < 1024:
        return f"{sign}{int(value)} B"
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{sign}{value:.1f} {unit}" if value < 100 else f"{sign}{value:.0f} {unit}"
