"""Typed messages workers post to the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

from gobtui.core.model import SessionSummary

if TYPE_CHECKING:  # annotations only: the planning stack loads when a plan screen opens
    from gobtui.core.composition import Composition
    from gobtui.core.evaluation import EvalRow
    from gobtui.core.receipt import Receipt
    from gobtui.core.vault.index import IndexEntry
    from gobtui.core.vault.reports import RecallResult, RecordPage, SearchResult, SnapshotDiff
    from gobtui.services.apply_flow import ApplyRequest
    from gobtui.services.planning_state import PlanPreview, PreviewPlanner
    from gobtui.view_models.vault_rows import RecordRow


@dataclass
class SessionsScanned(Message):
    """A full scan finished: the complete set of top-level sessions."""

    summaries: list[SessionSummary]
    skipped: int = 0
    receipts: list[Receipt] = field(default_factory=list)
    """The receipts of the data dir, read after the scan (forks are labelled from them)."""


@dataclass
class SessionsChanged(Message):
    """Some sessions changed (watcher): merge them into the board."""

    summaries: list[SessionSummary]
    removed: list[str] = field(default_factory=list)


@dataclass
class ScanFailed(Message):
    error: str


# --- plan preview and eval screens (posted by their thread workers to the screen) -------------


@dataclass
class PlanReady(Message):
    """A preview worker finished; `request` tells a stale answer from the current one."""

    request: int
    planner: PreviewPlanner
    preview: PlanPreview


@dataclass
class PlanFailed(Message):
    """The session could not be planned: a one-line reason, no transcript content."""

    request: int
    error: str


@dataclass
class EvalReady(Message):
    request: int
    rows: list[EvalRow]
    context_tokens: int
    source_bytes: int
    """Size of the file evaluated, to tell a later change from a re-read."""
    fills: str = ""
    """What fills its context, by kind (core.context_words.fills_words)."""


@dataclass
class EvalFailed(Message):
    request: int
    error: str


# --- apply, undo and the vault screens -------------------------------------------------------


@dataclass
class ApplyPlanned(Message):
    """The plan to apply is ready: the app asks for confirmation next."""

    request: ApplyRequest


@dataclass
class ApplyAlreadyPublished(Message):
    """The plan to apply was published before, from these same bytes: its receipt."""

    receipt: Receipt
    source_path: str


@dataclass
class ApplyDeclined(Message):
    """The session gets no fork; `reason` is one line (below trigger, refused ...)."""

    label: str
    reason: str


@dataclass
class ForkPublished(Message):
    """An apply or undo published a fork (or found the one an earlier run published)."""

    receipt: Receipt
    source_path: str
    """The board's path of the session the fork was made from."""


@dataclass
class PublishFailed(Message):
    title: str
    error: str
    code: str


@dataclass
class VaultFailed(Message):
    """A vault read failed; nothing partial is shown. `code` is the VaultErrorCode value,
    `damaged` says stored state failed a check, `what` names the read (index, diff ...)."""

    request: int
    what: str
    error: str
    code: str
    damaged: bool


@dataclass
class VaultLoaded(Message):
    request: int
    entries: list[IndexEntry]
    stored_bytes: int


@dataclass
class SnapshotsDiffed(Message):
    request: int
    diff: SnapshotDiff


@dataclass
class RecordsScanned(Message):
    """Every record of a snapshot, as index/type/size/hash rows (never their content)."""

    request: int
    rows: list[RecordRow]


@dataclass
class SnapshotSearched(Message):
    request: int
    query: str
    result: SearchResult


@dataclass
class RecordPageRead(Message):
    request: int
    page: RecordPage


@dataclass
class CardsRecalled(Message):
    request: int
    result: RecallResult


@dataclass
class FillsReady(Message):
    """What fills one session's context (None: it could not be read), for the detail pane."""

    key: tuple[str, int]
    """The session's path and size when it was read."""
    composition: Composition | None
