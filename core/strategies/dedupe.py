"""dedupe: stub older copies of byte-identical tool payloads (grouped by payload SHA-256).

The newest copy of each payload stays, even when it lies in the protected tail, so every
elided payload is still present verbatim later in the transcript. Older copies go oldest
first, through choose_with_digest.
"""

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


class Dedupe(Triggered):
    id = "dedupe"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        newest: dict[str, int] = {}
        for item in elidable_items(transcript):
            if item.payload_sha256:
                newest[item.payload_sha256] = item.line_index
        duplicates = [
            item
            for item in candidates(transcript, policy, ctx)
            if item.payload_sha256 and newest[item.payload_sha256] != item.line_index
        ]
        before = transcript.context_tokens()
        chosen = choose_with_digest(
            transcript,
            before,
            policy.floor_tokens,
            duplicates,
            ctx.payloads,
            ctx.cards_for(transcript),
        )
        if chosen is None:
            return None
        return build_plan(
            self.id,
            f"dedupe: stub {len(chosen.lines)} older copies of repeated tool payloads "
            f"({len(duplicates)} duplicates found); the newest copy of each stays",
            before,
            chosen.after,
            chosen.lines,
            chosen.digest,
        )
