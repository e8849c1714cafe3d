"""micro: keep the newest outputs of each tool, stub the older ones.

Unlike the reference, the protected tail is left out here rather than only by admission, so
the plan micro proposes is one admission accepts.
"""

from __future__ import annotations

from collections import defaultdict

from ..admission import elidable_items
from ..digest import tool_name
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

MICRO_KEEP_PER_LABEL = 2


class Micro(Triggered):
    id = "micro"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        by_tool: defaultdict[str, list[int]] = defaultdict(list)
        for item in elidable_items(transcript):
            by_tool[tool_name(item.label)].append(item.line_index)
        kept = {line for lines in by_tool.values() for line in lines[-MICRO_KEEP_PER_LABEL:]}
        older = [
            item for item in candidates(transcript, policy, ctx) if item.line_index not in kept
        ]
        before = transcript.context_tokens()
        chosen = choose_with_digest(
            transcript, before, policy.floor_tokens, older, ctx.payloads, ctx.cards_for(transcript)
        )
        if chosen is None:
            return None
        return build_plan(
            self.id,
            f"micro: keep the newest {MICRO_KEEP_PER_LABEL} outputs of each of {len(by_tool)} "
            f"tools, stub {len(chosen.lines)} older ones oldest first; state card added",
            before,
            chosen.after,
            chosen.lines,
            chosen.digest,
        )
