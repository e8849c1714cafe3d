"""The forks gobtui published, as the board and `detect` show them.

A fork and its source look alike (same title, same records up to the cut), so a fork's title
says what made it ("elide fork", "restore"). Its context needs no help: a compacted fork's
latest usage says its own projected context (adapters.rewrite.apply), as the client will see it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gobtui.core.model import SessionSummary

if TYPE_CHECKING:  # receipts (and the plan model under them) load once one is read
    from gobtui.core.receipt import Receipt


def fork_label(receipt: Receipt) -> str:
    """What the board calls a session gobtui published."""
    if receipt.kind == "undo":
        return "restore"
    if receipt.kind == "fork":
        return "fork"
    return f"{receipt.strategy} fork"


class PublishedForks:
    """The labels of the sessions gobtui published, by session id."""

    def __init__(self, receipts: Iterable[Receipt] = ()) -> None:
        self.labels: dict[str, str] = {}
        for receipt in receipts:
            self.note(receipt)

    def note(self, receipt: Receipt) -> None:
        self.labels[receipt.session_id] = fork_label(receipt)

    def mark(self, summaries: list[SessionSummary]) -> list[SessionSummary]:
        """The summaries, those of published forks titled with what made them."""
        if not self.labels:
            return summaries
        return [self._marked(s) if s.session_id in self.labels else s for s in summaries]

    def _marked(self, summary: SessionSummary) -> SessionSummary:
        title = f"{self.labels[summary.session_id]} · {summary.title or '(no title)'}"
        return summary.model_copy(update={"title": title})
