"""Every strategy on the real fixtures' parse (tests may import adapters; core may not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.providers.claude import parse as claude_parse
from gobtui.adapters.providers.codex import parse as codex_parse
from gobtui.core.admission import admit
from gobtui.core.edits import ElideEdit
from gobtui.core.model import Transcript
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies import STRATEGIES, EvalContext, evaluate_with, get

LOW = PolicyConfig(
    trigger_tokens=2, floor_tokens=1, keep_recent_tool_outputs=2, min_savings_tokens=0
)
SPOTTER = "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def parse(fixtures_dir: Path, relative: str) -> Transcript:
    path = str(fixtures_dir / relative)
    if relative.startswith("codex/") or relative.endswith("codex-window.jsonl"):
        return codex_parse.parse_transcript(path)
    return claude_parse.parse_transcript(path)


def all_fixtures(fixtures_dir: Path) -> list[str]:
    return sorted(
        str(p.relative_to(fixtures_dir))
        for p in fixtures_dir.glob("*/*.jsonl")
        if p.parent.name in ("claude", "codex", "oracle")
    )


def test_every_strategy_on_every_fixture(fixtures_dir: Path) -> None:
    seen_plans = 0
    for relative in all_fixtures(fixtures_dir):
        t = parse(fixtures_dir, relative)
        for live in (False, True):
            for strategy_id, strategy in STRATEGIES.items():
                plan = evaluate_with(strategy, t, LOW, EvalContext(live=live))
                if plan is None:
                    continue
                seen_plans += 1
                verdict = admit(plan, t, LOW)
                assert verdict.admitted, (relative, strategy_id, verdict.message)
                assert plan.context_tokens_after <= plan.context_tokens_before
    assert seen_plans > 50


@pytest.mark.parametrize(
    "strategy_id",
    [
        "auto",
        "scored",
        "cache_edits",
        "cache_aware",
        "sawtooth",
        "elide",
        "micro",
        "middle",
        "compacted",
        "structured",
        "cliff",
    ],
)
def test_big_claude_session_yields_plans(fixtures_dir: Path, strategy_id: str) -> None:
    t = parse(fixtures_dir, SPOTTER)
    policy = PolicyConfig(trigger_tokens=50_000, floor_tokens=30_000, keep_recent_tool_outputs=4)
    plan = get(strategy_id).evaluate(t, policy)
    assert plan is not None
    assert admit(plan, t, policy).admitted
    assert plan.est_savings > 0
    digest = plan.digest
    if digest is not None:
        assert digest.context == "provider: claude"
        assert digest.covers_items == len(plan.elided_lines)
        # What the card lists means what it says: files are paths, no tool name is a
        # concept, and no tool call is a line of its own.
        assert digest.concepts == [] and digest.files_touched
        assert all("(" not in path and " " not in path for path in digest.files_touched)
        assert not any(line.startswith(("Read(", "Bash(", "Grep(")) for line in digest.decisions)


def test_oracle_claude_branch(fixtures_dir: Path) -> None:
    t = parse(fixtures_dir, "oracle/claude-branch.jsonl")
    policy = PolicyConfig(trigger_tokens=100, floor_tokens=50, keep_recent_tool_outputs=0)
    plan = get("elide").evaluate(t, policy)
    assert plan is not None and plan.elided_lines == [3]  # the dead branch's line 2 is not
    assert plan.context_tokens_before == 112
    assert plan.context_tokens_after == 112 - (76 - 24)
    guarded = policy.model_copy(update={"keep_recent_tool_outputs": 1})
    assert get("elide").evaluate(t, guarded) is None  # its only output is protected


def test_oracle_codex_window(fixtures_dir: Path) -> None:
    t = parse(fixtures_dir, "oracle/codex-window.jsonl")
    policy = PolicyConfig(trigger_tokens=200, floor_tokens=10, keep_recent_tool_outputs=1)
    plan = get("elide").evaluate(t, policy)
    assert plan is not None and plan.elided_lines == [3]  # line 7 is the protected tail
    edit = plan.edits[0]
    assert isinstance(edit, ElideEdit)
    sawtooth = get("sawtooth").evaluate(t, policy)
    assert sawtooth is not None and sawtooth.edits[0].op == "provider_compact"
    assert get("cache_edits").evaluate(t, policy) is None  # Claude only
