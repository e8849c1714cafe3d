"""Compaction policy: thresholds, presets, the adaptive tuner and `policy-check`.

Numbers and reason codes follow the reference (gobstopper `policy.rs`, README). Pure: the
caller supplies the context window, recent compactions and whether the session is live.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .limits import (
    MAX_INTERVAL_SECS,
    MAX_KEEP_RECENT,
    MAX_POLICY_TOKENS,
    MAX_RESULT_BYTES,
    TUNE_HIGH_ELIDABLE_FACTOR,
    TUNE_HIGH_ELIDABLE_SHARE,
    TUNE_LOW_YIELD_FACTOR,
    TUNE_LOW_YIELD_MIN,
    TUNE_LOW_YIELD_SHARE,
    TUNE_MAX_TRIGGER_FACTOR,
    TUNE_MIN_FLOOR,
    TUNE_MIN_TRIGGER,
    TUNE_RECENT_MAX,
    TUNE_WINDOW_FRACTION,
)
from .model import Provider
from .thresholds import client_compact_threshold, trigger_cap


def round_half_up(value: float) -> int:
    """Rust's f64::round for non-negative values (Python's round() rounds half to even)."""
    return math.floor(value + 0.5)


class QuotaPressure(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"

    @property
    def factor(self) -> float:
        """High pressure compacts earlier (x0.7), low pressure later (x1.15)."""
        return {"low": 1.15, "normal": 1.0, "high": 0.7}[self.value]


_Tokens = Field(ge=0, le=MAX_POLICY_TOKENS)
_Secs = Field(ge=0, le=MAX_INTERVAL_SECS)


class PolicyConfig(BaseModel):
    """When to compact and how far down. Defaults are the reference's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trigger_tokens: int = Field(default=250_000, ge=1, le=MAX_POLICY_TOKENS)
    floor_tokens: int = Field(default=40_000, ge=0, le=MAX_POLICY_TOKENS)
    keep_recent_tool_outputs: int = Field(default=8, ge=0, le=MAX_KEEP_RECENT)
    keep_score_threshold: float | None = None
    min_interval_secs: int = Field(default=300, ge=0, le=MAX_INTERVAL_SECS)
    apply_hold_secs: int = Field(default=1_800, ge=0, le=MAX_INTERVAL_SECS)
    min_savings_tokens: int = Field(default=4_096, ge=0, le=MAX_POLICY_TOKENS)
    quota_pressure: QuotaPressure = QuotaPressure.NORMAL
    adaptive: bool = False
    keep_recent_turns: int = Field(default=3, ge=0, le=MAX_KEEP_RECENT)
    result_max_bytes: int = Field(default=500, ge=0, le=MAX_RESULT_BYTES)
    drop_old_reasoning: bool = False
    """Codex: a fork may leave the encrypted reasoning of earlier turns out of its history
    (the provider counts only its summary, but the client sends it all back and reckons it
    when it decides to compact). Off by default: the real Codex CLI resumes such forks, but
    no offline test can show what the provider's API makes of a history without them."""
    drop_old_images: bool = True
    """Images and documents in older prompts and tool results are candidates: a fork holds
    a line naming each (kind, size, dimensions) instead."""
    drop_old_thinking: bool = True
    """Claude: the thinking of finished turns is a candidate of its own (the provider keeps
    it all in the context: Claude Code asks clear_thinking to keep all). Whatever this says,
    a fork leaves out the thinking after its first change (core.thinking)."""

    @field_validator("keep_score_threshold")
    @classmethod
    def _finite_unit(cls, value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError("keep_score_threshold must be finite and between 0.0 and 1.0")
        return value

    @model_validator(mode="after")
    def _floor_below_trigger(self) -> Self:
        if self.floor_tokens >= self.trigger_tokens:
            raise ValueError("floor_tokens must be below trigger_tokens")
        return self

    def effective_trigger(self) -> int:
        """The trigger scaled by quota pressure, rounded, at least 1."""
        return max(1, round_half_up(self.trigger_tokens * self.quota_pressure.factor))

    def fork_ceiling(self, provider: Provider, model_window: int | None) -> int:
        """The context a fork should end under: below the trigger (else it is flagged again)
        and below the client's own compaction threshold (else its summary replaces ours)."""
        return min(self.effective_trigger(), client_compact_threshold(provider, model_window))

    def reasoning_candidates(self, provider: Provider) -> bool:
        """Whether the provider's reasoning items of earlier turns are candidates."""
        return self.drop_old_thinking if provider.traits.thinking else self.drop_old_reasoning

    def accepts_savings(self, before: int, after: int) -> bool:
        """The central minimum-savings gate."""
        return max(0, before - after) >= self.min_savings_tokens


class Preset(BaseModel):
    """A named strategy plus the policy values it pins."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    strategy: str
    description: str
    policy: PolicyConfig


# Built-in presets. The values are the reference's examples (deep-work elide 150k/20k, chatty
# structured 180k, compact-window compacted 120k/20k, cliff 3 turns / 500 bytes / 0 protected);
# each preset's description says what it is for. A config file may override any of them.
PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            name="deep-work",
            strategy="elide",
            description=(
                "Long focused sessions: compact at 150k down to 20k by stubbing the oldest "
                "stale tool outputs, so the working set stays small and the prefix cache warm."
            ),
            policy=PolicyConfig(trigger_tokens=150_000, floor_tokens=20_000),
        ),
        Preset(
            name="chatty",
            strategy="structured",
            description=(
                "Many short exchanges: at 180k mask every tool output older than the newest "
                "24 records and leave a metadata state card; conversation text is kept."
            ),
            policy=PolicyConfig(trigger_tokens=180_000),
        ),
        Preset(
            name="compact-window",
            strategy="compacted",
            description=(
                "Small context windows: compact at 120k down to 20k and inject the state card "
                "in place of what was elided."
            ),
            policy=PolicyConfig(trigger_tokens=120_000, floor_tokens=20_000),
        ),
        Preset(
            name="cliff",
            strategy="cliff",
            description=(
                "Keep the newest 3 turns whole; between the first turn and them drop every "
                "tool result over 500 bytes. No protected outputs beyond those turns."
            ),
            policy=PolicyConfig(
                keep_recent_turns=3, result_max_bytes=500, keep_recent_tool_outputs=0
            ),
        ),
    )
}


def capped_to_window(policy: PolicyConfig, provider: Provider, window: int | None) -> PolicyConfig:
    """The policy with its trigger lowered to fire before the client compacts by itself
    (trigger_cap), as the board marks it; the floor stays below the trigger."""
    cap = trigger_cap(provider, window)
    if policy.trigger_tokens <= cap:
        return policy
    floor = policy.floor_tokens if policy.floor_tokens < cap else cap // 2
    return policy.model_copy(update={"trigger_tokens": cap, "floor_tokens": floor})


# Adaptive tuner -----------------------------------------------------------------------------


class TuneReason(StrEnum):
    """Why the tuner moved a threshold. Closed vocabulary (reference `tune`)."""

    TRIGGER_CAPPED_TO_WINDOW_FRACTION = "trigger_capped_to_window_fraction"
    TRIGGER_RAISED_LOW_YIELD = "trigger_raised_low_yield"
    TRIGGER_LOWERED_HIGH_ELIDABLE = "trigger_lowered_high_elidable"
    FLOOR_CAPPED_TO_TRIGGER_HALF = "floor_capped_to_trigger_half"

    @property
    def words(self) -> str:
        """What the reason means, for a person (plan, the preview, explain, tune)."""
        return _TUNE_REASON_WORDS[self]


_TUNE_REASON_WORDS: dict[TuneReason, str] = {
    TuneReason.TRIGGER_CAPPED_TO_WINDOW_FRACTION: (
        f"trigger capped to {TUNE_WINDOW_FRACTION:.0%} of the context window"
    ),
    TuneReason.TRIGGER_RAISED_LOW_YIELD: (
        f"trigger raised: the last compactions each reclaimed under {TUNE_LOW_YIELD_SHARE:.0%} "
        "of the context, so compact less often"
    ),
    TuneReason.TRIGGER_LOWERED_HIGH_ELIDABLE: (
        f"trigger lowered: over {TUNE_HIGH_ELIDABLE_SHARE:.0%} of the context is old tool "
        "output, so compacting earlier is cheap"
    ),
    TuneReason.FLOOR_CAPPED_TO_TRIGGER_HALF: (
        "floor capped to half the trigger, so each compaction reclaims something"
    ),
}


class Tuned(BaseModel):
    """Derived trigger and floor (tokens) and why they moved."""

    model_config = ConfigDict(frozen=True)

    trigger: int
    floor: int
    reasons: list[TuneReason] = Field(default_factory=list)

    def apply(self, policy: PolicyConfig) -> PolicyConfig:
        """The policy with the tuned trigger and floor."""
        return policy.model_copy(
            update={"trigger_tokens": self.trigger, "floor_tokens": self.floor}
        )


def tune(
    policy: PolicyConfig,
    window: int | None,
    context_tokens: int,
    elidable_tokens: int | None,
    recent: list[tuple[int, int]],
) -> Tuned:
    """Derive trigger and floor for one session; always from the configured base.

    `recent` holds (before, reclaimed) of this session's applied compactions, oldest first; the
    newest three count. `elidable_tokens` None skips the elidable-share step (the watch
    pre-check does not parse items).
    """
    base = policy.trigger_tokens
    trigger = base
    floor = policy.floor_tokens
    reasons: list[TuneReason] = []

    # 1. A trigger far up a small window never fires before the provider's own compaction.
    if window:
        cap = round_half_up(TUNE_WINDOW_FRACTION * window)
        if trigger > cap:
            trigger = max(cap, TUNE_MIN_TRIGGER)
            reasons.append(TuneReason.TRIGGER_CAPPED_TO_WINDOW_FRACTION)

    # 2. Compactions that reclaim little cost a cycle each: compact less often.
    last = recent[-TUNE_RECENT_MAX:]
    if len(last) >= TUNE_LOW_YIELD_MIN and all(
        reclaimed < TUNE_LOW_YIELD_SHARE * before for before, reclaimed in last
    ):
        trigger = min(
            round_half_up(trigger * TUNE_LOW_YIELD_FACTOR), TUNE_MAX_TRIGGER_FACTOR * base
        )
        reasons.append(TuneReason.TRIGGER_RAISED_LOW_YIELD)

    # 3. Mostly reclaimable tool output: compacting earlier is cheap and pays.
    if elidable_tokens is not None and elidable_tokens > TUNE_HIGH_ELIDABLE_SHARE * max(
        0, context_tokens
    ):
        trigger = round_half_up(trigger * TUNE_HIGH_ELIDABLE_FACTOR)
        reasons.append(TuneReason.TRIGGER_LOWERED_HIGH_ELIDABLE)

    # 4. Each cycle must reclaim something: the floor stays at most half the trigger.
    if floor > trigger / 2:
        floor = max(round_half_up(trigger / 2), TUNE_MIN_FLOOR)
        reasons.append(TuneReason.FLOOR_CAPPED_TO_TRIGGER_HALF)

    # 5. Guard rails.
    trigger = min(max(trigger, TUNE_MIN_TRIGGER, 2 * floor), MAX_POLICY_TOKENS)
    floor = min(max(floor, TUNE_MIN_FLOOR), trigger // 2)
    return Tuned(trigger=trigger, floor=floor, reasons=reasons)


def resolve(
    policy: PolicyConfig,
    window: int | None,
    context_tokens: int,
    elidable_tokens: int | None,
    recent: list[tuple[int, int]],
) -> tuple[PolicyConfig, list[TuneReason]]:
    """The policy a decision uses: tuned when `adaptive`, else as configured."""
    if not policy.adaptive:
        return policy, []
    tuned = tune(policy, window, context_tokens, elidable_tokens, recent)
    return tuned.apply(policy), list(tuned.reasons)


# policy-check ---------------------------------------------------------------------------------


class NativeProvider(StrEnum):
    """A client gobtui has a numeric policy for and nothing else: it never reads or edits
    the client's session store, so the only action is the client's own compaction."""

    DEVIN = "devin"


PolicyProvider = Provider | NativeProvider
"""Whom `policy-check` can answer for: a provider gobtui reads, or a native-only one."""

PROVIDER_CONTROLS: dict[PolicyProvider, str] = {
    Provider.CODEX: "thread/compact/start",
    Provider.CLAUDE: "/compact",
    NativeProvider.DEVIN: "/compact",
}
"""What the session owner invokes to compact a live session (app-server v2 / slash command)."""

_POLICY_PROVIDER_NAMES: dict[str, PolicyProvider] = {
    **{p.value: p for p in Provider},
    **{p.value: p for p in NativeProvider},
    "claude_code": Provider.CLAUDE,  # the reference's spelling (its config table's too)
    "claude-code": Provider.CLAUDE,
}
POLICY_PROVIDER_NAMES: tuple[str, ...] = tuple(_POLICY_PROVIDER_NAMES)


def policy_provider(name: str) -> PolicyProvider | None:
    """The provider a name means (gobtui's or the reference's spelling), or None."""
    return _POLICY_PROVIDER_NAMES.get(name)


class PolicyAction(StrEnum):
    """The decision of `policy-check` (the telemetry `action` vocabulary)."""

    NONE = "none"
    PROVIDER_COMPACT = "provider_compact"
    TRANSCRIPT_COMPACT = "transcript_compact"


class PolicyDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: PolicyAction
    strategy: str | None
    control: str | None
    context_tokens: int
    effective_trigger_tokens: int
    floor_tokens: int
    tune_reasons: list[TuneReason] = Field(default_factory=list)
    """What the adaptive tuner moved in the trigger and floor above (nothing when it is off)."""


def policy_check(
    provider: PolicyProvider,
    context_tokens: int,
    session_active: bool,
    policy: PolicyConfig,
    strategy: str = "auto",
) -> PolicyDecision:
    """What an orchestrator should do with a session at `context_tokens`.

    Below the effective trigger: nothing. A live session is owned by its provider runtime, so
    it gets the provider's own compaction control (`sawtooth`). An idle one gets the
    configured transcript strategy, which prepares a fork; a native-only provider's session
    (Devin) always gets its own control, since gobtui never touches its store.
    """
    trigger = policy.effective_trigger()
    common: dict[str, Any] = {
        "context_tokens": max(0, context_tokens),
        "effective_trigger_tokens": trigger,
        "floor_tokens": policy.floor_tokens,
    }
    if context_tokens < trigger:
        return PolicyDecision(action=PolicyAction.NONE, strategy=None, control=None, **common)
    if session_active or isinstance(provider, NativeProvider):
        return PolicyDecision(
            action=PolicyAction.PROVIDER_COMPACT,
            strategy="sawtooth",
            control=PROVIDER_CONTROLS[provider],
            **common,
        )
    return PolicyDecision(
        action=PolicyAction.TRANSCRIPT_COMPACT, strategy=strategy, control=None, **common
    )
