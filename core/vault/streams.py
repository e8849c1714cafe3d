"""The (provider, path, session) streams of the vault's snapshots, which prune keeps the newest
of (the identity a snapshot's records name is the registry's: adapters.providers.registry)."""

from __future__ import annotations

from collections.abc import Sequence

from .index import IndexEntry


def retained_by_stream(entries: Sequence[IndexEntry], keep: int) -> set[int]:
    """Positions (append order) of the newest `keep` entries of every (provider, path, session)."""
    streams: dict[tuple[str, str, str], list[int]] = {}
    for position, entry in enumerate(entries):
        key = (entry.provider.value, entry.path, entry.session_id)
        streams.setdefault(key, []).append(position)
    kept: set[int] = set()
    for positions in streams.values():
        kept.update(positions[-keep:] if keep > 0 else ())
    return kept


def stream_count(entries: Sequence[IndexEntry]) -> int:
    return len({(e.provider.value, e.path, e.session_id) for e in entries})
