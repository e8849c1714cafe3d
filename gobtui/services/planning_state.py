"""What the dashboard's plan screens ask of the planning service, in one place.

`policy_for` is the single point that decides a session's policy and strategy (defaults for
now; the lead switches it to the config.toml layers). `PreviewPlanner` plans one loaded
session with any strategy and measures what the preview header shows. No Textual here: the
screens call this from thread workers, and tests call it directly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gobtui.adapters.config.config_file import ConfigError
from gobtui.adapters.planning.load import (
    LoadedSession,
    load_session,
    plan_session,
)
from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.admission import protected_tail_start
from gobtui.core.context_words import fills_words
from gobtui.core.edits import CacheEditEdit, CompactionPlan, NoPlan, ProviderCompactEdit
from gobtui.core.limits import MAX_POLICY_TOKENS
from gobtui.core.model import ItemKind, SessionSummary
from gobtui.core.policy import PolicyConfig, QuotaPressure, capped_to_window
from gobtui.core.probes import Probe, extract_probes, probe_recall
from gobtui.core.strategies import STRATEGIES
from gobtui.core.strategies.common import elidable_tokens, prefix_tokens
from gobtui.core.verify import FindingCode, verify
from gobtui.services import policies
from gobtui.services.adaptive import Adapted, adapt
from gobtui.view_models.preview_rows import PairRow, build_rows, split_lines

DEFAULT_STRATEGY = "auto"
STRATEGY_IDS: tuple[str, ...] = tuple(STRATEGIES)


def load_for_plan(summary: SessionSummary) -> LoadedSession:
    """The session behind a board row, loaded for a plan."""
    return load_session(Path(summary.path), summary.provider)


def policy_for(summary: SessionSummary) -> tuple[PolicyConfig, str]:
    """The policy and strategy a session is planned with: the config.toml layers."""
    try:
        resolved = policies.current().resolve(summary)
    except ConfigError:
        return PolicyConfig(), DEFAULT_STRATEGY  # the CLI reported it before the app started
    policy = capped_to_window(
        resolved.policy, summary.provider, summary.context_window
    )  # as the board marks it
    if resolved.strategy not in STRATEGIES:
        return policy, DEFAULT_STRATEGY  # external commands run from the CLI only
    return policy, resolved.strategy


def tuned_for(session: LoadedSession, policy: PolicyConfig) -> Adapted:
    """The policy a loaded session is planned with: `policy` as it is, or (adaptive) the
    tuner's, which knows the items here, as `gobtui plan` does (gobtui.services.adaptive)."""
    summary = session.transcript.summary
    window = summary.context_window if summary is not None else None
    transcript = session.transcript
    return adapt(
        policy,
        provider=session.provider,
        session_id=session.session_id,
        path=str(session.path),
        window=window,
        context_tokens=transcript.context_tokens(),
        elidable_tokens=elidable_tokens(transcript) if policy.adaptive else None,
        recent=policies.current().recent if policy.adaptive else None,
    )


def ignoring_trigger(policy: PolicyConfig, context_tokens: int) -> PolicyConfig:
    """The policy with its trigger lowered to the session's current context ("plan anyway").

    A policy whose effective trigger is already reached is returned as is. The floor drops
    to half the new trigger when it would otherwise sit at or above it.
    """
    if context_tokens >= policy.effective_trigger():
        return policy
    trigger = min(max(1, context_tokens), MAX_POLICY_TOKENS)
    floor = policy.floor_tokens if policy.floor_tokens < trigger else trigger // 2
    return policy.model_copy(
        update={
            "trigger_tokens": trigger,
            "floor_tokens": floor,
            "quota_pressure": QuotaPressure.NORMAL,
        }
    )


def session_moved_on(
    planned: SessionSummary,
    planned_bytes: int,
    changed: Iterable[SessionSummary],
    removed: Iterable[str],
) -> bool:
    """A change report says the planned file is no longer what was planned: it was removed,
    or its size moved. A summary re-read from the same bytes (history completion) is not."""
    if planned.path in removed:
        return True
    return any(s.path == planned.path and s.bytes != planned_bytes for s in changed)


def next_strategy(current: str, step: int) -> str:
    """The strategy `step` places away in registry order, wrapping around."""
    index = STRATEGY_IDS.index(current) if current in STRATEGY_IDS else 0
    return STRATEGY_IDS[(index + step) % len(STRATEGY_IDS)]


@dataclass(frozen=True, slots=True)
class PreviewFigures:
    """The header of a preview: one strategy's plan measured on one loaded session."""

    strategy: str
    context_before: int
    effective_trigger: int
    context_after: int | None = None
    no_plan_reason: str | None = None
    why: str | None = None
    """A no plan's reason in the user's terms (NoPlan.why)."""
    fills: str = ""
    """What fills the context, by kind (core.context_words.fills_words)."""
    rationale: str = ""
    control: str | None = None
    """What a control plan asks of the provider (no file is written)."""
    prefix_tokens: int | None = None
    probes_total: int = 0
    probes_recalled: int = 0
    valid: bool | None = None
    findings: tuple[str, ...] = ()
    admitted: bool | None = None
    admission_code: str | None = None
    card_bytes: int = 0
    elided: int = 0
    left_out: int = 0
    """Of the elided records, the thinking the fork leaves out (core.thinking)."""
    added_records: int = 0
    client_compacts: bool | None = None
    """The provider's client will compact the fork itself on resume (None: no file plan)."""
    adaptive: str | None = None
    """What the adaptive tuner chose and why (Adapted.line), None when it is off."""

    @property
    def saved(self) -> int:
        if self.context_after is None:
            return 0
        return max(0, self.context_before - self.context_after)

    @property
    def saved_share(self) -> float | None:
        if self.context_after is None or self.context_before <= 0:
            return None
        return self.saved / self.context_before

    @property
    def recall(self) -> float | None:
        if self.context_after is None or self.probes_total == 0:
            return None
        return self.probes_recalled / self.probes_total


@dataclass(frozen=True, slots=True)
class PlanPreview:
    """Everything the preview screen draws; the record lines are kept for the text diff."""

    figures: PreviewFigures
    rows: list[PairRow]
    source_lines: list[bytes] = field(repr=False)
    candidate_lines: list[bytes] = field(repr=False)
    ignore_trigger: bool = False

    def record_bytes(self, row: PairRow) -> tuple[bytes | None, bytes | None]:
        """(original, rewritten) bytes of the record a row shows; None where it has none."""
        before = self.source_lines[row.before.line] if row.before is not None else None
        after = self.candidate_lines[row.after.line] if row.after is not None else None
        return before, after


def _control_text(plan: CompactionPlan) -> str | None:
    for edit in plan.edits:
        if isinstance(edit, ProviderCompactEdit):
            return f"asks the provider to compact ({edit.control})"
        if isinstance(edit, CacheEditEdit):
            return f"drops {len(edit.tool_use_ids)} tool results at the API layer"
    return None


class PreviewPlanner:
    """Plans one loaded session; probes and the source's own verify findings are computed
    once and reused by every strategy."""

    def __init__(self, session: LoadedSession) -> None:
        self.session = session
        self.source_lines = split_lines(session.data)
        self._probes: list[Probe] | None = None
        self._source_findings: Counter[str] | None = None

    def _shared_probes(self) -> list[Probe]:
        if self._probes is None:
            self._probes = extract_probes(self.session.transcript, self.session.payloads)
        return self._probes

    def _findings(self) -> Counter[str]:
        if self._source_findings is None:
            report = self.session.source_checks.report()
            self._source_findings = Counter(f.code.value for f in report.findings)
        return self._source_findings

    def preview(
        self, strategy: str, policy: PolicyConfig, live: bool, *, ignore_trigger: bool = False
    ) -> PlanPreview:
        session = self.session
        transcript = session.transcript
        adapted = tuned_for(session, policy)
        policy = adapted.policy
        if ignore_trigger:
            policy = ignoring_trigger(policy, transcript.context_tokens())
        outcome = plan_session(session, strategy, policy, live)
        result = outcome.result
        if isinstance(result, NoPlan):
            figures = PreviewFigures(
                strategy=strategy,
                context_before=result.context_tokens_before,
                effective_trigger=result.effective_trigger_tokens,
                no_plan_reason=result.reason_code.value,
                why=result.why,
                adaptive=adapted.line(),
            )
            rows = build_rows(self.source_lines, self.source_lines, transcript)
            return PlanPreview(figures, rows, self.source_lines, self.source_lines, ignore_trigger)
        plan = result
        admission = outcome.admission
        tail = protected_tail_start(transcript, policy.keep_recent_tool_outputs)
        score = probe_recall(self._shared_probes(), transcript, plan, tail, session.payloads)
        digest = plan.digest
        candidate_lines = self.source_lines
        valid: bool | None = None
        findings: tuple[str, ...] = ()
        left_out: set[int] = set()
        if plan.rewrites_file and not plan.is_control and admission and admission.admitted:
            overlay = session.rewriter.overlay(plan)
            candidate = session.rewriter.materialize(overlay)
            candidate_lines = split_lines(candidate)
            left_out = {index for index, line in overlay.replaced.items() if not line}
            report = verify(candidate, verify_checks(session.provider))
            codes = Counter(f.code.value for f in report.findings)
            if session.rewriter.thinking_violation(overlay) is not None:
                codes[FindingCode.THINKING_AFTER_CHANGE.value] += 1
            valid = not (codes - self._findings())  # what the source carried is not held against it
            findings = tuple(sorted(codes))
        dropped_ids = {
            tool_id
            for edit in plan.edits
            if isinstance(edit, CacheEditEdit)
            for tool_id in edit.tool_use_ids
        }
        api_dropped = {
            item.line_index
            for item in transcript.items
            if item.kind is ItemKind.TOOL_RESULT and dropped_ids.intersection(item.tool_use_ids)
        }
        rows = build_rows(
            self.source_lines,
            candidate_lines,
            transcript,
            elided=set(plan.elided_lines),
            api_dropped=api_dropped,
            left_out=left_out,
            card=digest.render() if digest is not None else None,
        )
        figures = PreviewFigures(
            strategy=strategy,
            context_before=plan.context_tokens_before,
            effective_trigger=policy.effective_trigger(),
            context_after=plan.context_tokens_after,
            rationale=plan.rationale,
            control=_control_text(plan),
            prefix_tokens=prefix_tokens(transcript, plan),
            probes_total=score.probes_total,
            probes_recalled=score.probes_recalled,
            valid=valid,
            findings=findings,
            admitted=admission.admitted if admission else None,
            admission_code=admission.code.value if admission and admission.code else None,
            card_bytes=len(digest.render().encode("utf-8", "surrogatepass")) if digest else 0,
            elided=len(plan.elided_lines),
            left_out=len(left_out),
            fills=fills_words(session.composition),
            adaptive=adapted.line(),
            added_records=max(0, len(candidate_lines) + len(left_out) - len(self.source_lines)),
            client_compacts=plan.projection.client_compacts if plan.projection else None,
        )
        return PlanPreview(figures, rows, self.source_lines, candidate_lines, ignore_trigger)
