"""middle: keep the first and the last K tool outputs (K = keep_recent_tool_outputs) and stub
the middle, oldest first: the task's setup and its latest state both stay verbatim."""

from __future__ import annotations

from ..admission import elidable_items
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


class Middle(Triggered):
    id = "middle"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        keep = policy.keep_recent_tool_outputs
        head = {item.line_index for item in elidable_items(transcript)[:keep]}
        middle = [
            item for item in candidates(transcript, policy, ctx) if item.line_index not in head
        ]
        before = transcript.context_tokens()
        chosen = choose_with_digest(
            transcript, before, policy.floor_tokens, middle, ctx.payloads, ctx.cards_for(transcript)
        )
        if chosen is None:
            return None
        return build_plan(
            self.id,
            f"middle: keep the first and last {keep} tool outputs, stub {len(chosen.lines)} "
            f"in between oldest first; state card added",
            before,
            chosen.after,
            chosen.lines,
            chosen.digest,
        )
