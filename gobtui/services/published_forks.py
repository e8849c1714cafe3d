"""The forks gobtui published, as the board and `detect` show them.

A fork and its source look alike (same title, same records up to the cut), so a fork's title
says what made it ("elide fork", "restore"). A fork is known by its receipt in this data dir,
else by its own content: its session id, which says it is a fork gobtui published and at what
size (core.fork_id), or the state card it holds (SessionSummary.has_state_card). One published
with another data dir or on another machine is labelled a fork too, and reads unresumed (so
no watch compacts it again) while its file keeps the size its id names; one published by the
reference is known by its card. Its context needs no
help: a compacted fork's latest usage says its own projected context (adapters.rewrite.apply),
as the client will see it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from gobtui.core.fork_id import published_size
from gobtui.core.model import SessionSummary

if TYPE_CHECKING:  # receipts (and the plan model under them) load once one is read
    from gobtui.core.receipt import Receipt


CARD_FORK_LABEL = "fork"
"""What the board calls a fork known by its content alone (no receipt here to say more)."""
COPY_LABEL = "copy"
"""What the board calls a session that appeared while it runs holding another's records (same
provider, folder and first record): a fork with no receipt here and no card."""


def fork_label(receipt: Receipt) -> str:
    """What the board calls a session gobtui published."""
    if receipt.kind == "undo":
        return "restore"
    if receipt.kind == "fork":
        return "fork"
    # An auto fork is named by what auto chose: that is what it cut.
    return f"{receipt.selected_strategy or receipt.strategy} fork"


class PublishedForks:
    """The labels of the sessions gobtui published, by session id."""

    def __init__(self, receipts: Iterable[Receipt] = ()) -> None:
        self.labels: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        """The size each fork was published at: while it still is, no client has resumed it."""
        self.last_from: dict[str, Receipt] = {}
        """The newest fork published from each source path (its Fork line on the board)."""
        self.copies: dict[str, str] = {}
        """Source path -> the resume command of a copy of it seen appear (twin_of)."""
        for receipt in receipts:
            self.note(receipt)

    def note(self, receipt: Receipt) -> None:
        """A receipt, an intent included: an intent names its fork before it is written."""
        self.labels[receipt.session_id] = fork_label(receipt)
        self.sizes[receipt.session_id] = receipt.bytes_after
        last = self.last_from.get(receipt.source_path)
        if receipt.completed and (last is None or last.created_ts <= receipt.created_ts):
            self.last_from[receipt.source_path] = receipt

    def note_seen(self, summary: SessionSummary, label: str, source: str | None = None) -> None:
        """A fork known without a receipt (by its card or its content, copied from the
        session at `source`), first seen at this size: while it keeps it, no client has
        resumed it."""
        self.labels.setdefault(summary.session_id, label)
        self.sizes.setdefault(summary.session_id, summary.bytes)
        if source is not None:
            self.copies[source] = summary.resume_command()

    def fork_line(self, path: str) -> str | None:
        """The resume command of the newest fork of the session at `path`, if any is known."""
        receipt = self.last_from.get(path) or self.last_from.get(os.path.realpath(path))
        if receipt is not None:
            return receipt.resume_command
        return self.copies.get(path)

    def label_of(self, summary: SessionSummary) -> str | None:
        """What made the session when it is a fork: its receipt's label, else CARD_FORK_LABEL
        when its id is a fork's or it holds a state card; None for any other session."""
        label = self.labels.get(summary.session_id)
        if label is None and (summary.has_state_card or _fork_size(summary) is not None):
            return CARD_FORK_LABEL
        return label

    def unresumed(self, summary: SessionSummary) -> bool:
        """Whether the fork still has the size it was published at (no client wrote to it)."""
        size = self.sizes.get(summary.session_id)
        return (size if size is not None else _fork_size(summary)) == summary.bytes

    def is_fork(self, summary: SessionSummary) -> bool:
        return self.label_of(summary) is not None

    def mark(self, summaries: list[SessionSummary]) -> list[SessionSummary]:
        """The summaries, those of forks titled with what made them."""
        if not self.labels and not any(
            s.has_state_card or _fork_size(s) is not None for s in summaries
        ):
            return summaries
        marked = []
        for summary in summaries:
            label = self.label_of(summary)
            if label is None:
                marked.append(summary)
                continue
            marked.append(_titled(summary, label, self.unresumed(summary)))
        return marked


def twin_of(summary: SessionSummary, others: Iterable[SessionSummary]) -> SessionSummary | None:
    """The session `summary` is a copy of, by content: another of the same provider and
    folder whose first record has the same time (a client's own fork, or one published with
    another data dir without a card). None when there is none, or the first record has no time."""
    if summary.first_ts is None:
        return None
    for other in others:
        if (
            other.first_ts == summary.first_ts
            and other.path != summary.path
            and other.session_id != summary.session_id
            and other.provider is summary.provider
            and other.cwd == summary.cwd
        ):
            return other
    return None


def _fork_size(summary: SessionSummary) -> int | None:
    return published_size(summary.session_id)


def _titled(summary: SessionSummary, label: str, unresumed: bool) -> SessionSummary:
    title = f"{label} · {summary.title or '(no title)'}"
    return replace(summary, title=title, fork_as_published=unresumed)
