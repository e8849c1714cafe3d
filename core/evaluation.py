"""The eval table: one row per strategy, and which row is best. Pure (timings come in).

A strategy that fails is an error row, never a failed eval. The best row is the valid,
admitted file plan that passes the savings gate, ends under the fork ceiling, with the
highest cache-preserving score (savings x prefix share cubed), as `auto` ranks: the table
and `auto` agree.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from .limits import MAX_MISSED_PROBES_SHOWN


class RowStatus(StrEnum):
    PLAN = "plan"
    NO_PLAN = "no_plan"
    REFUSED = "refused"  # admission or verification said no
    ERROR = "error"


class EvalRow(BaseModel):
    """One strategy's outcome on one transcript (`eval --json` rows)."""

    model_config = ConfigDict(frozen=True)

    strategy: str
    status: RowStatus
    reason_code: str | None = None
    """The no-plan reason, the admission code or the verify code behind a refusal."""
    control: bool = False
    """The plan asks the provider (no file is written)."""
    est_reclaimed: int = 0
    context_tokens_before: int = 0
    context_tokens_after: int | None = None
    prefix_tokens: int = 0
    bytes_before: int = 0
    bytes_after: int | None = None
    valid: bool | None = None
    """The candidate verifies with no findings (None when nothing was written)."""
    verify_errors: int = 0
    verify_warnings: int = 0
    findings: list[str] = Field(default_factory=list)
    probes_total: int = 0
    probes_recalled: int = 0
    recall: float | None = None
    tail_intact: bool | None = None
    missed_probes: list[str] = Field(default_factory=list, max_length=MAX_MISSED_PROBES_SHOWN)
    elided_items: int = 0
    card_bytes: int = 0
    client_compacts: bool | None = None
    """The provider's client will compact the fork itself on resume (None: no file plan)."""
    calibrated_savings: int | None = None
    """The saving in the provider's own tokens (the projection's calibration), file plans."""
    result_sha256: str | None = None
    """The digest of the candidate file the plan would publish (None: nothing built)."""
    duration_ms: float = 0.0
    error: str | None = None
    best: bool = False

    @property
    def savings_share(self) -> float:
        if self.context_tokens_before <= 0:
            return 0.0
        return self.est_reclaimed / self.context_tokens_before

    def score(self) -> float:
        """savings x (prefix / before)^3: what `auto` maximises."""
        if self.context_tokens_before <= 0:
            return 0.0
        share = min(1.0, self.prefix_tokens / self.context_tokens_before)
        return self.est_reclaimed * share**3


def mark_best(rows: list[EvalRow], min_savings_tokens: int, ceiling: int) -> list[EvalRow]:
    """The rows with `best` set on the winner (at most one); ties go to the earlier row. A
    fork that ends under `ceiling` (PolicyConfig.fork_ceiling) beats one that does not."""
    best_index: int | None = None
    best_key: tuple[bool, bool, float] | None = None
    for index, row in enumerate(rows):
        if row.status is not RowStatus.PLAN or row.control or row.valid is False:
            continue
        after = row.context_tokens_after
        fits = after is not None and after < ceiling
        key = (row.est_reclaimed >= min_savings_tokens, fits, row.score())
        if best_key is None or key > best_key:
            best_index, best_key = index, key
    return [row.model_copy(update={"best": index == best_index}) for index, row in enumerate(rows)]
