"""core.strategies.external: projecting an external proposal and its no-plan outcomes."""

from __future__ import annotations

from gobtui.core.admission import admit, protected_tail_start
from gobtui.core.edits import (
    EDITS_ADAPTER,
    CacheEditEdit,
    CompactionPlan,
    DigestBlock,
    Edit,
    ElideEdit,
    InjectDigestEdit,
    NoPlan,
    NoPlanReason,
    ProviderCompactEdit,
)
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies.external import plan_from_edits, project_after
from tests.builders.items import turns

POLICY = PolicyConfig(
    trigger_tokens=5_000, floor_tokens=4_000, keep_recent_tool_outputs=2, min_savings_tokens=0
)


def test_protected_tail_start() -> None:
    assert protected_tail_start(turns(10), 2) == 26
    assert protected_tail_start(turns(10), 0) is None


def test_projection() -> None:
    t = turns(10)
    assert project_after([ElideEdit(line_indexes=[2, 5])], t, POLICY) == 10_600 - 2 * 976
    card = DigestBlock(goal="g")
    with_card: list[Edit] = [ElideEdit(line_indexes=[2]), InjectDigestEdit(digest=card)]
    assert project_after(with_card, t, POLICY) == 10_600 - 976 + card.estimate_overhead()
    assert project_after([CacheEditEdit(tool_use_ids=["t0", "t1"])], t, POLICY) == (
        10_600 - 2 * 976
    )
    assert project_after([ProviderCompactEdit(control="/compact")], t, POLICY) == 4_000


def test_plan_from_edits_outcomes() -> None:
    t = turns(10)
    edits = EDITS_ADAPTER.validate_json('[{"op": "elide", "line_indexes": [2, 5, 8]}]')
    plan = plan_from_edits("external", edits, t, POLICY)
    assert isinstance(plan, CompactionPlan)
    assert plan.context_tokens_after == 10_600 - 3 * 976
    assert admit(plan, t, POLICY).admitted

    empty = plan_from_edits("external", [], t, POLICY)
    assert isinstance(empty, NoPlan) and empty.reason_code is NoPlanReason.EMPTY_EXTERNAL_EDITS

    card_only: list[Edit] = [InjectDigestEdit(digest=DigestBlock(goal="g"))]
    grows = plan_from_edits("external", card_only, t, POLICY)
    assert isinstance(grows, NoPlan)
    assert grows.reason_code is NoPlanReason.EXTERNAL_NONREDUCING_PLAN
    assert grows.projected_context_tokens_after is not None
    assert grows.projected_savings_tokens == 0

    greedy = POLICY.model_copy(update={"min_savings_tokens": 5_000})
    short = plan_from_edits("external", edits, t, greedy)
    assert isinstance(short, NoPlan)
    assert short.reason_code is NoPlanReason.MINIMUM_SAVINGS_NOT_MET
    assert short.projected_savings_tokens == 3 * 976

    protected = plan_from_edits("external", [ElideEdit(line_indexes=[29])], t, POLICY)
    assert isinstance(protected, CompactionPlan)
    assert not admit(protected, t, POLICY).admitted  # host admission binds external plans
