"""Planning on a real file: load it once, plan with one strategy, or evaluate them all.

The source is read once into memory and bound to its sha256; every candidate is built from
those bytes in memory (a temporary copy that never touches the disk), so an eval cannot
disturb the session it measures, and `apply` can later refuse a source that moved on.

Loading reads every line once (adapters.rewrite_lines.read_source): the elided-output heads,
the card's scan of the file and verify's per-line facts come from that one pass. A session
then keeps what its plans share: a PlanMemo (per-item card lines, each strategy's plan,
admissions), a SourceRewriter (rewritten lines) and SourceChecks (the source's verify state),
so an eval builds each candidate as an overlay of the source and verifies only its new lines.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, partial
from pathlib import Path

from adapters.config_file import ExternalCommand
from adapters.external import STRATEGY_ID as EXTERNAL_ID
from adapters.external import ExternalError, run_external
from adapters.processes import Aside
from adapters.providers import parse_transcript
from adapters.rewrite import CardScanner, RewriteError
from adapters.rewrite_lines import SourceLines, SourceRewriter, read_source
from core.admission import Admission, admit, protected_tail_start
from core.evaluation import EvalRow, RowStatus, mark_best
from core.limits import EVAL_PAYLOAD_BYTES, MAX_PLAN_ITEMS, MAX_PLAN_SOURCE_BYTES
from core.model import Provider, Transcript
from core.plan import CompactionPlan, NoPlan, NoPlanReason
from core.policy import PolicyConfig
from core.probe_witness import ProbeWitness
from core.probes import ProbeScore, extract_probes
from core.strategies import STRATEGIES, EvalContext, PlanMemo, UnknownStrategyError, plan_for
from core.strategies.common import admit_with, prefix_tokens
from core.verify import SourceChecks, VerifyReport, accepts

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
    """A transcript read once: its bytes, their digest, the parse and elided-output heads.

    What load_session's pass found besides (line starts, the card's scan, verify's line
    facts) rides along; a session built without them computes each on first use. The memo,
    rewriter and checks are made on first use and kept: they serve this session only.
    """

    path: Path
    provider: Provider
    data: bytes
    source_sha256: str
    transcript: Transcript
    payloads: Mapping[int, str] = field(repr=False)
    starts: list[int] | None = field(default=None, repr=False, compare=False)
    card_scan: CardScanner | None = field(default=None, repr=False, compare=False)
    checks: SourceChecks | None = field(default=None, repr=False, compare=False)

    @property
    def session_id(self) -> str:
        return self.transcript.session_id

    def context(self, live: bool) -> EvalContext:
        return EvalContext(live=live, payloads=self.payloads, memo=self.memo)

    @cached_property
    def lines(self) -> SourceLines:
        """The source's lines (as split_lines cuts them), sliced on demand."""
        return SourceLines(self.data, self.starts)

    @cached_property
    def memo(self) -> PlanMemo:
        return PlanMemo(self.transcript, self.payloads)

    @cached_property
    def rewriter(self) -> SourceRewriter:
        return SourceRewriter(
            self.data,
            self.provider,
            self.transcript,
            lines=self.lines,
            source_sha256=bytes.fromhex(self.source_sha256),
            scan=self.card_scan,
        )

    @cached_property
    def source_checks(self) -> SourceChecks:
        """verify() of the source, kept line by line for its candidates."""
        if self.checks is not None:
            return self.checks
        return SourceChecks(self.data, self.provider, None, self.lines.starts)


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
    source = read_source(data, provider, transcript, EVAL_PAYLOAD_BYTES)
    return LoadedSession(
        path=path,
        provider=provider,
        data=data,
        source_sha256=hashlib.sha256(data).hexdigest(),
        transcript=transcript,
        payloads=source.payloads,
        starts=source.lines.starts,
        card_scan=source.scan,
        checks=source.checks,
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
    ctx = session.context(live)
    result = plan_for(strategy, session.transcript, policy, ctx)
    if isinstance(result, NoPlan):
        return PlanOutcome(strategy, result, None)
    return PlanOutcome(strategy, result, admit_with(result, session.transcript, policy, ctx))


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
    """The compacted transcript a file plan produces (identity unchanged): apply_plan's
    bytes, built from the session's rewriter."""
    return session.rewriter.apply(plan)


@dataclass
class _EvalShared:
    """What every row of one eval reuses: where the protected tail starts, and the source's
    own verify report."""

    tail_start: int | None
    source_report: VerifyReport
    """What the source itself already gets from verify (see core.verify.accepts)."""


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
    # Probes are only needed to score the rows: worked out aside (another core) meanwhile.
    extracting = Aside.start(partial(extract_probes, transcript, session.payloads))
    try:
        shared = _EvalShared(
            tail_start=protected_tail_start(transcript, policy.keep_recent_tool_outputs),
            source_report=session.source_checks.report(),
        )
        found: list[tuple[EvalRow, CompactionPlan | None, float]] = []
        for done, name in enumerate(names):
            if progress is not None:
                progress(done, len(names), name)
            started = time.perf_counter()
            try:
                row, plan = _evaluate_one(session, name, policy, live, shared)
            except (RewriteError, ValueError) as error:
                row, plan = _error_row(name, transcript, error), None
            found.append((row, plan, time.perf_counter() - started))
        if progress is not None:
            progress(len(names), len(names), "probes")
        probes = ProbeWitness(extracting.result(), transcript, session.payloads)
    finally:
        extracting.close()
    rows: list[EvalRow] = []
    for row, plan, seconds in found:
        started = time.perf_counter()
        try:
            scored = _with_probes(row, probes.score(plan, shared.tail_start)) if plan else row
        except ValueError as error:  # one strategy's failure is its row's, as above
            scored = _error_row(row.strategy, transcript, error)
        elapsed = (seconds + time.perf_counter() - started) * 1000
        rows.append(scored.model_copy(update={"duration_ms": round(elapsed, 1)}))
    if progress is not None:
        progress(len(names), len(names), "done")
    return mark_best(rows, policy.min_savings_tokens)


def _error_row(name: str, transcript: Transcript, error: Exception) -> EvalRow:
    return EvalRow(
        strategy=name,
        status=RowStatus.ERROR,
        context_tokens_before=transcript.context_tokens(),
        error=str(error).splitlines()[0] if str(error) else type(error).__name__,
    )


def _with_probes(row: EvalRow, score: ProbeScore) -> EvalRow:
    return row.model_copy(
        update={
            "probes_total": score.probes_total,
            "probes_recalled": score.probes_recalled,
            "recall": round(score.recall, 4),
            "tail_intact": score.tail_intact,
            "missed_probes": score.missed_probes,
        }
    )


def _evaluate_one(
    session: LoadedSession, name: str, policy: PolicyConfig, live: bool, shared: _EvalShared
) -> tuple[EvalRow, CompactionPlan | None]:
    """One strategy's row, and its plan for the probe score (filled in once probes are in)."""
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
        ), None
    plan = result
    digest = plan.digest
    row = EvalRow(
        strategy=name,
        status=RowStatus.PLAN,
        est_reclaimed=plan.est_savings,
        context_tokens_before=plan.context_tokens_before,
        context_tokens_after=plan.context_tokens_after,
        prefix_tokens=prefix_tokens(transcript, plan),
        bytes_before=len(session.data),
        elided_items=len(plan.elided_lines),
        card_bytes=len(digest.render().encode("utf-8", "surrogatepass")) if digest else 0,
        control=plan.is_control,
    )
    assert outcome.admission is not None
    if not outcome.admission.admitted:
        code = outcome.admission.code
        refused = {"status": RowStatus.REFUSED, "reason_code": code.value if code else None}
        return row.model_copy(update=refused), plan
    if plan.is_control:
        return row, plan
    candidate = session.rewriter.overlay(plan)
    report = session.source_checks.candidate_report(candidate.replaced, candidate.appended)
    return row.model_copy(
        update={
            "bytes_after": candidate.size,
            "valid": accepts(report, shared.source_report),
            "verify_errors": report.errors,
            "verify_warnings": report.warnings,
            "findings": sorted({finding.code.value for finding in report.findings}),
        }
    ), plan
