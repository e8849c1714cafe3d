"""What the dashboard settles before it publishes anything: the plan to apply (or why there is
none) and the exact words of the confirm modals.

No Textual here: the publishing controller calls `prepare_apply` from a thread worker, and
tests call it directly on real files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gobtui.adapters.planning.load import (
    LoadedSession,
    PlanningError,
    candidate_bytes,
    plan_session,
)
from gobtui.adapters.providers.interface import RewriteError
from gobtui.core.board import project_name
from gobtui.core.edits import CompactionPlan, NoPlan, NoPlanReason
from gobtui.core.model import SessionSummary
from gobtui.core.policy import PolicyConfig, TuneReason
from gobtui.core.vault.index import IndexEntry
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes


class NothingToApply(Exception):
    """A one-line reason the session gets no fork (no plan, refused, control plan ...)."""


@dataclass(frozen=True, slots=True)
class ApplyRequest:
    """An admitted file plan bound to the bytes it was planned on, ready to publish."""

    summary: SessionSummary
    session: LoadedSession
    plan: CompactionPlan
    policy: PolicyConfig
    candidate_bytes: int
    """Size of the compacted copy before the fork gets its new identity (hence "~")."""
    tune_reasons: tuple[TuneReason, ...] = ()
    """What the adaptive tuner moved in `policy` (for the event)."""
    live: bool = False
    """Its agent wrote to it lately: the fork is of the file as it is now."""

    @property
    def source_bytes(self) -> int:
        return len(self.session.source_bytes)


def no_plan_reason(result: NoPlan, strategy: str) -> str:
    before = fmt.tokens(result.context_tokens_before)
    trigger = fmt.tokens(result.effective_trigger_tokens)
    match result.reason_code:
        case NoPlanReason.BELOW_TRIGGER:
            return (
                f"below its trigger (context {before}, trigger {trigger}); "
                "p previews it, and t there plans anyway"
            )
        case NoPlanReason.MINIMUM_SAVINGS_NOT_MET:
            head = f"{strategy} would save under the minimum of {fmt.tokens(result.min_savings_tokens)}"
            return f"{head}. {result.why}" if result.why else head
        case NoPlanReason.STRATEGY_RETURNED_NO_PLAN:
            head = f"{strategy} finds nothing to compact at context {before}"
            return f"{head}. {result.why}" if result.why else head
        case _:
            return f"no plan ({result.reason_code.value})"


def prepare_apply(
    summary: SessionSummary,
    session: LoadedSession,
    strategy: str,
    policy: PolicyConfig,
    live: bool,
) -> ApplyRequest:
    """Plan `session` and check the plan can become a fork; NothingToApply says why not.
    `policy` is tuned here when adaptive (planning_state.tuned_for), as the preview is."""
    from gobtui.services.planning_state import tuned_for

    adapted = tuned_for(session, policy)
    policy = adapted.policy
    try:
        outcome = plan_session(session, strategy, policy, live)
    except PlanningError as error:
        raise NothingToApply(str(error)) from None
    result = outcome.result
    if isinstance(result, NoPlan):
        raise NothingToApply(no_plan_reason(result, strategy))
    if outcome.plan is None:
        code = outcome.admission.code if outcome.admission else None
        raise NothingToApply(f"the {strategy} plan is refused by admission ({code or 'refused'})")
    plan = outcome.plan
    if plan.is_control or not plan.rewrites_file:
        raise NothingToApply(
            f"{strategy} asks the provider to compact (run /compact in the agent); "
            "there is no file to publish"
        )
    try:
        size = session.whole_size(len(candidate_bytes(session, plan)))
    except (RewriteError, ValueError) as error:
        first = str(error).strip().splitlines()
        raise NothingToApply(
            f"the plan cannot be applied: {first[0] if first else error}"
        ) from None
    return ApplyRequest(summary, session, plan, policy, size, adapted.reasons, live=live)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def session_label(summary: SessionSummary) -> str:
    """`ledgerly (32e873de)`: the project, and the id that tells its sessions apart."""
    return f"{project_name(summary)} ({fmt.short_id(summary.session_id)})"


def apply_question(request: ApplyRequest) -> str:
    from gobtui.core.strategies.auto import selected_strategy

    plan = request.plan
    where = fmt.display_path(str(Path(request.summary.path).parent))
    chosen = selected_strategy(plan)  # auto: what it chose, which is what the fork cuts
    name = f"{plan.strategy} ({chosen})" if chosen else plan.strategy
    question = (
        f"Publish {_article(plan.strategy)} {name} fork of "
        f"{session_label(request.summary)} — "
        f"{fmt.tokens(plan.context_tokens_before)} → {fmt.tokens(plan.context_tokens_after)} "
        f"tokens, {human_bytes(request.source_bytes)} → ~{human_bytes(request.candidate_bytes)} "
        f"— new file beside {where}; the original is snapshotted into the vault first and "
        "never modified."
    )
    if request.live:
        question += (
            " The session is live: its agent is still writing, and what it writes after this"
            " stays in the original only (stop it before you resume the fork)."
        )
    projection = plan.projection
    if projection is not None and projection.client_compacts:
        words = fmt.client_words(
            True, projection.client_context_tokens, projection.client_threshold_tokens
        )
        question += f" Note: {words}."
    return question


def undo_question(entry: IndexEntry, project: str | None, age: str) -> str:
    label = f"{project} ({fmt.short_id(entry.session_id)})" if project else entry.session_id
    where = fmt.display_path(str(Path(entry.path).parent))
    return (
        f"Restore snapshot {entry.sha256[:12]} of {label} — {entry.strategy or 'unlabelled'}, "
        f"{human_bytes(entry.bytes)}, {entry.record_count:,} records, taken {age} — into a new "
        f"fork beside {where}; the snapshot is verified first, and no existing file is modified."
    )
