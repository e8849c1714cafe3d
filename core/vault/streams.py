"""Which stream a snapshot belongs to: the identity a transcript's own records name (for
`vault --repair`), and the (provider, path, session) streams prune keeps the newest of."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Provider
from .index import IndexEntry


class IdentityScan:
    """The provider and session id a transcript's own records name, for `vault --repair`.

    Codex: the first session_meta's payload id. Claude: the first sessionId of a record that
    is not a progress line (as the Claude adapter reads it), else of any record.
    """

    __slots__ = ("fallback", "found")

    def __init__(self) -> None:
        self.found: tuple[Provider, str] | None = None
        self.fallback: tuple[Provider, str] | None = None

    def feed(self, record: object) -> bool:
        """Look at one parsed record; True once the identity is known."""
        if self.found is not None:
            return True
        if not isinstance(record, dict):
            return False
        if record.get("type") == "session_meta":
            payload = record.get("payload")
            sid = (
                payload.get("id") or payload.get("session_id")
                if isinstance(payload, dict)
                else None
            )
            if isinstance(sid, str) and sid:
                self.found = (Provider.CODEX, sid)
            return self.found is not None
        sid = record.get("sessionId")
        if isinstance(sid, str) and sid:
            if record.get("type") != "progress":
                self.found = (Provider.CLAUDE, sid)
            elif self.fallback is None:
                self.fallback = (Provider.CLAUDE, sid)
        return self.found is not None

    @property
    def identity(self) -> tuple[Provider, str] | None:
        return self.found or self.fallback


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
