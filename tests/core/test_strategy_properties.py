"""Properties of every strategy over generated transcripts and policies (hypothesis)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.core.admission import admit, protected_lines
from gobtui.core.edits import DigestBlock, ElideEdit
from gobtui.core.model import Transcript
from gobtui.core.policy import PolicyConfig, QuotaPressure
from gobtui.core.strategies import STRATEGIES, EvalContext, evaluate_with, plan_for
from tests.builders.items import transcripts


@st.composite
def policies(draw: st.DrawFn, context: int = 60_000) -> PolicyConfig:
    """Policies whose trigger mostly lies under `context`, so strategies have work to do."""
    trigger = draw(st.integers(1, max(1, context + context // 10)))
    return PolicyConfig(
        trigger_tokens=trigger,
        floor_tokens=draw(st.integers(0, trigger - 1)),
        keep_recent_tool_outputs=draw(st.integers(0, 4)),
        min_savings_tokens=draw(st.integers(0, 2_000)),
        keep_recent_turns=draw(st.integers(0, 4)),
        result_max_bytes=draw(st.integers(0, 6_000)),
        keep_score_threshold=draw(st.one_of(st.none(), st.floats(0.0, 1.0))),
        quota_pressure=draw(st.sampled_from(QuotaPressure)),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), st.data(), st.booleans())
def test_every_plan_is_admitted_and_sound(
    transcript: Transcript, data: st.DataObject, live: bool
) -> None:
    policy = data.draw(policies(transcript.context_tokens()))
    protected = protected_lines(transcript, policy.keep_recent_tool_outputs)
    below = transcript.context_tokens() < policy.effective_trigger()
    for strategy_id, strategy in STRATEGIES.items():
        plan = evaluate_with(strategy, transcript, policy, EvalContext(live=live))
        if plan is None:
            continue
        assert not below, strategy_id
        assert plan.strategy == strategy_id
        verdict = admit(plan, transcript, policy)
        assert verdict.admitted, (strategy_id, verdict.message)
        assert not set(plan.elided_lines) & protected
        for edit in plan.edits:
            if isinstance(edit, ElideEdit):
                lines = edit.line_indexes
                assert all(a < b for a, b in pairwise(lines))
        assert plan.context_tokens_after <= plan.context_tokens_before
        assert plan.context_tokens_before == transcript.context_tokens()
        digest = plan.digest
        if digest is not None:
            assert DigestBlock.parse(digest.render()) == digest
            assert digest.covers_items == len(plan.elided_lines)


@settings(max_examples=60, deadline=None)
@given(transcripts(), st.data())
def test_plan_for_is_a_plan_or_a_reasoned_no_plan(
    transcript: Transcript, data: st.DataObject
) -> None:
    policy = data.draw(policies(transcript.context_tokens()))
    for strategy_id in STRATEGIES:
        result = plan_for(strategy_id, transcript, policy)
        if hasattr(result, "reason_code"):
            assert result.context_tokens_before == transcript.context_tokens()
        else:
            assert policy.accepts_savings(result.context_tokens_before, result.context_tokens_after)
