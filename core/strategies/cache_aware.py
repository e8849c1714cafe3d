"""cache_aware: elide the newest stale outputs (just before the protected tail) and add a card.

Walking newest to oldest leaves the earliest records byte-identical, so the provider's prompt
cache keeps the longest practical prefix.
"""

from __future__ import annotations

from ..edits import CompactionPlan
from ..model import Transcript
from ..policy import PolicyConfig
from .common import (
    NO_CONTEXT,
    EvalContext,
    Triggered,
    build_plan,
    candidates,
    choose_with_digest,
)


class CacheAware(Triggered):
    id = "cache_aware"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        before = transcript.context_tokens()
        ordered = list(reversed(candidates(transcript, policy, ctx)))
        chosen = choose_with_digest(
            transcript,
            before,
            policy.floor_tokens,
            ordered,
            ctx.payloads,
            ctx.cards_for(transcript),
        )
        if chosen is None:
            return None
        first = chosen.lines[0]
        untouched = sum(1 for item in transcript.items if item.line_index < first)
        return build_plan(
            self.id,
            f"cache_aware: stub {len(chosen.lines)} stale tool outputs newest first, leaving "
            f"{untouched} prefix records untouched; state card added",
            before,
            chosen.after,
            chosen.lines,
            chosen.digest,
        )
