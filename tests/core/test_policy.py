"""core.policy: defaults, validation, quota pressure, presets, the tuner and policy-check."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gobtui.core.model import Provider
from gobtui.core.policy import (
    PRESETS,
    NativeProvider,
    PolicyAction,
    PolicyConfig,
    QuotaPressure,
    TuneReason,
    policy_check,
    policy_provider,
    resolve,
    tune,
)


def test_defaults_are_the_reference() -> None:
    p = PolicyConfig()
    assert (p.trigger_tokens, p.floor_tokens, p.keep_recent_tool_outputs) == (250_000, 40_000, 8)
    assert (p.min_interval_secs, p.apply_hold_secs, p.min_savings_tokens) == (300, 1800, 4096)
    assert p.keep_score_threshold is None
    assert p.quota_pressure is QuotaPressure.NORMAL
    assert not p.adaptive
    assert (p.keep_recent_turns, p.result_max_bytes) == (3, 500)


@pytest.mark.parametrize(
    "bad",
    [
        {"trigger_tokens": -1},
        {"trigger_tokens": 10_000_001},
        {"floor_tokens": -5},
        {"trigger_tokens": 1000, "floor_tokens": 1000},
        {"keep_recent_tool_outputs": -1},
        {"min_interval_secs": 86_401},
        {"keep_score_threshold": 1.5},
        {"keep_score_threshold": float("nan")},
        {"quota_pressure": "extreme"},
        {"unknown_key": 1},
    ],
)
def test_validation(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        PolicyConfig.model_validate(bad)


@pytest.mark.parametrize(
    ("pressure", "expected"), [("high", 175_000), ("normal", 250_000), ("low", 287_500)]
)
def test_effective_trigger(pressure: str, expected: int) -> None:
    assert PolicyConfig.model_validate({"quota_pressure": pressure}).effective_trigger() == expected


def test_effective_trigger_minimum_one() -> None:
    assert (
        PolicyConfig(
            trigger_tokens=1, floor_tokens=0, quota_pressure=QuotaPressure.HIGH
        ).effective_trigger()
        == 1
    )


def test_accepts_savings() -> None:
    p = PolicyConfig()
    assert p.accepts_savings(10_000, 10_000 - 4096)
    assert not p.accepts_savings(10_000, 10_000 - 4095)
    assert not p.accepts_savings(10, 20)


def test_presets() -> None:
    assert set(PRESETS) == {"deep-work", "chatty", "compact-window", "cliff"}
    deep = PRESETS["deep-work"]
    assert (deep.strategy, deep.policy.trigger_tokens, deep.policy.floor_tokens) == (
        "elide",
        150_000,
        20_000,
    )
    assert PRESETS["chatty"].strategy == "structured"
    assert PRESETS["chatty"].policy.trigger_tokens == 180_000
    assert PRESETS["compact-window"].policy.floor_tokens == 20_000
    cliff = PRESETS["cliff"].policy
    assert (cliff.keep_recent_turns, cliff.result_max_bytes, cliff.keep_recent_tool_outputs) == (
        3,
        500,
        0,
    )


def test_tune_window_cap() -> None:
    tuned = tune(PolicyConfig(), 200_000, 0, None, [])
    assert (tuned.trigger, tuned.floor) == (50_000, 25_000)
    assert tuned.reasons == [
        TuneReason.TRIGGER_CAPPED_TO_WINDOW_FRACTION,
        TuneReason.FLOOR_CAPPED_TO_TRIGGER_HALF,
    ]


def test_tune_low_yield() -> None:
    tuned = tune(PolicyConfig(), None, 0, None, [(300_000, 1_000), (280_000, 20_000)])
    assert tuned.trigger == 375_000
    assert tuned.reasons == [TuneReason.TRIGGER_RAISED_LOW_YIELD]
    # one low-yield compaction, or one good one among the newest three, is not enough
    assert tune(PolicyConfig(), None, 0, None, [(300_000, 1_000)]).reasons == []
    good = [(300_000, 1_000), (300_000, 1_000), (300_000, 200_000)]
    assert tune(PolicyConfig(), None, 0, None, good).reasons == []


def test_tune_low_yield_bounded_at_twice_base() -> None:
    base = PolicyConfig(trigger_tokens=250_000)
    tuned = tune(base, None, 0, None, [(1, 0), (1, 0), (1, 0)])
    assert tuned.trigger <= 2 * base.trigger_tokens


def test_tune_high_elidable() -> None:
    tuned = tune(PolicyConfig(), None, 300_000, 200_000, [])
    assert tuned.trigger == 200_000
    assert tuned.reasons == [TuneReason.TRIGGER_LOWERED_HIGH_ELIDABLE]
    assert tune(PolicyConfig(), None, 300_000, None, []).reasons == []


@given(
    st.integers(20_000, 1_000_000),
    st.integers(0, 19_999),
    st.one_of(st.none(), st.integers(1, 2_000_000)),
    st.integers(0, 2_000_000),
    st.one_of(st.none(), st.integers(0, 2_000_000)),
    st.lists(st.tuples(st.integers(1, 10**6), st.integers(0, 10**6)), max_size=5),
)
def test_tune_idempotent_and_bounded(
    trigger: int,
    floor: int,
    window: int | None,
    context: int,
    elidable: int | None,
    recent: list[tuple[int, int]],
) -> None:
    policy = PolicyConfig(trigger_tokens=trigger, floor_tokens=floor)
    first = tune(policy, window, context, elidable, recent)
    assert tune(policy, window, context, elidable, recent) == first
    assert policy == PolicyConfig(trigger_tokens=trigger, floor_tokens=floor)
    assert first.trigger >= 10_000
    assert 1_000 <= first.floor <= first.trigger // 2
    assert first.trigger <= 2 * trigger or first.trigger == 2 * first.floor
    first.apply(policy)  # the tuned values always make a valid policy


def test_resolve_only_when_adaptive() -> None:
    assert resolve(PolicyConfig(), 200_000, 0, None, []) == (PolicyConfig(), [])
    resolved, reasons = resolve(PolicyConfig(adaptive=True), 200_000, 0, None, [])
    assert (resolved.trigger_tokens, resolved.floor_tokens) == (50_000, 25_000)
    assert reasons


def test_policy_check() -> None:
    p = PolicyConfig()
    below = policy_check(Provider.CODEX, 100_000, True, p)
    assert (below.action, below.strategy, below.control) == (PolicyAction.NONE, None, None)
    live = policy_check(Provider.CODEX, 300_000, True, p)
    assert (live.action, live.strategy, live.control) == (
        PolicyAction.PROVIDER_COMPACT,
        "sawtooth",
        "thread/compact/start",
    )
    assert policy_check(Provider.CLAUDE, 300_000, True, p).control == "/compact"
    idle = policy_check(Provider.CLAUDE, 300_000, False, p, strategy="cache_aware")
    assert (idle.action, idle.strategy, idle.control) == (
        PolicyAction.TRANSCRIPT_COMPACT,
        "cache_aware",
        None,
    )
    high = PolicyConfig(quota_pressure=QuotaPressure.HIGH)
    assert (
        policy_check(Provider.CODEX, 180_000, False, high).action is PolicyAction.TRANSCRIPT_COMPACT
    )
    assert live.model_dump(mode="json")["action"] == "provider_compact"


@pytest.mark.parametrize("active", [True, False])
def test_devin_is_a_numeric_policy_answered_with_its_own_compact(active: bool) -> None:
    p = PolicyConfig(trigger_tokens=200_000)
    over = policy_check(NativeProvider.DEVIN, 200_000, active, p, strategy="elide")
    # Idle or live: gobtui never touches Devin's store, so no transcript strategy is offered.
    assert (over.action, over.strategy, over.control) == (
        PolicyAction.PROVIDER_COMPACT,
        "sawtooth",
        "/compact",
    )
    under = policy_check(NativeProvider.DEVIN, 199_999, active, p)
    assert (under.action, under.control) == (PolicyAction.NONE, None)


def test_provider_names_as_the_reference_spells_them() -> None:
    assert policy_provider("claude_code") is policy_provider("claude") is Provider.CLAUDE
    assert policy_provider("codex") is Provider.CODEX
    assert policy_provider("devin") is NativeProvider.DEVIN
    assert policy_provider("Devin") is None and policy_provider("gemini") is None


def test_capped_to_window_lowers_the_trigger_to_fire_before_the_client_compacts() -> None:
    from gobtui.core.policy import capped_to_window

    base = PolicyConfig()  # 250k / 40k
    claude, codex = Provider.CLAUDE, Provider.CODEX
    assert capped_to_window(base, claude, 1_000_000) is base  # the cap is 870,300
    capped = capped_to_window(base, claude, 200_000)  # Claude Code compacts at 167k
    assert (capped.trigger_tokens, capped.floor_tokens) == (150_300, 40_000)
    assert capped_to_window(base, claude, None) == capped  # a model without a known window
    lowered = capped_to_window(base, codex, 258_400)  # Codex at 244,800 (90 % of 272k)
    assert (lowered.trigger_tokens, lowered.floor_tokens) == (220_320, 40_000)
    tiny = capped_to_window(base, claude, 70_000)  # the floor would meet the trigger: halved
    assert (tiny.trigger_tokens, tiny.floor_tokens) == (33_300, 16_650)
