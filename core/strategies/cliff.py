"""cliff: keep the head and the newest turns whole; drop big tool results in between.

A *turn* starts where an assistant-side item (assistant text, tool call, reasoning) follows a
non-assistant-side one; dead items are skipped. The *head* is everything before the first turn
start, the *tail* the newest `keep_recent_turns` turns. Between them every elidable,
unprotected output larger than `result_max_bytes` is stubbed; smaller ones stay. No floor and
no card, so a second pass at the same cut selects nothing new, and compacting a compacted copy
selects what one compaction of the source would.
"""

from __future__ import annotations

from ..edits import CompactionPlan
from ..model import ItemKind, Transcript
from ..policy import PolicyConfig
from .common import (
    NO_CONTEXT,
    EvalContext,
    Triggered,
    build_plan,
    candidates,
    elision_savings,
)

CLIFF_STUB = "[tool result dropped by gobtui cliff: {bytes} bytes]"
ASSISTANT_SIDE = frozenset({ItemKind.ASSISTANT, ItemKind.TOOL_CALL, ItemKind.REASONING})


def turn_starts(transcript: Transcript) -> list[int]:
    """Line indexes where a turn starts, oldest first."""
    starts: list[int] = []
    previous_assistant: bool | None = None
    for item in transcript.items:
        if not item.active or item.est_tokens <= 0:
            continue
        assistant = item.kind in ASSISTANT_SIDE
        if assistant and previous_assistant is False:
            starts.append(item.line_index)
        previous_assistant = assistant
    return starts


class Cliff(Triggered):
    id = "cliff"

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        starts = turn_starts(transcript)
        keep = policy.keep_recent_turns
        if len(starts) <= keep:
            return None  # every turn is in the kept tail
        head_end = starts[0]
        tail_start = starts[-keep] if keep > 0 else None
        chosen = [
            item
            for item in candidates(transcript, policy, ctx)
            if item.line_index >= head_end
            and (tail_start is None or item.line_index < tail_start)
            and (item.elidable_bytes or 0) > policy.result_max_bytes
        ]
        before = transcript.context_tokens()
        saved = sum(elision_savings(item, transcript.calibration.slope) for item in chosen)
        return build_plan(
            self.id,
            f"cliff: keep the head and the newest {keep} turns; drop {len(chosen)} tool "
            f"results over {policy.result_max_bytes} bytes in between",
            before,
            max(0, before - saved),
            (item.line_index for item in chosen),
            stub_template=CLIFF_STUB,
        )
