"""compacted: elide's selection, plus a state card over what it elided.

The card is the one every card-writing strategy uses (core.digest, with salient lines); the
adapter writes it as a portable user message (a synthetic Codex `compacted` record is an
adapter option, not a planning concern).
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
    card_tokens,
    state_card,
    walk_to_floor,
)


class Compacted(Triggered):
    id = "compacted"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        before = transcript.context_tokens()
        chosen, after = walk_to_floor(
            before,
            policy.floor_tokens,
            candidates(transcript, policy, ctx),
            transcript.calibration.slope,
        )
        if not chosen:
            return None
        lines = [item.line_index for item in chosen]
        digest = state_card(transcript, lines, ctx)
        return build_plan(
            self.id,
            f"compacted: stub {len(lines)} stale tool outputs oldest first and inject a state "
            f"card in their place",
            before,
            after + card_tokens(transcript, digest),
            lines,
            digest,
        )
