"""auto: live sessions go to provider controls; idle ones get the best admitted file plan.

Live (the host says so, or there are no items): Claude tries cache_edits, then sawtooth;
Codex uses sawtooth. Idle: cache_aware, scored, elide, compacted, dedupe, micro, middle and
structured are evaluated; plans admission refuses are dropped, plans that pass the
minimum-savings gate beat those that do not, forks under the trigger and the client's
compaction threshold beat the others, and the highest
savings x (prefix / before)^3 wins (the earlier strategy on a tie). The winner is renamed
`auto`. The cube rewards leaving the prompt-cache prefix intact.

Its strategies are evaluated and admitted through the context's memo: an eval that also runs
them on their own (the registry hands auto its own instances) computes each plan once.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..edits import CompactionPlan
from ..model import Transcript
from ..policy import PolicyConfig
from .cache_aware import CacheAware
from .cache_edits import CacheEdits
from .common import (
    NO_CONTEXT,
    EvalContext,
    Strategy,
    Triggered,
    admit_with,
    elidable_tokens,
    evaluate_with,
    prefix_tokens,
)
from .compacted import Compacted
from .dedupe import Dedupe
from .elide import Elide
from .micro import Micro
from .middle import Middle
from .sawtooth import Sawtooth
from .scored import Scored
from .structured import Structured

PREFIX_EXP = 3
TOOL_DOMINANCE = 0.55


def cache_preservation_score(plan: CompactionPlan, transcript: Transcript) -> float:
    """savings x (prefix_tokens / before)^3, the share capped at 1."""
    before = plan.context_tokens_before
    if before <= 0:
        return 0.0
    share = min(1.0, prefix_tokens(transcript, plan) / before)
    return plan.est_savings * share**PREFIX_EXP


def select(transcript: Transcript, live: bool) -> str:
    """The strategy auto would lean to, for reporting (no evaluation)."""
    if live or not transcript.items:
        return "cache_edits" if transcript.provider.traits.cache_edits else "sawtooth"
    context = transcript.context_tokens()
    if context > 0 and elidable_tokens(transcript) / context >= TOOL_DOMINANCE:
        return "cache_aware"
    return "structured"


SELECTED = "auto: selected "
DELEGATED = "auto: live session, delegated to "
"""How an auto plan's rationale names the strategy it chose (selected_strategy reads it)."""


def selected_strategy(plan: CompactionPlan) -> str | None:
    """The strategy an `auto` plan chose, None for a plan of any other strategy."""
    if plan.strategy != Auto.id:
        return None
    for prefix, end in ((SELECTED, " "), (DELEGATED, ";")):
        if plan.rationale.startswith(prefix):
            chosen = plan.rationale[len(prefix) :].split(end, 1)[0]
            return chosen or None
    return None


class Auto(Triggered):
    id = "auto"

    def __init__(
        self,
        idle: Sequence[Strategy] | None = None,
        cache_edits: Strategy | None = None,
        sawtooth: Strategy | None = None,
    ) -> None:
        self.idle: tuple[Strategy, ...] = tuple(
            idle
            if idle is not None
            else (
                CacheAware(),
                Scored(),
                Elide(),
                Compacted(),
                Dedupe(),
                Micro(),
                Middle(),
                Structured(),
            )
        )
        self.cache_edits: Strategy = cache_edits if cache_edits is not None else CacheEdits()
        self.sawtooth: Strategy = sawtooth if sawtooth is not None else Sawtooth()

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        if ctx.live or not transcript.items:
            return self._live(transcript, policy, ctx)
        # Ranked in the listed order: the order decides ties. A fork still over the trigger,
        # or one the client would compact as it resumes it (its summary, not ours), loses to
        # one under both.
        window = transcript.summary.context_window if transcript.summary is not None else None
        ceiling = policy.fork_ceiling(transcript.provider, window)
        best: tuple[tuple[bool, bool, float], Strategy, CompactionPlan] | None = None
        for strategy in self.idle:
            plan = evaluate_with(strategy, transcript, policy, ctx)
            if plan is None or not admit_with(plan, transcript, policy, ctx).admitted:
                continue
            gate = policy.accepts_savings(plan.context_tokens_before, plan.context_tokens_after)
            key = (
                gate,
                plan.context_tokens_after < ceiling,
                cache_preservation_score(plan, transcript),
            )
            if best is None or key > best[0]:
                best = (key, strategy, plan)
        if best is None:
            return None
        (_, _, score), strategy, plan = best
        return plan.model_copy(
            update={
                "strategy": self.id,
                "rationale": f"{SELECTED}{strategy.id} (score {int(score)}); " + plan.rationale,
            }
        )

    def _live(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext
    ) -> CompactionPlan | None:
        chain: tuple[Strategy, ...] = (
            (self.cache_edits, self.sawtooth)
            if transcript.provider.traits.cache_edits
            else (self.sawtooth,)
        )
        for strategy in chain:
            plan = evaluate_with(strategy, transcript, policy, ctx)
            if plan is not None and admit_with(plan, transcript, policy, ctx).admitted:
                return plan.model_copy(
                    update={
                        "strategy": self.id,
                        "rationale": f"{DELEGATED}{strategy.id}; " + plan.rationale,
                    }
                )
        return None
