"""Planning on a real file: load it once, plan with one strategy, or evaluate them all.

The source is read once into memory and bound to its sha256; every candidate is built from
those bytes in memory (a temporary copy that never touches the disk), so an eval cannot
disturb the session it measures, and `apply` can later refuse a source that moved on.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from adapters.config_file import ExternalCommand
from adapters.external import STRATEGY_ID as EXTERNAL_ID
from adapters.external import ExternalError, run_external
from adapters.providers import parse_transcript
from adapters.rewrite import RewriteError, apply_plan, payload_texts
from core.admission import Admission, admit, protected_tail_start
from core.evaluation import EvalRow, RowStatus, mark_best
from core.limits import EVAL_PAYLOAD_BYTES, MAX_PLAN_ITEMS, MAX_PLAN_SOURCE_BYTES
from core.model import Provider, Transcript
from core.plan import CompactionPlan, NoPlan, NoPlanReason
from core.policy import PolicyConfig
from core.probes import Probe, extract_probes, probe_recall
from core.strategies import STRATEGIES, EvalContext, UnknownStrategyError, plan_for
from core.strategies.common import prefix_tokens
from core.verify import verify

Progress = Callable[[int, int, str], None]
"""(done, total, what) while an eval runs."""


class PlanningErrorCode(StrEnum):
    UNREADABLE = "unreadable"
    TOO_LARGE = "too_large"
    TOO_MANY_ITEMS = "too_many_items"
    UNKNOWN_STRATEGY = "unknown_strategy"
    EXTERNAL_FAILED = "external_failed"


class PlanningError(Exception):
    """A one-line reason the session cannot be planned (no transcript content)."""

    def __init__(self, code: PlanningErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class LoadedSession:
    """A transcript read once: its bytes, their digest, the parse and elided-output heads."""

    path: Path
    provider: Provider
    data: bytes
    source_sha256: str
    transcript: Transcript
    payloads: Mapping[int, str] = field(repr=False)

    @property
    def session_id(self) -> str:
        return self.transcript.session_id

    def context(self, live: bool) -> EvalContext:
        return EvalContext(live=live, payloads=self.payloads)


def load_session(path: Path, provider: Provider) -> LoadedSession:
    """Read and parse `path` for planning; PlanningError when it cannot be planned."""
    try:
        size = os.stat(path).st_size
        if size > MAX_PLAN_SOURCE_BYTES:
            raise PlanningError(
                PlanningErrorCode.TOO_LARGE,
                f"{path} is {size} bytes, over the planning limit of {MAX_PLAN_SOURCE_BYTES}",
            )
        data = path.read_bytes()
        transcript = parse_transcript(provider, str(path))
    except OSError as error:
        raise PlanningError(
            PlanningErrorCode.UNREADABLE, f"cannot read {path}: {error.strerror or error}"
        ) from None
    if len(transcript.items) > MAX_PLAN_ITEMS:
        raise PlanningError(
            PlanningErrorCode.TOO_MANY_ITEMS,
            f"{len(transcript.items)} items, over the planning limit of {MAX_PLAN_ITEMS}",
        )
    elidable = [item.line_index for item in transcript.items if item.elidable]
    payloads = payload_texts(data, provider, elidable, EVAL_PAYLOAD_BYTES)
    return LoadedSession(
        path=path,
        provider=provider,
        data=data,
        source_sha256=hashlib.sha256(data).hexdigest(),
        transcript=transcript,
        payloads=payloads,
    )


@dataclass(frozen=True)
class PlanOutcome:
    """One strategy's answer: a plan with its admission, or a no-plan object."""

    strategy: str
    result: CompactionPlan | NoPlan
    admission: Admission | None

    @property
    def plan(self) -> CompactionPlan | None:
        """The plan when there is one and admission accepts it."""
        if isinstance(self.result, CompactionPlan) and self.admission and self.admission.admitted:
            return self.result
        return None


def check_strategy(strategy: str, external: ExternalCommand | None = None) -> None:
    if strategy == EXTERNAL_ID and external is not None:
        return
    if strategy not in STRATEGIES:
        raise PlanningError(PlanningErrorCode.UNKNOWN_STRATEGY, str(UnknownStrategyError(strategy)))


def plan_session(
    session: LoadedSession,
    strategy: str,
    policy: PolicyConfig,
    live: bool = False,
    external: ExternalCommand | None = None,
) -> PlanOutcome:
    """One strategy behind the central gates, then admission. `external` is the trusted
    command of a preset, run only when `strategy` is "external" and the trigger is reached."""
    check_strategy(strategy, external)
    if strategy == EXTERNAL_ID and external is not None:
        return _plan_external(session, policy, external)
    result = plan_for(strategy, session.transcript, policy, session.context(live))
    if isinstance(result, NoPlan):
        return PlanOutcome(strategy, result, None)
    return PlanOutcome(strategy, result, admit(result, session.transcript, policy))


def _plan_external(
    session: LoadedSession, policy: PolicyConfig, external: ExternalCommand
) -> PlanOutcome:
    transcript = session.transcript
    before = transcript.context_tokens()
    if before < policy.effective_trigger():
        return PlanOutcome(
            EXTERNAL_ID,
            NoPlan(
                reason_code=NoPlanReason.BELOW_TRIGGER,
                context_tokens_before=before,
                effective_trigger_tokens=policy.effective_trigger(),
                target_context_tokens=policy.floor_tokens,
                min_savings_tokens=policy.min_savings_tokens,
            ),
            None,
        )
    try:
        result = run_external(
            external.argv,
            transcript,
            session.source_sha256,
            policy,
            trusted=external.trusted,
            timeout_secs=external.timeout_secs,
        )
    except ExternalError as error:
        raise PlanningError(PlanningErrorCode.EXTERNAL_FAILED, str(error)) from None
    if isinstance(result, NoPlan):
        return PlanOutcome(EXTERNAL_ID, result, None)
    return PlanOutcome(EXTERNAL_ID, result, admit(result, transcript, policy))


def candidate_bytes(session: LoadedSession, plan: CompactionPlan) -> bytes:
    """The compacted transcript a file plan produces (identity unchanged)."""
    return apply_plan(session.data, session.provider, plan, session.transcript)


@dataclass
class _EvalShared:
    """What every row of one eval reuses: the probes and where the protected tail starts."""

    probes: list[Probe]
    tail_start: int | None
    source_findings: Counter[str]
    """What the source itself already gets from verify: a candidate is valid when it has no
    errors and adds no finding of its own."""


def evaluate_session(
    session: LoadedSession,
    policy: PolicyConfig,
    strategies: Iterable[str] | None = None,
    live: bool = False,
    progress: Progress | None = None,
) -> list[EvalRow]:
    """Every strategy (or the named ones) on in-memory copies; the best row marked."""
    names = list(strategies) if strategies is not None else list(STRATEGIES)
    for name in names:
        check_strategy(name)
    transcript = session.transcript
    shared = _EvalShared(
        probes=extract_probes(transcript, session.payloads),
        tail_start=protected_tail_start(transcript, policy.keep_recent_tool_outputs),
        source_findings=Counter(
            f.code.value for f in verify(session.data, session.provider).findings
        ),
    )
    rows: list[EvalRow] = []
    for done, name in enumerate(names):
        if progress is not None:
            progress(done, len(names), name)
        started = time.perf_counter()
        try:
            row = _evaluate_one(session, name, policy, live, shared)
        except (RewriteError, ValueError) as error:
            row = EvalRow(
                strategy=name,
                status=RowStatus.ERROR,
                context_tokens_before=transcript.context_tokens(),
                error=str(error).splitlines()[0] if str(error) else type(error).__name__,
            )
        elapsed = (time.perf_counter() - started) * 1000
        rows.append(row.model_copy(update={"duration_ms": round(elapsed, 1)}))
    if progress is not None:
        progress(len(names), len(names), "done")
    return mark_best(rows, policy.min_savings_tokens)


def _evaluate_one(
    session: LoadedSession, name: str, policy: PolicyConfig, live: bool, shared: _EvalShared
) -> EvalRow:
    transcript = session.transcript
    before = transcript.context_tokens()
    outcome = plan_session(session, name, policy, live)
    result = outcome.result
    if isinstance(result, NoPlan):
        return EvalRow(
            strategy=name,
            status=RowStatus.NO_PLAN,
            reason_code=result.reason_code.value,
            context_tokens_before=before,
            context_tokens_after=result.projected_context_tokens_after,
            est_reclaimed=result.projected_savings_tokens or 0,
            bytes_before=len(session.data),
        )
    plan = result
    score = probe_recall(shared.probes, transcript, plan, shared.tail_start, session.payloads)
    digest = plan.digest
    row = EvalRow(
        strategy=name,
        status=RowStatus.PLAN,
        est_reclaimed=plan.est_savings,
        context_tokens_before=plan.context_tokens_before,
        context_tokens_after=plan.context_tokens_after,
        prefix_tokens=prefix_tokens(transcript, plan),
        bytes_before=len(session.data),
        probes_total=score.probes_total,
        probes_recalled=score.probes_recalled,
        recall=round(score.recall, 4),
        tail_intact=score.tail_intact,
        missed_probes=score.missed_probes,
        elided_items=len(plan.elided_lines),
        card_bytes=len(digest.render().encode("utf-8", "surrogatepass")) if digest else 0,
        control=plan.is_control,
    )
    assert outcome.admission is not None
    if not outcome.admission.admitted:
        code = outcome.admission.code
        return row.model_copy(
            update={"status": RowStatus.REFUSED, "reason_code": code.value if code else None}
        )
    if plan.is_control:
        return row
    candidate = candidate_bytes(session, plan)
    report = verify(candidate, session.provider)
    added = Counter(f.code.value for f in report.findings) - shared.source_findings
    return row.model_copy(
        update={
            "bytes_after": len(candidate),
            "valid": report.ok and not added,
            "verify_errors": report.errors,
            "verify_warnings": report.warnings,
            "findings": sorted({finding.code.value for finding in report.findings}),
        }
    )
