"""Tolerant timestamp parsing (transcripts hold ISO-8601, sometimes garbage)."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def parse_ts(value: Any) -> float | None:
    """ISO-8601 (with `Z` or an offset) or epoch seconds/ms to epoch seconds; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if not isinstance(value, str) or len(value) < 10 or not value[:4].isdigit():
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.timestamp()
