"""elide: stub stale tool outputs, oldest first, until the projection reaches the floor."""

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
    walk_to_floor,
)


class Elide(Triggered):
    id = "elide"

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
        return build_plan(
            self.id,
            f"elide: stub {len(chosen)} stale tool outputs, oldest first, toward the "
            f"{policy.floor_tokens}-token floor; no state card",
            before,
            after,
            (item.line_index for item in chosen),
        )
