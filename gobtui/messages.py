"""Typed messages workers post to the app."""

from __future__ import annotations

from textual.message import Message

from core.model import SessionSummary


class SessionsScanned(Message):
    """A full scan finished: the complete set of top-level sessions."""

    def __init__(self, summaries: list[SessionSummary], skipped: int = 0) -> None:
        super().__init__()
        self.summaries = summaries
        self.skipped = skipped


class SessionsChanged(Message):
    """Some sessions changed (watcher): merge them into the board."""

    def __init__(self, summaries: list[SessionSummary], removed: list[str] | None = None) -> None:
        super().__init__()
        self.summaries = summaries
        self.removed = removed or []


class ScanFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
