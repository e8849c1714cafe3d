"""Machine outputs of the board (`detect --json`): stable field names, only ever gaining.

Typed dicts, as orjson writes them: a status line's `detect` builds two thousand."""

from __future__ import annotations

from typing import TypedDict

from .board import BoardRow
from .model import Coverage, SessionSummary


class SubagentOut(TypedDict):
    agent_id: str
    path: str
    context_tokens: int | None
    records: int
    bytes: int


class LifetimeOut(TypedDict):
    input_tokens: int | None
    cache_creation_tokens: int | None
    cache_read_tokens: int | None
    output_tokens: int | None
    total_tokens: int
    partial: bool
    """Summed over the part of the file read (its head and tail), not all of it."""


class DetectRow(TypedDict):
    provider: str
    session_id: str
    path: str
    cwd: str | None
    model: str | None
    title: str | None
    context_tokens: int | None
    context_window: int | None
    occupancy: float | None
    context_state: str
    live: bool
    age_secs: int
    bytes: int
    records: int
    bad_lines: int
    subagents: list[SubagentOut]
    trigger_tokens: int
    over_trigger: bool
    burn_tokens_per_min: float | None
    eta_secs: int | None
    compactions: int
    coverage: str
    status: str
    """working, waiting, approval?, idle or ended (core.status)."""
    lifetime: LifetimeOut | None
    """Tokens of every response the session recorded, summed (core.model.SessionSummary)."""


def lifetime_of(summary: SessionSummary) -> LifetimeOut | None:
    life = summary.lifetime
    if life is None:
        return None
    # Codex counts cached input inside input_tokens; Claude apart from it.
    cached_apart = summary.provider.traits.cached_input_apart
    total = (life.input_tokens or 0) + (life.output_tokens or 0)
    if cached_apart:
        total += (life.cache_creation_tokens or 0) + (life.cache_read_tokens or 0)
    return LifetimeOut(
        input_tokens=life.input_tokens,
        cache_creation_tokens=life.cache_creation_tokens,
        cache_read_tokens=life.cache_read_tokens,
        output_tokens=life.output_tokens,
        total_tokens=total,
        # (Codex writes its own running total: the newest one is the whole session's)
        partial=cached_apart and summary.coverage is not Coverage.FULL,
    )


def detect_row(row: BoardRow) -> DetectRow:
    s = row.summary
    return DetectRow(
        provider=s.provider.value,
        session_id=s.session_id,
        path=s.path,
        cwd=s.cwd,
        model=s.model,
        title=s.title,
        context_tokens=s.context_tokens,
        context_window=s.context_window,
        occupancy=None if row.occupancy is None else round(row.occupancy, 4),
        context_state=s.context_state.value,
        live=row.live,
        age_secs=int(row.age_secs),
        bytes=s.bytes,
        records=s.records,
        bad_lines=s.bad_lines,
        subagents=[
            {
                "agent_id": a.agent_id,
                "path": a.path,
                "context_tokens": a.context_tokens,
                "records": a.records,
                "bytes": a.bytes,
            }
            for a in s.subagents
        ],
        trigger_tokens=row.trigger_tokens,
        over_trigger=row.over_trigger,
        burn_tokens_per_min=None if row.burn_per_min is None else round(row.burn_per_min, 1),
        eta_secs=None if row.eta_secs is None else int(row.eta_secs),
        compactions=len(s.compactions),
        coverage=s.coverage.value,
        status=row.status.value,
        lifetime=lifetime_of(s),
    )
