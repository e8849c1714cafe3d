"""cache_edits (Claude only): name the tool results to drop at the API layer, newest stale
ones first, until the floor. Never rewrites the transcript; as a control edit it travels alone
(no card)."""

from __future__ import annotations

from ..edits import CacheEditEdit, CompactionPlan
from ..model import Transcript
from ..policy import PolicyConfig
from .common import (
    NO_CONTEXT,
    EvalContext,
    Triggered,
    candidates,
    walk_to_floor,
)


class CacheEdits(Triggered):
    id = "cache_edits"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        if not transcript.provider.traits.cache_edits:
            return None
        ordered = [
            item for item in reversed(candidates(transcript, policy, ctx)) if item.tool_use_ids
        ]
        before = transcript.context_tokens()
        chosen, after = walk_to_floor(
            before, policy.floor_tokens, ordered, transcript.calibration.slope
        )
        ids = list(dict.fromkeys(i for item in chosen for i in item.tool_use_ids))
        if not ids or after >= before:
            return None
        return CompactionPlan(
            strategy=self.id,
            rationale=(
                f"cache_edits: drop {len(chosen)} stale tool results at the API layer, newest "
                f"first, toward the {policy.floor_tokens}-token floor; the file is unchanged"
            ),
            edits=[CacheEditEdit(tool_use_ids=ids)],
            context_tokens_before=before,
            context_tokens_after=after,
        )
