"""scored: stub the stale outputs a scorer deems least worth keeping.

Candidates are walked newest to oldest into a min-heap keyed by keep-probability (fixed point
x1e6; a missing score counts 0.5). At the first window whose savings reach the target
(before - floor) the lowest-scored are popped until the target is met; a window that never
reaches it is elided whole. With `keep_score_threshold`, candidates scoring at or above it,
and those with a missing or invalid score, are kept even if the floor is then missed.
"""

from __future__ import annotations

import heapq
import math
from functools import partial

from ..edits import CompactionPlan
from ..model import Transcript, TranscriptItem
from ..policy import PolicyConfig
from ..scoring import HeuristicScorer, Scorer
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

SCORE_SCALE = 1_000_000
MISSING_SCORE = 0.5


def _valid(score: float | None) -> bool:
    return score is not None and math.isfinite(score) and 0.0 <= score <= 1.0


class Scored(Triggered):
    id = "scored"

    def __init__(self, scorer: Scorer | None = None) -> None:
        self.scorer: Scorer = scorer if scorer is not None else HeuristicScorer()

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        before = transcript.context_tokens()
        target = before - policy.floor_tokens
        pool = candidates(transcript, policy, ctx)
        if target <= 0 or not pool:
            return None
        memo = ctx.memo_for(transcript)
        if memo is None:
            scores = self.scorer.score(transcript, pool)
        else:
            scores = memo.scores(self.scorer, pool, partial(self.scorer.score, transcript, pool))
        threshold = policy.keep_score_threshold
        heap: list[tuple[int, int]] = []
        by_line: dict[int, TranscriptItem] = {}
        window = 0
        reached = False
        for item in reversed(pool):
            score = scores.get(item.line_index)
            if threshold is not None and (not _valid(score) or (score or 0.0) >= threshold):
                continue  # kept by the cutoff, even at the cost of the floor
            value = score if score is not None and _valid(score) else MISSING_SCORE
            heapq.heappush(heap, (round(value * SCORE_SCALE), item.line_index))
            by_line[item.line_index] = item
            window += elision_savings(item, transcript.calibration.slope)
            if window >= target:
                reached = True
                break
        chosen: list[TranscriptItem] = []
        if reached:
            got = 0
            while heap and got < target:
                _, line = heapq.heappop(heap)
                chosen.append(by_line[line])
                got += elision_savings(by_line[line], transcript.calibration.slope)
        else:
            chosen = list(by_line.values())
        if not chosen:
            return None
        lines = sorted(item.line_index for item in chosen)
        digest = state_card(transcript, lines, ctx)
        saved = sum(elision_savings(item, transcript.calibration.slope) for item in chosen)
        cutoff = f"keep-score cutoff {threshold}" if threshold is not None else "no cutoff"
        return build_plan(
            self.id,
            f"scored: stub the {len(lines)} lowest-scored of {len(pool)} stale tool outputs "
            f"(keep-probability ranking, {cutoff}); state card added",
            before,
            max(0, before - saved) + card_tokens(transcript, digest),
            lines,
            digest,
        )
