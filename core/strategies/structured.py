"""structured: a masking fallback. Keep the newest 24 live records verbatim and stub every
eligible tool output before them; no floor seeking. A bounded metadata-derived state card
stands in for what was masked (it is not semantic summarization)."""

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
    card_tokens,
    elision_savings,
    state_card,
)

KEEP_TAIL_ITEMS = 24


class Structured(Triggered):
    id = "structured"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        live = [item for item in transcript.items if item.active and item.est_tokens > 0]
        if len(live) <= KEEP_TAIL_ITEMS:
            return None
        tail_start = live[-KEEP_TAIL_ITEMS].line_index
        chosen = [
            item for item in candidates(transcript, policy, ctx) if item.line_index < tail_start
        ]
        if not chosen:
            return None
        lines = [item.line_index for item in chosen]
        digest = state_card(transcript, lines, ctx)
        before = transcript.context_tokens()
        saved = sum(elision_savings(item, transcript.calibration.slope) for item in chosen)
        return build_plan(
            self.id,
            f"structured: masking fallback; keep the newest {KEEP_TAIL_ITEMS} records, stub "
            f"{len(lines)} older tool outputs; metadata state card added",
            before,
            max(0, before - saved) + card_tokens(transcript, digest),
            lines,
            digest,
        )
