"""A session's context in the user's terms: what a fork can reclaim of each kind, and why a
strategy made no plan, in one sentence built from the composition (core.composition).

Pure: transcript, policy and composition in, figures and words out.
"""

from __future__ import annotations

from .composition import Composition, PartKind, split_item
from .edits import NoPlan, NoPlanReason
from .figures import tokens_words
from .model import Transcript
from .policy import PolicyConfig
from .strategies.common import candidates, elision_savings


def reclaimable(
    transcript: Transcript, policy: PolicyConfig, comp: Composition
) -> dict[PartKind, int]:
    """Provider tokens the policy lets a fork cut, by kind: every candidate stubbed (or left
    out), at its kind's fitted cost."""
    out: dict[PartKind, int] = {}
    for item in candidates(transcript, policy):
        split = split_item(item)
        if not split:
            continue
        kind = max(split, key=lambda k: split[k])
        saved = elision_savings(item) * comp.part(kind).coefficient
        out[kind] = out.get(kind, 0) + round(saved)
    return out


def context_words(comp: Composition) -> str:
    """'141k: 14k fixed overhead, 53k earlier thinking, 21k in 152 tool outputs, ...'"""
    pieces = []
    for part in comp.parts:
        if part.tokens <= 0:
            continue
        count = (
            f" in {part.items} " if part.items > 1 and part.kind is PartKind.TOOL_OUTPUTS else " "
        )
        pieces.append(f"{tokens_words(part.tokens)}{count}{part.kind.words}")
    return f"{tokens_words(comp.reported)}: " + ", ".join(pieces)


def fills_words(comp: Composition) -> str:
    """'fills 25k fixed · 13k think · 11k tools · 1.3k talk · 24k reachable': the kinds, then
    what a fork can reach at all (not the fixed overhead, not the conversation)."""
    pieces = [f"{tokens_words(p.tokens)} {p.kind.short}" for p in comp.parts if p.tokens > 0]
    reachable = tokens_words(comp.total - comp.unreachable)
    return f"fills {' · '.join(pieces)} · {reachable} reachable"


def why_no_plan(
    no_plan: NoPlan, transcript: Transcript, policy: PolicyConfig, comp: Composition
) -> str:
    """One sentence: what fills the context, what a fork could reclaim, and what would
    reclaim more."""
    head = context_words(comp)
    if no_plan.reason_code is NoPlanReason.BELOW_TRIGGER:
        trigger = tokens_words(no_plan.effective_trigger_tokens)
        return f"{head}; below the trigger ({trigger}), nothing to do yet"
    reach = reclaimable(transcript, policy, comp)
    total = sum(reach.values())
    fixed = comp.part(PartKind.FIXED).tokens + comp.part(PartKind.CONVERSATION).tokens
    sentence = (
        f"{head}; a fork could reclaim {tokens_words(total)}"
        f" (minimum {tokens_words(policy.min_savings_tokens)}), and "
        f"{tokens_words(fixed)} is fixed overhead and conversation no fork reaches"
    )
    hints = _hints(transcript, policy, comp)
    return sentence + (f"; {hints}" if hints else "")


def _hints(transcript: Transcript, policy: PolicyConfig, comp: Composition) -> str:
    """What a policy change would reclaim besides."""
    hints = []
    if not policy.drop_old_thinking and comp.part(PartKind.REASONING).tokens:
        more = reclaimable(transcript, policy.model_copy(update={"drop_old_thinking": True}), comp)
        gain = more.get(PartKind.REASONING, 0)
        if gain:
            hints.append(f"drop_old_thinking = true would free {tokens_words(gain)}")
    if policy.keep_recent_tool_outputs:
        loose = policy.model_copy(update={"keep_recent_tool_outputs": 0})
        now, then = reclaimable(transcript, policy, comp), reclaimable(transcript, loose, comp)
        gain = sum(then.values()) - sum(now.values())
        if gain > 0:
            hints.append(
                f"the {policy.keep_recent_tool_outputs} newest tool outputs it keeps hold "
                f"{tokens_words(gain)}"
            )
    return "; ".join(hints)


def composition_object(comp: Composition, reach: dict[PartKind, int]) -> dict[str, object]:
    """The `composition` object of `detect --json` and `explain --json`."""
    return {
        "reported_tokens": comp.reported,
        "fit_points": comp.points,
        "fit_error": comp.fit_error,
        "unreachable_tokens": comp.unreachable,
        "reclaimable_tokens": sum(reach.values()),
        "parts": {
            part.kind.value: {
                "tokens": part.tokens,
                "items": part.items,
                "tokens_per_estimated_token": part.coefficient,
                "reachable": part.reachable,
                "reclaimable_tokens": reach.get(part.kind, 0),
            }
            for part in comp.parts
        },
    }
