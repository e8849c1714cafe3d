"""The live board: session summaries plus policy and a clock -> display rows.

Pure: the dashboard, `detect` and `watch` all build rows here, so they agree by construction.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .limits import (
    BURN_MIN_SAMPLES,
    BURN_RECENT_MIN_SAMPLES,
    BURN_RECENT_SECS,
    BURN_WINDOW_SECS,
    DEFAULT_BAND_ALERT_PCT,
    DEFAULT_BAND_WARN_PCT,
    DEFAULT_FLOOR_TOKENS,
    DEFAULT_TRIGGER_TOKENS,
    HOT_SECS,
)
from .model import ContextState, Provider, SessionSummary, UsageSample
from .sanitize import one_line
from .status import Status, status_of
from .thresholds import trigger_cap


@dataclass(frozen=True, slots=True)
class BoardPolicy:
    trigger_tokens: int = DEFAULT_TRIGGER_TOKENS
    floor_tokens: int = DEFAULT_FLOOR_TOKENS
    warn_pct: int = DEFAULT_BAND_WARN_PCT
    alert_pct: int = DEFAULT_BAND_ALERT_PCT
    hot_secs: float = HOT_SECS
    session_trigger: Callable[[SessionSummary], int] | None = field(default=None, compare=False)
    """The resolved policy's effective trigger for one session (config layers), when the
    host has one; `trigger_tokens` otherwise."""

    def trigger_for(self, summary: SessionSummary) -> int:
        if self.session_trigger is not None:
            return self.session_trigger(summary)
        return self.trigger_tokens


class Band(StrEnum):
    OK = "ok"
    WARN = "warn"
    ALERT = "alert"
    UNKNOWN = "unknown"


class SortKey(StrEnum):
    ACTIVITY = "activity"
    OCCUPANCY = "occupancy"
    ETA = "eta"
    TOKENS = "tokens"
    PROJECT = "project"
    ATTENTION = "attention"

    def next(self) -> SortKey:
        members = list(SortKey)
        return members[(members.index(self) + 1) % len(members)]


@dataclass(frozen=True, slots=True)
class BoardRow:
    key: str
    summary: SessionSummary
    project: str
    occupancy: float | None
    band: Band
    trigger_tokens: int
    headroom_tokens: int | None
    burn_per_min: float | None
    eta_secs: float | None
    live: bool
    age_secs: float
    over_trigger: bool
    status: Status = Status.IDLE

    @property
    def trigger_share(self) -> float | None:
        """Where the trigger sits on the occupancy bar (0..1), when the window is known."""
        window = self.summary.context_window
        return min(1.0, self.trigger_tokens / window) if window else None


def effective_trigger(policy: BoardPolicy, summary: SessionSummary) -> int:
    """The session's trigger, lowered to fire before its client would compact on its own."""
    trigger = policy.trigger_for(summary)
    return max(1, min(trigger, trigger_cap(summary.provider, summary.context_window)))


def project_name(summary: SessionSummary) -> str:
    """The project a session works in, as the board names it (safe to show: a transcript's
    cwd is its text)."""
    if summary.cwd:
        name = posixpath.basename(summary.cwd.rstrip("/\\").replace("\\", "/"))
        if name:
            return one_line(name)
    parent = posixpath.basename(posixpath.dirname(summary.path))
    return one_line(parent.rsplit("-", 1)[-1] or parent or "?")


def band_of(occupancy: float | None, policy: BoardPolicy) -> Band:
    if occupancy is None:
        return Band.UNKNOWN
    pct = occupancy * 100
    if pct >= policy.alert_pct:
        return Band.ALERT
    if pct >= policy.warn_pct:
        return Band.WARN
    return Band.OK


def burn_rate(history: Sequence[UsageSample]) -> float | None:
    """Tokens per minute over the recent rising run of usage (a compaction restarts it), or
    over its last BURN_RECENT_SECS when the session is filling faster there."""
    timed = [(s.ts, s.context_tokens) for s in history if s.ts is not None]
    if len(timed) < BURN_MIN_SAMPLES:
        return None
    last_ts = timed[-1][0]
    start = len(timed) - 1
    while start > 0:
        prev_ts, prev_tokens = timed[start - 1]
        if last_ts - prev_ts > BURN_WINDOW_SECS or prev_tokens > timed[start][1]:
            break
        start -= 1
    if start == len(timed) - 1:
        return None
    recent = start
    while last_ts - timed[recent][0] > BURN_RECENT_SECS:
        recent += 1
    rates = [_rate(timed[start], timed[-1])]
    if len(timed) - recent >= BURN_RECENT_MIN_SAMPLES:
        rates.append(_rate(timed[recent], timed[-1]))
    known = [rate for rate in rates if rate is not None]
    return max(known) if known else None


def _rate(first: tuple[float, int], last: tuple[float, int]) -> float | None:
    span = last[0] - first[0]
    return max(0.0, (last[1] - first[1]) * 60.0 / span) if span > 0 else None


def build_row(summary: SessionSummary, policy: BoardPolicy, now: float) -> BoardRow:
    trigger = effective_trigger(policy, summary)
    tokens = summary.context_tokens
    age = max(0.0, now - summary.mtime)
    # A fork not yet resumed carries its source's date: nobody is writing it, nor waiting
    # in it, and its source already counts over the trigger.
    unresumed = summary.fork_as_published
    live = age <= policy.hot_secs and not unresumed
    occupancy = summary.occupancy
    headroom = None if tokens is None else trigger - tokens
    burn = (
        burn_rate(summary.usage_history)
        if summary.context_state is not ContextState.RESET
        else None
    )
    over = tokens is not None and tokens >= trigger and not unresumed
    eta: float | None = None
    if live and burn and headroom is not None and headroom > 0:
        eta = headroom / burn * 60.0
    return BoardRow(
        key=summary.path,
        summary=summary,
        project=project_name(summary),
        occupancy=occupancy,
        # Over its trigger is past the line that matters, whatever share of a 1M window.
        band=Band.ALERT if over else band_of(occupancy, policy),
        trigger_tokens=trigger,
        headroom_tokens=headroom,
        burn_per_min=burn,
        eta_secs=eta,
        live=live,
        age_secs=age,
        over_trigger=over,
        status=Status.IDLE if unresumed else status_of(summary.turn, age, live),
    )


PolicyFor = Callable[[SessionSummary], BoardPolicy]


def build_board(
    summaries: Iterable[SessionSummary], policy: BoardPolicy | PolicyFor, now: float
) -> list[BoardRow]:
    resolve: PolicyFor = policy if callable(policy) else (lambda _s: policy)
    return [build_row(s, resolve(s), now) for s in summaries]


COLUMN_SORTS: dict[str, SortKey] = {
    "state": SortKey.ATTENTION,
    "status": SortKey.ATTENTION,
    "project": SortKey.PROJECT,
    "used": SortKey.TOKENS,
    "occupancy": SortKey.OCCUPANCY,
    "eta": SortKey.ETA,
    "last": SortKey.ACTIVITY,
}
"""The order a click on a board column's header picks (the columns not listed have none)."""


def sort_rows(rows: Iterable[BoardRow], key: SortKey, *, reverse: bool = False) -> list[BoardRow]:
    """Deterministic orders; ties always fall back to the path. `reverse` turns the whole
    order round (the same rows, last first)."""
    ordered = _sorted(rows, key)
    return ordered[::-1] if reverse else ordered


def _sorted(rows: Iterable[BoardRow], key: SortKey) -> list[BoardRow]:
    if key is SortKey.ACTIVITY:
        return sorted(rows, key=_activity)
    if key is SortKey.OCCUPANCY:
        return sorted(
            rows, key=lambda r: (-(r.occupancy if r.occupancy is not None else -1), r.key)
        )
    if key is SortKey.ATTENTION:  # waiting first, then the most recently written
        return sorted(rows, key=lambda r: (r.status.rank, -r.summary.mtime, r.key))
    if key is SortKey.TOKENS:
        return sorted(rows, key=lambda r: (-(r.summary.context_tokens or -1), r.key))
    if key is SortKey.ETA:
        inf = float("inf")
        return sorted(
            rows,
            key=lambda r: (
                not r.over_trigger,
                r.eta_secs if r.eta_secs is not None else inf,
                -(r.occupancy or 0),
                r.key,
            ),
        )
    return sorted(rows, key=lambda r: (r.project.lower(), -r.summary.mtime, r.key))


def _activity(row: BoardRow) -> tuple[bool, float, bool, str]:
    """Live sessions first, newest started first; then the others, newest written first (a
    fork not yet resumed after its source, whose date it has). Two agents writing every
    second would swap places on every tick by their last write."""
    summary = row.summary
    if row.live:
        started = summary.first_ts if summary.first_ts is not None else summary.mtime
        return (False, -started, False, row.key)
    return (True, -summary.mtime, summary.fork_as_published, row.key)


def filter_rows(
    rows: Iterable[BoardRow],
    *,
    provider: Provider | None = None,
    live_only: bool = False,
    text: str = "",
) -> list[BoardRow]:
    needle = text.strip().lower()
    out = []
    for row in rows:
        if provider is not None and row.summary.provider is not provider:
            continue
        if live_only and not row.live:
            continue
        if needle:
            s = row.summary
            hay = " ".join(x for x in (row.project, s.title, s.session_id, s.model, s.cwd) if x)
            if needle not in hay.lower():
                continue
        out.append(row)
    return out


def crossed_trigger(before: BoardRow | None, after: BoardRow) -> bool:
    """True when an update takes a session over its trigger (for a one-off alert)."""
    return after.over_trigger and (before is None or not before.over_trigger)
