"""What planning one transcript can share between strategies, passes and plans.

`auto` evaluates eight strategies an eval then runs on their own, every card-writing strategy
builds cards over mostly the same items, and each plan is admitted by auto and again by the
host. A PlanMemo keeps those answers for one transcript and payload map: the per-item card
lines (any policy), each strategy's plan by (strategy object, policy, live), each plan's
admission by its edits, and a scorer's scores by its candidates. Everything it holds is a
pure function of those keys, so an answer from the memo is the answer a fresh computation
would give.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..admission import Admission, admit
from ..digest import CardMemo
from ..edits import CompactionPlan, Edit
from ..model import Transcript, TranscriptItem
from ..policy import PolicyConfig

PlanKey = tuple[int, PolicyConfig, bool]
AdmissionKey = tuple[int, int, int, PolicyConfig]
Scores = dict[int, float | None]
ScoresKey = tuple[int, tuple[int, ...]]
"""(id of the scorer, the candidates' lines)."""


class PlanMemo:
    """Shared answers for one transcript and payload map (see the module docstring).

    A memo answers only for the very transcript and payload map it was made with; callers
    check `serves` first (the helpers of core.strategies.common do).
    """

    __slots__ = ("_admissions", "_candidates", "_plans", "_scores", "cards")

    def __init__(self, transcript: Transcript, payloads: Mapping[int, str] | None = None) -> None:
        self.cards = CardMemo(transcript, payloads)
        self._plans: dict[PlanKey, tuple[object, CompactionPlan | None]] = {}
        self._admissions: dict[AdmissionKey, tuple[list[Edit], Admission]] = {}
        self._candidates: dict[tuple[int, bool, bool], list[TranscriptItem]] = {}
        self._scores: dict[ScoresKey, tuple[object, Scores]] = {}

    @property
    def transcript(self) -> Transcript:
        return self.cards.transcript

    def serves(self, transcript: Transcript, payloads: Mapping[int, str] | None) -> bool:
        return self.cards.serves(transcript, payloads)

    def plan(
        self,
        strategy: object,
        policy: PolicyConfig,
        live: bool,
        compute: Callable[[], CompactionPlan | None],
    ) -> CompactionPlan | None:
        """The strategy's answer under `policy`, computed once. Keyed by the strategy object
        (kept alive here, so its id is not reused): two instances may be configured apart."""
        key = (id(strategy), policy, live)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = (strategy, compute())
        return found[1]

    def candidates(
        self, key: tuple[int, bool, bool], compute: Callable[[], list[TranscriptItem]]
    ) -> list[TranscriptItem]:
        """The elision candidates (core.strategies.common.candidates), computed once per
        (protected-tail size, reasoning and image candidates): the only parts of a policy they
        read. A
        copy: callers may edit it."""
        found = self._candidates.get(key)
        if found is None:
            found = self._candidates[key] = compute()
        return list(found)

    @staticmethod
    def scores_key(scorer: object, pool: Sequence[TranscriptItem]) -> ScoresKey:
        return (id(scorer), tuple(item.line_index for item in pool))

    def scores(
        self, scorer: object, pool: Sequence[TranscriptItem], compute: Callable[[], Scores]
    ) -> Scores:
        """The scorer's keep-probabilities for these candidates, computed once."""
        key = self.scores_key(scorer, pool)
        found = self._scores.get(key)
        if found is None:
            found = self._scores[key] = (scorer, compute())
        return found[1]

    def admission(self, plan: CompactionPlan, policy: PolicyConfig) -> Admission:
        """admit(plan, ...), once per edit list: admission reads a plan's edits and its token
        figures only, so a renamed copy (auto's) shares the answer of the plan it copies."""
        key = (id(plan.edits), plan.context_tokens_before, plan.context_tokens_after, policy)
        found = self._admissions.get(key)
        if found is None:
            found = self._admissions[key] = (plan.edits, admit(plan, self.transcript, policy))
        return found[1]
