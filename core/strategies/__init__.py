"""Built-in strategies, by id, and the central decision (trigger and minimum-savings gates).

Strategies are pure: transcript and policy in, a plan out. `external` (a trusted command)
needs process execution and lives outside core.
"""

from __future__ import annotations

from ..edits import CompactionPlan, NoPlan, NoPlanReason
from ..model import Transcript
from ..policy import PolicyConfig
from ..projection import codex_reasoning_tokens, project
from .auto import Auto
from .cache_aware import CacheAware
from .cache_edits import CacheEdits
from .cliff import Cliff
from .common import NO_CONTEXT, EvalContext, Strategy, evaluate_with
from .compacted import Compacted
from .dedupe import Dedupe
from .elide import Elide
from .memo import PlanMemo
from .micro import Micro
from .middle import Middle
from .sawtooth import Sawtooth
from .scored import Scored
from .structured import Structured

__all__ = [
    "NO_CONTEXT",
    "STRATEGIES",
    "EvalContext",
    "PlanMemo",
    "Strategy",
    "UnknownStrategyError",
    "evaluate_with",
    "get",
    "plan_for",
]


def _registry() -> dict[str, Strategy]:
    """One instance per id, auto holding the very instances it delegates to (so a memo shares
    their plans between auto and their own rows)."""
    idle: tuple[Strategy, ...] = (
        CacheAware(),
        Scored(),
        Elide(),
        Compacted(),
        Dedupe(),
        Micro(),
        Middle(),
        Structured(),
    )
    cache_edits, sawtooth = CacheEdits(), Sawtooth()
    by_id: dict[str, Strategy] = {s.id: s for s in (*idle, cache_edits, sawtooth, Cliff())}
    by_id["auto"] = Auto(idle, cache_edits, sawtooth)
    # The reference's registration order (cliff last: an explicit or preset strategy).
    order = (
        "auto",
        "scored",
        "cache_edits",
        "cache_aware",
        "sawtooth",
        "elide",
        "dedupe",
        "micro",
        "middle",
        "compacted",
        "structured",
        "cliff",
    )
    return {name: by_id[name] for name in order}


STRATEGIES: dict[str, Strategy] = _registry()


class UnknownStrategyError(ValueError):
    def __init__(self, strategy_id: str) -> None:
        known = ", ".join(STRATEGIES)
        super().__init__(f"unknown strategy {strategy_id!r} (known: {known})")
        self.strategy_id = strategy_id


def get(strategy_id: str) -> Strategy:
    try:
        return STRATEGIES[strategy_id]
    except KeyError:
        raise UnknownStrategyError(strategy_id) from None


def plan_for(
    strategy_id: str,
    transcript: Transcript,
    policy: PolicyConfig,
    ctx: EvalContext = NO_CONTEXT,
) -> CompactionPlan | NoPlan:
    """Evaluate one strategy behind the central gates: the trigger, then minimum savings.

    Admission is the caller's next step (`core.admission.admit`) before anything is applied.
    """
    strategy = get(strategy_id)
    before = transcript.context_tokens()

    def no_plan(reason: NoPlanReason, plan: CompactionPlan | None = None) -> NoPlan:
        return NoPlan(
            reason_code=reason,
            context_tokens_before=before,
            effective_trigger_tokens=policy.effective_trigger(),
            target_context_tokens=policy.floor_tokens,
            min_savings_tokens=policy.min_savings_tokens,
            projected_context_tokens_after=plan.context_tokens_after if plan else None,
            projected_savings_tokens=plan.est_savings if plan else None,
        )

    if before < policy.effective_trigger():
        return no_plan(NoPlanReason.BELOW_TRIGGER)
    plan = evaluate_with(strategy, transcript, policy, ctx)
    if plan is None:
        return no_plan(NoPlanReason.STRATEGY_RETURNED_NO_PLAN)
    if not policy.accepts_savings(plan.context_tokens_before, plan.context_tokens_after):
        return no_plan(NoPlanReason.MINIMUM_SAVINGS_NOT_MET, plan)
    return with_projection(plan, transcript)


def with_projection(plan: CompactionPlan, transcript: Transcript) -> CompactionPlan:
    """A file plan with what its fork will do in the client (a control plan as it is)."""
    if plan.is_control or not plan.rewrites_file:
        return plan
    window = transcript.summary.context_window if transcript.summary is not None else None
    extra = 0
    if transcript.provider.traits.resends_reasoning:
        extra = codex_reasoning_tokens(
            transcript.items, plan.digest is not None, set(plan.elided_lines)
        )
    projection = project(
        transcript.provider,
        plan.context_tokens_before,
        plan.context_tokens_after,
        window,
        transcript.calibration,
        extra,
    )
    return plan.model_copy(update={"projection": projection})
