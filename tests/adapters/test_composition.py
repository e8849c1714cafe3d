"""What fills a context (core.composition) and why no plan (core.context_words), on the
driven sessions the real Claude Code wrote (tests/corpus/driven) and on synthetic items
whose true costs are known."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.core.composition import COEFFICIENT_BAND, PartKind, composition
from gobtui.core.edits import NoPlan, NoPlanReason
from gobtui.core.model import ItemKind, Provider, TranscriptItem
from gobtui.core.policy import PolicyConfig

DRIVEN = Path(__file__).resolve().parents[1] / "corpus" / "driven"


def test_the_fit_recovers_known_costs_per_kind() -> None:
    """A session whose provider counts 20k fixed, thinking at 0.4 and tool output at 1.0 of
    their estimates: the fit says so, and the parts add up to what was reported."""
    items: list[TranscriptItem] = []
    usage: list[tuple[int, int]] = []
    thinking = outputs = 0
    for step in range(30):
        think = 300 + 37 * (step % 7)
        out = 900 + 211 * (step % 5)
        items.append(TranscriptItem(3 * step, ItemKind.REASONING, think))
        items.append(TranscriptItem(3 * step + 1, ItemKind.TOOL_RESULT, out, tool_use_ids=("t",)))
        thinking, outputs = thinking + think, outputs + out
        usage.append((3 * step + 2, round(20_000 + 0.4 * thinking + outputs)))
    comp = composition(items, usage, usage[-1][1])
    assert comp.points == 30 and comp.fit_error is not None and comp.fit_error < 0.01
    assert abs(comp.part(PartKind.FIXED).tokens - 20_000) < 300
    assert abs(comp.part(PartKind.REASONING).coefficient - 0.4) < 0.05
    assert abs(comp.part(PartKind.TOOL_OUTPUTS).coefficient - 1.0) < 0.05
    assert abs(comp.total - comp.reported) < 0.01 * comp.reported
    assert comp.unreachable == comp.part(PartKind.FIXED).tokens  # no conversation here


def test_without_usage_the_estimates_stand_and_the_rest_is_fixed() -> None:
    items = [TranscriptItem(0, ItemKind.USER, 100), TranscriptItem(1, ItemKind.REASONING, 50)]
    comp = composition(items, [], 1_000)
    assert comp.part(PartKind.REASONING).tokens == 50
    assert comp.part(PartKind.FIXED).tokens == 850 and comp.fit_error is None


@pytest.mark.parametrize("path", sorted(DRIVEN.glob("*.jsonl")), ids=lambda p: p.stem)
def test_a_driven_session_splits_into_thinking_tools_and_overhead(path: Path) -> None:
    comp = load_session(path, Provider.CLAUDE).composition
    assert comp.points >= 10 and comp.fit_error is not None and comp.fit_error < 0.05
    low, high = COEFFICIENT_BAND
    assert all(low <= p.coefficient <= high for p in comp.parts)
    for kind in (PartKind.FIXED, PartKind.REASONING, PartKind.TOOL_OUTPUTS):
        assert comp.part(kind).tokens > 0.05 * comp.reported, kind
    assert abs(comp.total - comp.reported) < 0.05 * comp.reported


def test_no_plan_says_why_in_the_users_terms() -> None:
    session = load_session(DRIVEN / "three-prompts.jsonl", Provider.CLAUDE)
    context = session.transcript.context_tokens()
    # Over the trigger, but a minimum no fork can meet.
    policy = PolicyConfig(trigger_tokens=1_000, floor_tokens=0, min_savings_tokens=context)
    result = plan_session(session, "compacted", policy).result
    assert isinstance(result, NoPlan)
    assert result.reason_code is NoPlanReason.MINIMUM_SAVINGS_NOT_MET
    why = result.why or ""
    assert "fixed overhead" in why and "earlier thinking" in why and "tool outputs" in why
    assert "a fork could reclaim" in why and "no fork reaches" in why
    assert "newest tool outputs it keeps hold" in why  # what would reclaim more
    off = policy.model_copy(update={"drop_old_thinking": False})
    why_off = plan_session(session, "compacted", off).result
    assert isinstance(why_off, NoPlan) and "drop_old_thinking = true would free" in (
        why_off.why or ""
    )
    below = plan_session(session, "compacted", PolicyConfig(trigger_tokens=context + 1)).result
    assert isinstance(below, NoPlan) and "below the trigger" in (below.why or "")
