"""The pure half of `external`: turn edits proposed by a trusted command into a plan.

Running the command (stdin/stdout, timeout, trust flag) is the host's job; this module only
projects the proposal and names the no-plan outcomes. Admission still follows.
"""

from __future__ import annotations

from ..edits import (
    CacheEditEdit,
    CompactionPlan,
    Edit,
    ElideEdit,
    InjectDigestEdit,
    NoPlan,
    NoPlanReason,
    ProviderCompactEdit,
)
from ..model import Transcript
from ..policy import PolicyConfig
from .common import card_tokens, elision_savings

EXTERNAL_ID = "external"
"""A preset's trusted `command`, as gobtui always ran it."""
AGENTIC_ID = "agentic"
"""Edit proposals from a trusted command or a pinned plugin bundle: file edits only."""
EXTENSION_IDS = (EXTERNAL_ID, AGENTIC_ID)
"""Strategy ids planned by a process outside gobtui (adapters.planning.external)."""


def project_after(edits: list[Edit], transcript: Transcript, policy: PolicyConfig) -> int:
    """The context after `edits`, estimated as the built-in strategies do.

    Elided lines and tool results named by a cache_edit free their elision savings (each line
    once); a card adds its overhead; a provider compaction is assumed to reach the floor.
    """
    before = transcript.context_tokens()
    if any(isinstance(edit, ProviderCompactEdit) for edit in edits):
        return min(before, policy.floor_tokens)
    lines = {line for edit in edits if isinstance(edit, ElideEdit) for line in edit.line_indexes}
    ids = {i for edit in edits if isinstance(edit, CacheEditEdit) for i in edit.tool_use_ids}
    saved = 0
    for item in transcript.items:
        if item.line_index in lines or (ids and ids.intersection(item.tool_use_ids)):
            saved += elision_savings(item, transcript.calibration.slope)
    overhead = sum(
        card_tokens(transcript, edit.digest) for edit in edits if isinstance(edit, InjectDigestEdit)
    )
    return max(0, before - saved) + overhead


def plan_from_edits(
    strategy_id: str,
    edits: list[Edit],
    transcript: Transcript,
    policy: PolicyConfig,
    source: str = "external command",
) -> CompactionPlan | NoPlan:
    """A proposal as a plan; empty (defer) or non-reducing proposals are no-plan results."""
    before = transcript.context_tokens()

    def no_plan(reason: NoPlanReason, after: int | None = None) -> NoPlan:
        return NoPlan(
            reason_code=reason,
            context_tokens_before=before,
            effective_trigger_tokens=policy.effective_trigger(),
            target_context_tokens=policy.floor_tokens,
            min_savings_tokens=policy.min_savings_tokens,
            projected_context_tokens_after=after,
            projected_savings_tokens=None if after is None else max(0, before - after),
        )

    if not edits:
        return no_plan(NoPlanReason.EMPTY_EXTERNAL_EDITS)
    after = project_after(edits, transcript, policy)
    if after >= before:
        return no_plan(NoPlanReason.EXTERNAL_NONREDUCING_PLAN, after)
    if not policy.accepts_savings(before, after):
        return no_plan(NoPlanReason.MINIMUM_SAVINGS_NOT_MET, after)
    return CompactionPlan(
        strategy=strategy_id,
        rationale=f"{strategy_id}: {len(edits)} edits proposed by a trusted {source}",
        edits=edits,
        context_tokens_before=before,
        context_tokens_after=after,
    )
