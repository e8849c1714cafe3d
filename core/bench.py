"""`gobtui bench`: every strategy over every session, one CSV row per session and strategy.

A session that cannot be read is a row too (strategy empty, failure `load_failed`), so a run
over a home is never silently smaller than the home. Each row says what was executed
(`execution_state`) and, when something went wrong, a closed `failure` category.
"""

from __future__ import annotations

import csv
import io
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from .evaluation import EvalRow, RowStatus
from .model import Provider


class ExecutionState(StrEnum):
    CANDIDATE_VERIFIED = "candidate_verified"
    """A file plan whose candidate was built in memory and verified (nothing written)."""
    PROVIDER_NOT_EXECUTED = "provider_not_executed"
    """A provider control (its own compaction): bench does not run the client."""
    NOT_PLANNED = "not_planned"
    NOT_BUILT = "not_built"
    SESSION_FAILED = "session_failed"


class Failure(StrEnum):
    NONE = ""
    LOAD_FAILED = "load_failed"
    STRATEGY_ERROR = "strategy_error"
    ADMISSION_REFUSED = "admission_refused"
    VERIFY_FAILED = "verify_failed"
    CLIENT_RECOMPACTS = "client_recompacts"
    """The candidate is valid, but the client would compact it again on resume."""


class BenchRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    provider: Provider
    path: str
    source_sha256: str = ""
    strategy: str = ""
    status: str = ""
    reason_code: str = ""
    execution_state: ExecutionState
    failure: Failure = Failure.NONE
    result_sha256: str = ""
    context_tokens_before: int = 0
    context_tokens_after: int | None = None
    projected_savings: int = 0
    calibrated_savings: int | None = None
    verify_errors: int = 0
    verify_warnings: int = 0
    findings: str = ""
    probes_total: int = 0
    probes_recalled: int = 0
    retention: float | None = None
    tail_intact: bool | None = None
    prefix_tokens: int = 0
    bytes_before: int = 0
    bytes_after: int | None = None
    client_compacts: bool | None = None
    duration_ms: float = 0.0
    error: str = ""


COLUMNS = tuple(BenchRow.model_fields)


def _state_and_failure(row: EvalRow) -> tuple[ExecutionState, Failure]:
    if row.status is RowStatus.ERROR:
        return ExecutionState.NOT_BUILT, Failure.STRATEGY_ERROR
    if row.status is RowStatus.REFUSED:
        return ExecutionState.NOT_BUILT, Failure.ADMISSION_REFUSED
    if row.status is RowStatus.NO_PLAN:
        return ExecutionState.NOT_PLANNED, Failure.NONE
    if row.control:
        return ExecutionState.PROVIDER_NOT_EXECUTED, Failure.NONE
    if row.valid is False or row.verify_errors:
        return ExecutionState.CANDIDATE_VERIFIED, Failure.VERIFY_FAILED
    if row.client_compacts:
        return ExecutionState.CANDIDATE_VERIFIED, Failure.CLIENT_RECOMPACTS
    return ExecutionState.CANDIDATE_VERIFIED, Failure.NONE


def bench_row(
    session_id: str, provider: Provider, path: str, source_sha256: str, row: EvalRow
) -> BenchRow:
    state, failure = _state_and_failure(row)
    return BenchRow(
        session_id=session_id,
        provider=provider,
        path=path,
        source_sha256=source_sha256,
        strategy=row.strategy,
        status=row.status.value,
        reason_code=row.reason_code or "",
        execution_state=state,
        failure=failure,
        result_sha256=row.result_sha256 or "",
        context_tokens_before=row.context_tokens_before,
        context_tokens_after=row.context_tokens_after,
        projected_savings=row.est_reclaimed,
        calibrated_savings=row.calibrated_savings,
        verify_errors=row.verify_errors,
        verify_warnings=row.verify_warnings,
        findings=";".join(row.findings),
        probes_total=row.probes_total,
        probes_recalled=row.probes_recalled,
        retention=row.recall,
        tail_intact=row.tail_intact,
        prefix_tokens=row.prefix_tokens,
        bytes_before=row.bytes_before,
        bytes_after=row.bytes_after,
        client_compacts=row.client_compacts,
        duration_ms=row.duration_ms,
        error=row.error or "",
    )


def failed_row(session_id: str, provider: Provider, path: str, error: str) -> BenchRow:
    return BenchRow(
        session_id=session_id,
        provider=provider,
        path=path,
        execution_state=ExecutionState.SESSION_FAILED,
        failure=Failure.LOAD_FAILED,
        error=error,
    )


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, StrEnum):
        return value.value
    return str(value)


def to_csv(rows: list[BenchRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(getattr(row, name)) for name in COLUMNS])
    return out.getvalue()
