"""What `gobtui watch` decides for one session on one pass: the closed vocabulary of its
decisions and the gate before any planning (pure: the caller brings the clock's reading).

A live session is its provider's: watch only says which native control would compact it. An
idle one over its trigger gets a fork, unless one was published from it within the policy's
apply hold (the user may be about to resume it) or an attempt failed within min_interval (no
retry storm). A fork gobtui published that no client has resumed yet is left alone: compacting
it again would fork a fork nobody uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from .model import Provider
from .policy import PolicyConfig, TuneReason
from .watch_codes import WatchCode


class Gate(StrEnum):
    BELOW_TRIGGER = "below_trigger"
    PLAN = "plan"
    PROVIDER_COMPACT = WatchCode.PROVIDER_COMPACT.value
    HELD = WatchCode.HELD.value
    RETRY_WAIT = WatchCode.RETRY_WAIT.value
    UNRESUMED_FORK = WatchCode.UNRESUMED_FORK.value


@dataclass(frozen=True)
class SessionState:
    """What the gate reads about a session, beside its policy."""

    over_trigger: bool
    live: bool
    unresumed_fork: bool
    last_published_ts: float | None
    last_failed_ts: float | None


def gate(state: SessionState, policy: PolicyConfig, now: float) -> Gate:
    if not state.over_trigger:
        return Gate.BELOW_TRIGGER
    if state.live:
        return Gate.PROVIDER_COMPACT
    if state.unresumed_fork:
        return Gate.UNRESUMED_FORK
    if state.last_published_ts is not None and now - state.last_published_ts < (
        policy.apply_hold_secs
    ):
        return Gate.HELD
    if state.last_failed_ts is not None and now - state.last_failed_ts < policy.min_interval_secs:
        return Gate.RETRY_WAIT
    return Gate.PLAN


class WatchDecision(BaseModel):
    """One line of `gobtui watch` (its --json object). Ids, numbers and closed codes; the
    path and resume command of a fork it published."""

    ts: float
    provider: Provider
    session_id: str
    project: str
    decision: WatchCode
    context_tokens: int
    trigger_tokens: int
    strategy: str | None = None
    control: str | None = None
    context_tokens_after: int | None = None
    fork_session_id: str | None = None
    fork_path: str | None = None
    resume_command: str | None = None
    detail: str = ""
    tune_reasons: list[TuneReason] = []
    """What the adaptive tuner moved in the trigger this decision used (`trigger_tokens`)."""

    model_config = ConfigDict(frozen=True)

    def same_news(self, other: WatchDecision | None) -> bool:
        """Whether `other` (the last one reported for this session) said the same: a watch
        that repeats itself every pass buries the one line that matters."""
        return other is not None and (other.decision, other.strategy, other.fork_session_id) == (
            self.decision,
            self.strategy,
            self.fork_session_id,
        )
