"""An eval over many sessions: per strategy, the median cut and retention of its plans.

Cut is what a plan takes off the context, as a share of the context before it; retention is
its probe recall (core.probes: what must survive, by class). A row counts only when the
strategy made a plan that rewrites the file: a provider compaction keeps what the provider's
summary keeps, which no probe can tell, and a session under its trigger has nothing to cut.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel

from .evaluation import EvalRow, RowStatus


class StrategyFigures(BaseModel):
    """One strategy over a corpus."""

    strategy: str
    sessions: int
    """Sessions evaluated (every one of the corpus that loaded)."""
    planned: int
    """Sessions where the strategy made a file plan with a known recall."""
    median_cut: float | None = None
    median_retention: float | None = None
    worst_retention: float | None = None
    worst_session: str | None = None
    """The session of the worst retention (its path)."""


def _cut(row: EvalRow) -> float | None:
    before = row.context_tokens_before
    if row.status is not RowStatus.PLAN or row.control or not before or row.recall is None:
        return None
    return row.est_reclaimed / before


def strategy_figures(
    rows_by_session: Mapping[str, Sequence[EvalRow]], strategies: Iterable[str]
) -> list[StrategyFigures]:
    """The figures of each strategy over the sessions' eval rows (session -> its rows)."""
    figures = []
    for strategy in strategies:
        cuts: list[float] = []
        kept: list[tuple[float, str]] = []
        for session, rows in rows_by_session.items():
            row = next((r for r in rows if r.strategy == strategy), None)
            cut = _cut(row) if row is not None else None
            if row is None or cut is None or row.recall is None:
                continue
            cuts.append(cut)
            kept.append((row.recall, session))
        worst = min(kept) if kept else None
        figures.append(
            StrategyFigures(
                strategy=strategy,
                sessions=len(rows_by_session),
                planned=len(cuts),
                median_cut=round(statistics.median(cuts), 4) if cuts else None,
                median_retention=round(statistics.median(r for r, _ in kept), 4) if kept else None,
                worst_retention=round(worst[0], 4) if worst else None,
                worst_session=worst[1] if worst else None,
            )
        )
    return figures
