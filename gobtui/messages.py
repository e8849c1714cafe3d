"""Typed messages workers post to the app."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from core.model import SessionSummary

if TYPE_CHECKING:  # annotations only: the planning stack loads when a plan screen opens
    from core.evaluation import EvalRow
    from gobtui.planning_state import PlanPreview, PreviewPlanner


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


# --- plan preview and eval screens (posted by their thread workers to the screen) -------------


class PlanReady(Message):
    """A preview worker finished; `request` tells a stale answer from the current one."""

    def __init__(self, request: int, planner: PreviewPlanner, preview: PlanPreview) -> None:
        super().__init__()
        self.request = request
        self.planner = planner
        self.preview = preview


class PlanFailed(Message):
    """The session could not be planned: a one-line reason, no transcript content."""

    def __init__(self, request: int, error: str) -> None:
        super().__init__()
        self.request = request
        self.error = error


class EvalReady(Message):
    def __init__(
        self, request: int, rows: list[EvalRow], context_tokens: int, source_bytes: int
    ) -> None:
        super().__init__()
        self.request = request
        self.rows = rows
        self.context_tokens = context_tokens
        self.source_bytes = source_bytes
        """Size of the file evaluated, to tell a later change from a re-read."""


class EvalFailed(Message):
    def __init__(self, request: int, error: str) -> None:
        super().__init__()
        self.request = request
        self.error = error
