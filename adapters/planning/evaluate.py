"""Evaluate every strategy on a loaded session: the rows `gobtui eval` and the eval screen show.

An eval has three parts. Each strategy is planned (through the session's memo, so what auto
and the others share is worked out once). Each admitted file plan is then built as an overlay
of the source and verified line by line: the checks. Last, each plan's probe recall is scored
against the session's probes (extracted once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ...core.admission import protected_tail_start
from ...core.edits import CompactionPlan, NoPlan
from ...core.evaluation import EvalRow, RowStatus, mark_best
from ...core.model import Transcript
from ...core.policy import PolicyConfig
from ...core.probe_witness import ProbeWitness
from ...core.probes import ProbeScore
from ...core.strategies import STRATEGIES
from ...core.strategies.common import prefix_tokens
from ...core.verify import FindingCode, VerifyReport, accepts
from ..providers.full_parse import gc_paused
from ..providers.interface import RewriteError
from .load import LoadedSession, Progress, check_strategy, plan_session


@dataclass
class _Planned:
    """One strategy's row so far, its plan (for the probe score), whether its candidate is
    still to be checked, and the seconds spent on it."""

    row: EvalRow
    plan: CompactionPlan | None
    to_check: bool
    seconds: float
    recall: ProbeScore | ValueError | None = None
    """Its plan's probe score (or why it has none), worked out while a child checks."""


def evaluate_session(
    session: LoadedSession,
    policy: PolicyConfig,
    strategies: Iterable[str] | None = None,
    live: bool = False,
    progress: Progress | None = None,
) -> list[EvalRow]:
    """Every strategy (or the named ones) on in-memory copies; the best row marked.

    `progress` counts two steps per strategy: its plan, then its check (at once when it
    needs none)."""
    names = list(strategies) if strategies is not None else list(STRATEGIES)
    for name in names:
        check_strategy(name)
    transcript = session.transcript
    total = 2 * len(names)

    def report(done: int, what: str) -> None:
        if progress is not None:
            progress(done, total, what)

    # Planning allocates much and makes no cycles: the collector would only rescan the heap.
    with gc_paused():
        tail_start = protected_tail_start(transcript, policy.keep_recent_tool_outputs)
        source_report = session.source_checks.report()
        planned: list[_Planned] = []
        for done, name in enumerate(names):
            report(done, name)
            planned.append(_plan_row(session, name, policy, live))
        _check_all(session, planned, source_report, len(names), report)
        report(total, "probes")
        witness = ProbeWitness(session.probes, transcript, session.payloads)
        for entry in planned:
            _score_probes(entry, witness, tail_start)
        rows = [_scored(entry, transcript) for entry in planned]
        report(total, "done")
        window = transcript.summary.context_window if transcript.summary is not None else None
        ceiling = policy.fork_ceiling(transcript.provider, window)
        return mark_best(rows, policy.min_savings_tokens, ceiling)


def _plan_row(session: LoadedSession, name: str, policy: PolicyConfig, live: bool) -> _Planned:
    """One strategy's row before its check, and its plan for the probe score."""
    started = time.perf_counter()
    transcript = session.transcript
    try:
        outcome = plan_session(session, name, policy, live)
    except (RewriteError, ValueError) as error:  # one strategy's failure is its row's
        return _Planned(_error_row(name, transcript, error), None, False, _since(started))
    result = outcome.result
    if isinstance(result, NoPlan):
        row = EvalRow(
            strategy=name,
            status=RowStatus.NO_PLAN,
            reason_code=result.reason_code.value,
            context_tokens_before=transcript.context_tokens(),
            context_tokens_after=result.projected_context_tokens_after,
            est_reclaimed=result.projected_savings_tokens or 0,
            bytes_before=len(session.source_bytes),
        )
        return _Planned(row, None, False, _since(started))
    plan = result
    digest = plan.digest
    row = EvalRow(
        strategy=name,
        status=RowStatus.PLAN,
        est_reclaimed=plan.est_savings,
        context_tokens_before=plan.context_tokens_before,
        context_tokens_after=plan.context_tokens_after,
        prefix_tokens=prefix_tokens(transcript, plan),
        bytes_before=len(session.source_bytes),
        elided_items=len(plan.elided_lines),
        card_bytes=len(digest.render().encode("utf-8", "surrogatepass")) if digest else 0,
        control=plan.is_control,
        client_compacts=plan.projection.client_compacts if plan.projection else None,
        calibrated_savings=(
            max(0, plan.projection.context_tokens_before - plan.projection.context_tokens_after)
            if plan.projection
            else None
        ),
    )
    assert outcome.admission is not None
    if not outcome.admission.admitted:
        code = outcome.admission.code
        refused = {"status": RowStatus.REFUSED, "reason_code": code.value if code else None}
        return _Planned(row.model_copy(update=refused), plan, False, _since(started))
    return _Planned(row, plan, not plan.is_control, _since(started))


def _check_all(
    session: LoadedSession,
    planned: list[_Planned],
    source_report: VerifyReport,
    done: int,
    report: Callable[[int, str], None],
) -> None:
    """Each admitted file plan's candidate built and verified, its row updated in place."""
    waiting = [entry for entry in planned if entry.to_check]
    done += len(planned) - len(waiting)
    for entry in waiting:
        report(done, f"verify {entry.row.strategy}")
        [(entry.row, seconds)] = _checks(session, [entry], source_report)
        entry.seconds += seconds
        done += 1


def _checks(
    session: LoadedSession, entries: Sequence[_Planned], source_report: VerifyReport
) -> list[tuple[EvalRow, float]]:
    """Each plan's candidate built as an overlay of the source and verified: its row with the
    figures, and the seconds it took."""
    answers: list[tuple[EvalRow, float]] = []
    for entry in entries:
        started = time.perf_counter()
        row = entry.row
        assert entry.plan is not None
        try:
            candidate = session.rewriter.overlay(entry.plan)
            checked = session.source_checks.candidate_report(candidate.replaced, candidate.appended)
        except (RewriteError, ValueError) as error:
            answers.append((_error_row(row.strategy, session.transcript, error), _since(started)))
            continue
        whole = memoryview(session.source_bytes)
        prefix = whole[: len(whole) - len(session.data)]  # the part before the live part
        findings = {finding.code.value for finding in checked.findings}
        thinking = session.rewriter.thinking_violation(candidate) is not None
        if thinking:
            findings.add(FindingCode.THINKING_AFTER_CHANGE.value)
        update = {
            "result_sha256": session.rewriter.sha256(candidate, prefix),
            "bytes_after": session.whole_size(candidate.size),
            "valid": accepts(checked, source_report) and not thinking,
            "verify_errors": checked.errors + thinking,
            "verify_warnings": checked.warnings,
            "findings": sorted(findings),
        }
        answers.append((row.model_copy(update=update), _since(started)))
    return answers


def _score_probes(entry: _Planned, probes: ProbeWitness, tail_start: int | None) -> None:
    """The entry's probe score, when it has a plan; its time counts in the row's."""
    if entry.plan is None:
        return
    started = time.perf_counter()
    try:
        entry.recall = probes.score(entry.plan, tail_start)
    except ValueError as error:  # one strategy's failure is its row's, as above
        entry.recall = error
    entry.seconds += _since(started)


def _scored(entry: _Planned, transcript: Transcript) -> EvalRow:
    """The row with its probe recall (none for a row without a plan or that failed), and the
    time it all took."""
    row = entry.row
    if entry.plan is not None and row.status is not RowStatus.ERROR:
        if isinstance(entry.recall, ValueError):
            row = _error_row(row.strategy, transcript, entry.recall)
        elif entry.recall is not None:
            row = _with_probes(row, entry.recall)
    return row.model_copy(update={"duration_ms": round(entry.seconds * 1000, 1)})


def _since(started: float) -> float:
    return time.perf_counter() - started


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
