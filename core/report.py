"""Machine outputs of the board (`detect --json`): stable field names, only ever gaining.

Typed dicts, as orjson writes them: a status line's `detect` builds two thousand."""

from __future__ import annotations

from typing import TypedDict

from .board import BoardRow


class SubagentOut(TypedDict):
    agent_id: str
    path: str
    context_tokens: int | None
    records: int
    bytes: int


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
    )
