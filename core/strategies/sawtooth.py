"""sawtooth: ask the provider to compact (no selection, no file change).

The projection assumes the provider brings the context down to the floor.
"""

from __future__ import annotations

from ..edits import CompactionPlan, ProviderCompactEdit
from ..model import Transcript
from ..policy import PROVIDER_CONTROLS, PolicyConfig
from .common import NO_CONTEXT, EvalContext, Triggered


class Sawtooth(Triggered):
    id = "sawtooth"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        before = transcript.context_tokens()
        if before <= policy.floor_tokens:
            return None
        control = PROVIDER_CONTROLS[transcript.provider]
        return CompactionPlan(
            strategy=self.id,
            rationale=(
                f"sawtooth: ask {transcript.provider.label} to compact ({control}); "
                f"assumes it returns to the {policy.floor_tokens}-token floor"
            ),
            edits=[ProviderCompactEdit(control=control)],
            context_tokens_before=before,
            context_tokens_after=policy.floor_tokens,
        )
