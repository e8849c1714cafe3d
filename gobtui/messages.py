"""Typed messages workers post to the app."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from core.model import SessionSummary

if TYPE_CHECKING:  # annotations only: the planning stack loads when a plan screen opens
    from core.evaluation import EvalRow
    from core.receipt import Receipt
    from core.vault_model import IndexEntry, RecallResult, RecordPage, SearchResult, SnapshotDiff
    from gobtui.apply_flow import ApplyRequest
    from gobtui.planning_state import PlanPreview, PreviewPlanner
    from gobtui.vault_rows import RecordRow


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


# --- apply, undo and the vault screens -------------------------------------------------------


class ApplyPlanned(Message):
    """The plan to apply is ready: the app asks for confirmation next."""

    def __init__(self, request: ApplyRequest) -> None:
        super().__init__()
        self.request = request


class ApplyAlreadyPublished(Message):
    """The plan to apply was published before, from these same bytes: its receipt."""

    def __init__(self, receipt: Receipt, source_path: str) -> None:
        super().__init__()
        self.receipt = receipt
        self.source_path = source_path


class ApplyDeclined(Message):
    """The session gets no fork; `reason` is one line (below trigger, refused ...)."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__()
        self.label = label
        self.reason = reason


class ForkPublished(Message):
    """An apply or undo published a fork (or found the one an earlier run published)."""

    def __init__(self, receipt: Receipt, source_path: str) -> None:
        super().__init__()
        self.receipt = receipt
        self.source_path = source_path
        """The board's path of the session the fork was made from."""


class PublishFailed(Message):
    def __init__(self, title: str, error: str, code: str) -> None:
        super().__init__()
        self.title = title
        self.error = error
        self.code = code


class VaultFailed(Message):
    """A vault read failed; nothing partial is shown. `code` is the VaultErrorCode value,
    `damaged` says stored state failed a check, `what` names the read (index, diff ...)."""

    def __init__(self, request: int, what: str, error: str, code: str, damaged: bool) -> None:
        super().__init__()
        self.request = request
        self.what = what
        self.error = error
        self.code = code
        self.damaged = damaged


class VaultLoaded(Message):
    def __init__(self, request: int, entries: list[IndexEntry], stored_bytes: int) -> None:
        super().__init__()
        self.request = request
        self.entries = entries
        self.stored_bytes = stored_bytes


class SnapshotsDiffed(Message):
    def __init__(self, request: int, diff: SnapshotDiff) -> None:
        super().__init__()
        self.request = request
        self.diff = diff


class RecordsScanned(Message):
    """Every record of a snapshot, as index/type/size/hash rows (never their content)."""

    def __init__(self, request: int, rows: list[RecordRow]) -> None:
        super().__init__()
        self.request = request
        self.rows = rows


class SnapshotSearched(Message):
    def __init__(self, request: int, query: str, result: SearchResult) -> None:
        super().__init__()
        self.request = request
        self.query = query
        self.result = result


class RecordPageRead(Message):
    def __init__(self, request: int, page: RecordPage) -> None:
        super().__init__()
        self.request = request
        self.page = page


class CardsRecalled(Message):
    def __init__(self, request: int, result: RecallResult) -> None:
        super().__init__()
        self.request = request
        self.result = result
