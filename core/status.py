"""A session's status on the board: is it working, waiting for its user, maybe waiting for an
approval, idle, or over. Pure: from who is up at the end of its transcript (TurnState) and
how long ago it was written."""

from __future__ import annotations

from enum import StrEnum

from .limits import (
    STATUS_ENDED_SECS,
    STATUS_QUIET_SECS,
    STATUS_STALL_SECS,
    STATUS_WAITING_SECS,
)
from .model import TurnState


class Status(StrEnum):
    """Closed vocabulary, in attention order (what needs the user first)."""

    WAITING = "waiting"
    """The turn ended: the agent waits for its user."""
    APPROVAL = "approval?"
    """A tool call has had no result nor any write for a while: maybe it waits for an
    approval (maybe: a long command is quiet too)."""
    WORKING = "working"
    IDLE = "idle"
    ENDED = "ended"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {status: rank for rank, status in enumerate(Status)}


def status_of(turn: TurnState | None, age_secs: float, live: bool) -> Status:
    """The status of a session whose newest record says `turn`, written `age_secs` ago
    (`live`: within the board's live window)."""
    if age_secs >= STATUS_ENDED_SECS:
        return Status.ENDED
    if turn is TurnState.TURN_ENDED:
        return Status.WAITING if age_secs <= STATUS_WAITING_SECS else Status.IDLE
    if turn is TurnState.TOOL_PENDING:
        if age_secs < STATUS_QUIET_SECS and live:
            return Status.WORKING
        return Status.APPROVAL if age_secs <= STATUS_WAITING_SECS else Status.IDLE
    if turn is TurnState.RESPONDING:
        return Status.WORKING if live and age_secs < STATUS_STALL_SECS else Status.IDLE
    return Status.WORKING if live else Status.IDLE


def status_limits(hot_secs: float) -> list[float]:
    """The ages at which status_of, or the board's live flag (`hot_secs`), may read
    otherwise, in order: between two of them, a session's status holds."""
    limits = {
        STATUS_QUIET_SECS,
        hot_secs,
        STATUS_STALL_SECS,
        STATUS_WAITING_SECS,
        STATUS_ENDED_SECS,
    }
    return sorted(limits)


def started_waiting(before: Status | None, after: Status) -> bool:
    """True when an update makes a session wait for its user (for a one-off alert)."""
    waits = (Status.WAITING, Status.APPROVAL)
    return after in waits and before is not None and before not in waits
