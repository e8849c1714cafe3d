"""Token estimation without a tokenizer."""

from __future__ import annotations

from .limits import CHARS_PER_TOKEN


def estimate_tokens(n_bytes: int) -> int:
    """ceil(bytes / 4), at least 1; a negative count saturates at 1."""
    if n_bytes <= 0:
        return 1
    return -(-n_bytes // CHARS_PER_TOKEN)


def saturating_add(a: int, b: int, cap: int = 2**63 - 1) -> int:
    return min(cap, max(0, a) + max(0, b))
