"""The forks gobtui published, as the board and `detect` show them.

A fork and its source look alike (same title, same records up to the cut), so a fork's title
says what made it ("elide fork", "restore"). A fork is known by its receipt in this data dir,
else by the state card it holds (SessionSummary.has_state_card): one published with another
data dir, on another machine, or by the reference, is labelled a fork too. Its context needs no
help: a compacted fork's latest usage says its own projected context (adapters.rewrite.apply),
as the client will see it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gobtui.core.model import SessionSummary

if TYPE_CHECKING:  # receipts (and the plan model under them) load once one is read
    from gobtui.core.receipt import Receipt


CARD_FORK_LABEL = "fork"
"""What the board calls a fork known by its state card alone (no receipt here to say more)."""


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
        self.sizes: dict[str, int] = {}
        """The size each fork was published at: while it still is, no client has resumed it."""
        for receipt in receipts:
            self.note(receipt)

    def note(self, receipt: Receipt) -> None:
        self.labels[receipt.session_id] = fork_label(receipt)
        self.sizes[receipt.session_id] = receipt.bytes_after

    def label_of(self, summary: SessionSummary) -> str | None:
        """What made the session when it is a fork: its receipt's label, else CARD_FORK_LABEL
        when it holds a state card; None for any other session."""
        label = self.labels.get(summary.session_id)
        if label is None and summary.has_state_card:
            return CARD_FORK_LABEL
        return label

    def is_fork(self, summary: SessionSummary) -> bool:
        return self.label_of(summary) is not None

    def mark(self, summaries: list[SessionSummary]) -> list[SessionSummary]:
        """The summaries, those of forks titled with what made them."""
        if not self.labels and not any(s.has_state_card for s in summaries):
            return summaries
        marked = []
        for summary in summaries:
            label = self.label_of(summary)
            if label is None:
                marked.append(summary)
                continue
            unresumed = self.sizes.get(summary.session_id) == summary.bytes
            marked.append(_titled(summary, label, unresumed))
        return marked


def _titled(summary: SessionSummary, label: str, unresumed: bool) -> SessionSummary:
    title = f"{label} · {summary.title or '(no title)'}"
    return summary.model_copy(update={"title": title, "fork_as_published": unresumed})
