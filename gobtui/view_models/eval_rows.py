"""The eval table's rows as the dashboard shows them: sort orders, status words, notes.
Pure: EvalRow in, strings and orders out."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from gobtui.core.evaluation import EvalRow, RowStatus
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes

EVAL_LEGEND = [
    ("★", "the best file plan: valid, admitted, enough savings, most prefix kept"),
    ("after / saved", "context tokens after the plan, and what it reclaims"),
    ("prefix", "tokens before the first change: what the prompt cache keeps"),
    ("valid", "the rewritten copy verifies with no finding of its own"),
    (
        "recall",
        "probes (paths, errors, ids) still findable after the plan (— for a provider"
        " compaction: its summary decides)",
    ),
    ("ms", "time to plan, rewrite and verify (hidden in the demo)"),
]


class EvalSort(StrEnum):
    """Sort columns `s` cycles through, in order."""

    REGISTRY = "registry"
    SAVED = "saved"
    AFTER = "after"
    PREFIX = "prefix"
    RECALL = "recall"
    TIME = "ms"
    STRATEGY = "strategy"

    def next(self) -> EvalSort:
        members = list(EvalSort)
        return members[(members.index(self) + 1) % len(members)]


def known_recall(row: EvalRow) -> float | None:
    """The row's probe recall, or None when no probe can tell: a provider compaction (or a
    cache edit) keeps what the provider's own summary keeps, which is unknown here. The JSON
    rows keep the reference's figure (it counts such a plan as removing no line)."""
    return None if row.control else row.recall


def _missing_last(value: float | None, descending: bool) -> tuple[bool, float]:
    if value is None:
        return (True, 0.0)
    return (False, -value if descending else value)


SORT_KEYS: dict[EvalSort, Callable[[EvalRow], Any]] = {
    EvalSort.SAVED: lambda r: -r.est_reclaimed,
    EvalSort.AFTER: lambda r: _missing_last(r.context_tokens_after, False),
    EvalSort.PREFIX: lambda r: -r.prefix_tokens,
    EvalSort.RECALL: lambda r: _missing_last(known_recall(r), True),
    EvalSort.TIME: lambda r: r.duration_ms,
    EvalSort.STRATEGY: lambda r: r.strategy,
}

STATUS_WORDS = {
    RowStatus.PLAN: "plan",
    RowStatus.NO_PLAN: "no plan",
    RowStatus.REFUSED: "refused",
    RowStatus.ERROR: "error",
}

COLUMNS = [
    ("strategy", "strategy", 13),
    ("status", "status", 7),
    ("after", "after", 6),
    ("saved", "saved", 6),
    ("share", "saved%", 6),
    ("prefix", "prefix", 6),
    ("valid", "valid", 5),
    ("recall", "recall", 6),
    ("ms", "ms", 5),
]


def row_note(row: EvalRow) -> str:
    """One short line on a row: why there is no plan, the error, or what the plan writes."""
    if row.error:
        return row.error
    if row.status is not RowStatus.PLAN:
        return fmt.no_plan_words(row.reason_code) if row.reason_code else ""
    if row.control:
        return "asks the provider; no file written"
    note = f"{row.elided_items} stubbed"
    if row.card_bytes:
        note += f", card {human_bytes(row.card_bytes)}"
    if row.findings:
        note += " · findings: " + ", ".join(row.findings)
    return note


def sort_rows(rows: list[EvalRow], key: EvalSort) -> list[EvalRow]:
    """Rows in `key` order; the registry order breaks ties (and is the REGISTRY order)."""
    if key is EvalSort.REGISTRY:
        return list(rows)
    return sorted(rows, key=SORT_KEYS[key])
