"""core.edits: the Edit IR shapes, the state card's rendering and its exact round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gobtui.core.edits import (
    CARD_MARKER,
    EDITS_ADAPTER,
    CacheEditEdit,
    CompactionPlan,
    DigestBlock,
    ElideEdit,
    InjectDigestEdit,
    NoPlan,
    NoPlanReason,
    ProviderCompactEdit,
)
from gobtui.core.tokens import estimate_tokens


def full_card() -> DigestBlock:
    return DigestBlock(
        goal="fix the flaky test",
        summary="fix the flaky test",
        concepts=["bash", "read"],
        files_touched=["src/a.py"],
        decisions=["use orjson"],
        errors=["error: boom"],
        open_tasks=["todo: docs"],
        current_work="running tests",
        context="provider: claude",
        covers_items=3,
    )


def test_render_order_and_prefixes() -> None:
    assert full_card().render().split("\n") == [
        CARD_MARKER,
        "goal: fix the flaky test",
        "summary: fix the flaky test",
        "concept: bash",
        "concept: read",
        "file: src/a.py",
        "decision: use orjson",
        "error: error: boom",
        "todo: todo: docs",
        "current: running tests",
        "context: provider: claude",
        "(covers 3 earlier records)",
    ]


def test_empty_card_renders_marker_and_covers() -> None:
    assert DigestBlock().render() == f"{CARD_MARKER}\n(covers 0 earlier records)"
    assert DigestBlock.parse(DigestBlock().render()) == DigestBlock()


def test_parse_accepts_reference_marker_and_rejects_garbage() -> None:
    text = full_card().render().replace(CARD_MARKER, "[gobstopper state card]")
    assert DigestBlock.parse(text) == full_card()
    assert DigestBlock.parse("hello") is None
    assert DigestBlock.parse(f"{CARD_MARKER}\nbogus: x\n(covers 1 earlier records)") is None
    assert DigestBlock.parse(f"{CARD_MARKER}\ngoal: x") is None  # no covers line
    # out of order: a goal after a concept
    assert (
        DigestBlock.parse(f"{CARD_MARKER}\nconcept: a\ngoal: g\n(covers 1 earlier records)") is None
    )
    # a scalar twice
    assert DigestBlock.parse(f"{CARD_MARKER}\ngoal: a\ngoal: b\n(covers 1 earlier records)") is None


def test_line_breaks_in_fields_become_spaces() -> None:
    card = DigestBlock(goal="a\nb", decisions=["x\r\ny"])
    assert card.goal == "a b"
    assert card.decisions == ["x  y"]
    assert DigestBlock.parse(card.render()) == card


_text = st.text(max_size=40)


@given(
    st.builds(
        DigestBlock,
        goal=_text,
        summary=_text,
        concepts=st.lists(_text, max_size=4),
        files_touched=st.lists(_text, max_size=4),
        decisions=st.lists(_text, max_size=4),
        errors=st.lists(_text, max_size=4),
        open_tasks=st.lists(_text, max_size=4),
        current_work=_text,
        context=_text,
        covers_items=st.integers(0, 10**6),
    )
)
def test_round_trip(card: DigestBlock) -> None:
    assert DigestBlock.parse(card.render()) == card


def test_estimate_overhead() -> None:
    card = DigestBlock(goal="abcd", decisions=["12345678"])
    assert card.estimate_overhead() == estimate_tokens(4 + 8 + 64)


def test_edit_union_on_op_and_extra_forbidden() -> None:
    edits = EDITS_ADAPTER.validate_python(
        [
            {"op": "elide", "line_indexes": [1, 2], "stub_template": "[{bytes}]"},
            {"op": "inject_digest", "digest": {"goal": "g"}},
            {"op": "provider_compact", "control": "/compact"},
            {"op": "cache_edit", "tool_use_ids": ["t1"]},
        ]
    )
    assert [type(e) for e in edits] == [
        ElideEdit,
        InjectDigestEdit,
        ProviderCompactEdit,
        CacheEditEdit,
    ]
    with pytest.raises(ValidationError):
        EDITS_ADAPTER.validate_python([{"op": "elide", "line_indexes": [1], "extra": 1}])
    with pytest.raises(ValidationError):
        EDITS_ADAPTER.validate_python([{"op": "delete", "line_indexes": [1]}])
    with pytest.raises(ValidationError):
        EDITS_ADAPTER.validate_python([{"op": "inject_digest", "digest": {"bogus": 1}}])


def test_plan_json_round_trip_and_savings() -> None:
    plan = CompactionPlan(
        strategy="elide",
        rationale="r",
        edits=[ElideEdit(line_indexes=[3]), InjectDigestEdit(digest=full_card())],
        context_tokens_before=1000,
        context_tokens_after=400,
    )
    data = plan.model_dump(mode="json")
    assert data["edits"][0]["op"] == "elide"
    assert data["edits"][0]["per_item_stubs"] == {}
    assert CompactionPlan.model_validate_json(plan.model_dump_json()) == plan
    assert plan.est_savings == 600
    assert plan.elided_lines == [3]
    assert plan.digest == full_card()
    assert plan.rewrites_file and not plan.is_control
    grown = plan.model_copy(update={"context_tokens_after": 2000})
    assert grown.est_savings == 0


def test_stub_substitution() -> None:
    edit = ElideEdit(
        line_indexes=[1, 2], stub_template="[{kind} {bytes} b {x}]", per_item_stubs={2: "done"}
    )
    assert edit.stub_for(1, 300, "tool_result") == "[tool_result 300 b {x}]"
    assert edit.stub_for(2, 300, "tool_result") == "done"


def test_no_plan_shape() -> None:
    no_plan = NoPlan(
        reason_code=NoPlanReason.BELOW_TRIGGER,
        context_tokens_before=100_000,
        effective_trigger_tokens=250_000,
        target_context_tokens=40_000,
        min_savings_tokens=4096,
    )
    assert no_plan.model_dump(mode="json") == {
        "status": "no_plan",
        "reason_code": "below_trigger",
        "context_tokens_before": 100_000,
        "effective_trigger_tokens": 250_000,
        "target_context_tokens": 40_000,
        "min_savings_tokens": 4096,
        "projected_context_tokens_after": None,
        "projected_savings_tokens": None,
        "why": None,
    }
    assert {r.value for r in NoPlanReason} == {
        "below_trigger",
        "strategy_returned_no_plan",
        "empty_external_edits",
        "minimum_savings_not_met",
        "external_nonreducing_plan",
    }
