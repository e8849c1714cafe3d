"""The forks gobtui published, as the board and `detect` show them.

A fork and its source look alike (same title, same records up to the cut), so a fork's title
says what made it ("elide fork", "restore"). A compacted fork still holds the usage its source
reported before the plan cut the context: until it is resumed (it grows past the size apply
wrote) its context reads reset, as a fork ended by a state card does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.board import as_unresumed_fork
from core.model import SessionSummary

if TYPE_CHECKING:  # receipts (and the plan model under them) load once one is read
    from adapters.planning import LoadedSession
    from core.receipt import Receipt


def fork_label(receipt: Receipt) -> str:
    """What the board calls a session gobtui published."""
    if receipt.kind == "undo":
        return "restore"
    if receipt.kind == "fork":
        return "fork"
    return f"{receipt.strategy} fork"


class PublishedForks:
    """Labels by session id; for each compacted fork, the size apply wrote it at and the
    context its plan projected."""

    def __init__(self, receipts: Iterable[Receipt] = ()) -> None:
        self.labels: dict[str, str] = {}
        self.applied_bytes: dict[str, int] = {}
        self.projected: dict[str, int] = {}
        """The context apply's plan projected for each compacted fork (its preview's after)."""
        for receipt in receipts:
            self.note(receipt)

    def note(self, receipt: Receipt) -> None:
        self.labels[receipt.session_id] = fork_label(receipt)
        if receipt.kind == "apply":
            self.applied_bytes[receipt.session_id] = receipt.bytes_after
            self.projected[receipt.session_id] = receipt.context_tokens_after

    def mark(self, summaries: list[SessionSummary]) -> list[SessionSummary]:
        """The summaries, those of published forks labelled (and reset while unresumed)."""
        if not self.labels:
            return summaries
        return [self._marked(s) if s.session_id in self.labels else s for s in summaries]

    def _marked(self, summary: SessionSummary) -> SessionSummary:
        title = f"{self.labels[summary.session_id]} · {summary.title or '(no title)'}"
        published = self.applied_bytes.get(summary.session_id)
        if published is not None:
            summary = as_unresumed_fork(summary, published)
        return summary.model_copy(update={"title": title})

    def with_projected_context(self, session: LoadedSession) -> LoadedSession:
        """A session loaded for a plan. A compacted fork nobody resumed holds its source's
        last usage, from before the cut (311k in a fork its plan cut to 232k), or none after
        a state card: its context is the one its apply projected, as its preview promised."""
        parsed = session.transcript.summary
        if parsed is None or parsed.bytes != self.applied_bytes.get(parsed.session_id):
            return session
        after = self.projected.get(parsed.session_id) or None  # (0: a receipt from before)
        update = {"context_tokens": after, "components": None}
        session.transcript.summary = parsed.model_copy(update=update)
        return session
