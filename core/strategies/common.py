"""What the strategies share: the Strategy protocol, eligibility, savings, choose_with_digest,
and the memoized forms of evaluation, admission and the state card (core.strategies.memo)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..admission import Admission, admit, elidable_items, protected_of
from ..digest import CardMemo, state_card_digest
from ..edits import (
    DEFAULT_STUB,
    CompactionPlan,
    DigestBlock,
    Edit,
    ElideEdit,
    InjectDigestEdit,
)
from ..limits import STUB_BUDGET_BYTES
from ..model import ItemKind, Transcript, TranscriptItem
from ..policy import PolicyConfig
from ..thinking import in_progress_start, thinking_after
from ..tokens import estimate_tokens
from .memo import PlanMemo


@dataclass(frozen=True, slots=True)
class EvalContext:
    """What only the host knows: whether the session is live, and elided payload texts.

    `payloads` maps a line index to its payload text (or its head); the state card scans it
    for salient lines. Without it, cards use item summaries only. `memo` (made for the
    transcript being planned and these payloads) shares work between strategies and plans.
    """

    live: bool = False
    payloads: Mapping[int, str] | None = None
    memo: PlanMemo | None = None

    def memo_for(self, transcript: Transcript) -> PlanMemo | None:
        """The memo when it was made for this transcript and these payloads."""
        memo = self.memo
        return memo if memo is not None and memo.serves(transcript, self.payloads) else None

    def cards_for(self, transcript: Transcript) -> CardMemo | None:
        memo = self.memo_for(transcript)
        return memo.cards if memo is not None else None


NO_CONTEXT = EvalContext()


class Strategy(Protocol):
    """A pure planner: transcript and policy in, a plan (or None) out."""

    @property
    def id(self) -> str: ...

    def evaluate(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        """A plan, or None below the effective trigger or when there is nothing to do."""
        ...


def evaluate_with(
    strategy: Strategy, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext
) -> CompactionPlan | None:
    """strategy.evaluate(...), answered by the context's memo when it holds the answer."""
    memo = ctx.memo_for(transcript)

    def compute() -> CompactionPlan | None:
        return prefix_safe(strategy.evaluate(transcript, policy, ctx), transcript, ctx)

    if memo is None:
        return compute()
    return memo.plan(strategy, policy, ctx.live, compute)


def prefix_safe(
    plan: CompactionPlan | None, transcript: Transcript, ctx: EvalContext
) -> CompactionPlan | None:
    """The plan with the thinking core.thinking's rule leaves out after its first change
    added to its elided lines, their savings and its card: every strategy's, once, here."""
    if plan is None or plan.is_control:
        return plan
    elides = [edit for edit in plan.edits if isinstance(edit, ElideEdit)]
    if not elides:
        return plan
    elided = set(plan.elided_lines)
    added = [line for line in thinking_after(transcript, elided) if line not in elided]
    if not added:
        return plan
    items = {item.line_index: item for item in transcript.items}
    slope = transcript.calibration.slope
    after = plan.context_tokens_after - sum(elision_savings(items[i], slope) for i in added)
    first = elides[0]
    lines = sorted(elided.union(added))
    own = sorted({*first.line_indexes, *added})
    edits: list[Edit] = [first.model_copy(update={"line_indexes": own})]
    for edit in plan.edits:
        if isinstance(edit, InjectDigestEdit):
            card = state_card(transcript, lines, ctx)
            after += card_tokens(transcript, card) - card_tokens(transcript, edit.digest)
            edits.append(InjectDigestEdit(digest=card))
        elif edit is not first:
            edits.append(edit)
    rationale = (
        f"{plan.rationale}; {len(added)} thinking records after the first change left out "
        "(preserved thinking)"
    )
    update = {"edits": edits, "context_tokens_after": max(0, after), "rationale": rationale}
    return plan.model_copy(update=update)


def admit_with(
    plan: CompactionPlan, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext
) -> Admission:
    """admit(...), answered by the context's memo when it holds the answer."""
    memo = ctx.memo_for(transcript)
    if memo is None:
        return admit(plan, transcript, policy)
    return memo.admission(plan, policy)


def state_card(transcript: Transcript, lines: Iterable[int], ctx: EvalContext) -> DigestBlock:
    """The state card over `lines`, with the context's payloads and memo."""
    return state_card_digest(transcript, lines, ctx.payloads, ctx.cards_for(transcript))


def above_trigger(transcript: Transcript, policy: PolicyConfig) -> bool:
    return transcript.context_tokens() >= policy.effective_trigger()


class Triggered:
    """The skeleton of every built-in strategy: below the effective trigger there is no
    plan, whoever asks (plan_for's gate says why; a strategy asked directly, as auto asks
    its candidates, answers the same); above it, the strategy's own `propose`."""

    id: str

    def evaluate(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
    ) -> CompactionPlan | None:
        """A plan, or None below the effective trigger or when there is nothing to do."""
        if not above_trigger(transcript, policy):
            return None
        return self.propose(transcript, policy, ctx)

    def propose(
        self, transcript: Transcript, policy: PolicyConfig, ctx: EvalContext
    ) -> CompactionPlan | None:
        """The strategy's plan for a transcript at or over its trigger (None: nothing to do)."""
        raise NotImplementedError


def elision_savings(item: TranscriptItem, slope: float = 1.0) -> int:
    """Tokens freed by stubbing an item: its elidable bytes less a 96-byte stub per part,
    estimated, capped at the item's own estimate; 0 for items that are not elidable. In the
    provider's tokens with the session's `slope` (core.calibration), else in estimated ones."""
    # item.elidable spelled out: this runs for every candidate of every strategy.
    n_bytes, tokens = item.elidable_bytes, item.est_tokens
    if n_bytes is None or n_bytes <= 0 or tokens <= 0 or not item.active:
        return 0
    parts = max(1, item.elidable_parts)
    saved = max(
        0, min(tokens, estimate_tokens(n_bytes) - estimate_tokens(STUB_BUDGET_BYTES * parts))
    )
    return saved if slope == 1.0 else round(saved * slope)


def card_tokens(transcript: Transcript, digest: DigestBlock) -> int:
    """What the state card adds to the context, in the provider's tokens."""
    return transcript.calibration.tokens(digest.estimate_overhead())


def elidable_tokens(transcript: Transcript) -> int:
    """Estimated tokens of every elidable payload (the tuner's elidable share)."""
    return sum(estimate_tokens(item.elidable_bytes or 0) for item in elidable_items(transcript))


def candidates(
    transcript: Transcript, policy: PolicyConfig, ctx: EvalContext = NO_CONTEXT
) -> list[TranscriptItem]:
    """Elidable items outside the protected tail that free something, oldest first (once per
    memo: most strategies start here)."""
    keep = policy.keep_recent_tool_outputs
    reasoning = policy.reasoning_candidates(transcript.provider)
    images = policy.drop_old_images
    memo = ctx.memo_for(transcript)
    if memo is None:
        return _candidates(transcript, keep, reasoning, images)
    return memo.candidates(
        (keep, reasoning, images), lambda: _candidates(transcript, keep, reasoning, images)
    )


def _candidates(
    transcript: Transcript, keep_recent_tool_outputs: int, reasoning: bool, images: bool
) -> list[TranscriptItem]:
    elidable = elidable_items(transcript, reasoning)
    protected = protected_of(elidable, keep_recent_tool_outputs)
    in_progress = in_progress_start(transcript.items)
    return [
        item
        for item in elidable
        if item.line_index not in protected
        and elision_savings(item) > 0
        and not (item.kind is ItemKind.REASONING and item.line_index > in_progress)
        # the turn in progress keeps its pictures (its prompt's among them)
        and not (item.image_bytes and (not images or item.line_index >= in_progress))
    ]


def walk_to_floor(
    before: int, floor: int, ordered: Iterable[TranscriptItem], slope: float = 1.0
) -> tuple[list[TranscriptItem], int]:
    """Take items in order, subtracting their savings (at `slope`), until the projection is
    at the floor."""
    projected = before
    chosen: list[TranscriptItem] = []
    for item in ordered:
        if projected <= floor:
            break
        chosen.append(item)
        projected -= elision_savings(item, slope)
    return chosen, max(0, projected)


@dataclass(frozen=True, slots=True)
class Chosen:
    lines: list[int]
    digest: DigestBlock
    after: int


def choose_with_digest(
    transcript: Transcript,
    before: int,
    floor: int,
    ordered: Sequence[TranscriptItem],
    payloads: Mapping[int, str] | None = None,
    memo: CardMemo | None = None,
) -> Chosen | None:
    """Choose candidates in order until the projection plus the card's overhead is at the
    floor (reference `choose_with_digest`); None when nothing was chosen.

    A first pass walks to the floor; the card over that choice costs tokens, so later passes
    walk on to floor - overhead, until at the floor, out of candidates, or a pass adds nothing
    (best effort: the minimum-savings gate decides later). Every pass's card comes from one
    CardMemo (`memo` when it serves this transcript and these payloads).
    """
    if memo is None or not memo.serves(transcript, payloads):
        memo = CardMemo(transcript, payloads)
    slope = transcript.calibration.slope
    projected = before
    chosen: list[TranscriptItem] = []
    index = 0
    target = floor
    while True:
        added = 0
        while index < len(ordered) and projected > target:
            chosen.append(ordered[index])
            projected -= elision_savings(ordered[index], slope)
            index += 1
            added += 1
        if not chosen:
            return None
        lines = sorted(item.line_index for item in chosen)
        digest = state_card_digest(transcript, lines, payloads, memo)
        overhead = card_tokens(transcript, digest)
        after = max(0, projected) + overhead
        if after <= floor or index >= len(ordered) or (added == 0 and target != floor):
            return Chosen(lines, digest, after)
        target = floor - overhead


def build_plan(
    strategy: str,
    rationale: str,
    before: int,
    after: int,
    lines: Iterable[int],
    digest: DigestBlock | None = None,
    stub_template: str = DEFAULT_STUB,
) -> CompactionPlan | None:
    """An elide (+ card) plan; None when it elides nothing or would not shrink the context."""
    ordered = sorted(set(lines))
    if not ordered or after >= before:
        return None
    edits: list[Edit] = [ElideEdit(line_indexes=ordered, stub_template=stub_template)]
    if digest is not None:
        edits.append(InjectDigestEdit(digest=digest))
    return CompactionPlan(
        strategy=strategy,
        rationale=rationale,
        edits=edits,
        context_tokens_before=before,
        context_tokens_after=after,
    )


def prefix_tokens(transcript: Transcript, plan: CompactionPlan | None) -> int:
    """Estimated tokens before the first elided line: the prefix a rewrite leaves identical.
    The whole context when nothing is elided (provider plans): the plan's `before`, as the
    reference reports it. The items' estimates can add up to more than the context the
    provider reports, so the prefix is capped at it (the reference caps only auto's share)."""
    before = plan.context_tokens_before if plan is not None else transcript.context_tokens()
    lines = plan.elided_lines if plan is not None else []
    if not lines:
        return before
    first = min(lines)
    estimated = sum(
        item.est_tokens for item in transcript.items if item.active and item.line_index < first
    )
    return min(estimated, before)
