"""What fills a session's context, by kind, in the provider's tokens.

The transcript's estimates (chars/4) say how much of each kind the session sent; the usage
it reported says what that cost. One least-squares fit over every usage record, with a term
per kind and an intercept, turns the one into the other: the intercept is the fixed overhead
(system prompt, tools, MCP servers, memory files) that is in no transcript line and no fork
can reach; a kind's coefficient is what the provider counts per estimated token of it (Claude
thinking: its signature, which the provider decodes to more or fewer tokens than its size).
A kind the session has too little of to fit keeps the neutral coefficient 1, and every
coefficient is kept in a sane band (a handful of records must not make a kind look free).

Pure: items and (line, reported context) points in, a Composition out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .model import ItemKind, TranscriptItem
from .tokens import estimate_tokens

COEFFICIENT_BAND = (0.05, 4.0)
"""Provider tokens per estimated token a fit may give a kind."""
_RIDGE = 1e-6
"""Pull of every coefficient toward 1, relative to its kind's own data: it decides only
where the session cannot (a kind that grows in step with another, or is absent)."""


class PartKind(StrEnum):
    """What a share of the context is. Closed vocabulary, in display order."""

    FIXED = "fixed"
    REASONING = "reasoning"
    TOOL_OUTPUTS = "tool_outputs"
    EDIT_INPUTS = "edit_inputs"
    IMAGES = "images"
    CONVERSATION = "conversation"

    @property
    def words(self) -> str:
        return _WORDS[self]

    @property
    def short(self) -> str:
        """The word of a one-line legend."""
        return _SHORT[self]


_WORDS = {
    PartKind.FIXED: "fixed overhead",
    PartKind.REASONING: "earlier thinking",
    PartKind.TOOL_OUTPUTS: "tool outputs",
    PartKind.EDIT_INPUTS: "edit inputs",
    PartKind.IMAGES: "images and documents",
    PartKind.CONVERSATION: "conversation",
}
_SHORT = {
    PartKind.FIXED: "fixed",
    PartKind.REASONING: "think",
    PartKind.TOOL_OUTPUTS: "tools",
    PartKind.EDIT_INPUTS: "edits",
    PartKind.IMAGES: "media",
    PartKind.CONVERSATION: "talk",
}
FITTED = (
    PartKind.REASONING,
    PartKind.TOOL_OUTPUTS,
    PartKind.EDIT_INPUTS,
    PartKind.IMAGES,
    PartKind.CONVERSATION,
)
UNREACHABLE = frozenset({PartKind.FIXED, PartKind.CONVERSATION})
"""What no fork cuts: the overhead outside the file, and the dialogue itself."""


@dataclass(frozen=True, slots=True)
class Part:
    kind: PartKind
    tokens: int
    """Provider tokens of this kind in the current context."""
    items: int = 0
    """Transcript items holding some of it (0 for the fixed overhead)."""
    coefficient: float = 1.0
    """Provider tokens per estimated token the fit gave this kind."""

    @property
    def reachable(self) -> bool:
        return self.kind not in UNREACHABLE


@dataclass(frozen=True, slots=True)
class Composition:
    """The context split by kind; `parts` in PartKind order, all kinds present."""

    reported: int
    """The context the session last reported (or the estimate when it reported none)."""
    parts: list[Part]
    points: int = 0
    """Usage records the fit used."""
    fit_error: float | None = None
    """Root-mean-square error of the fit against the reported figures, as a share of their
    mean (None: fewer than two records)."""

    def part(self, kind: PartKind) -> Part:
        return next(p for p in self.parts if p.kind is kind)

    @property
    def total(self) -> int:
        return sum(p.tokens for p in self.parts)

    @property
    def unreachable(self) -> int:
        return sum(p.tokens for p in self.parts if not p.reachable)


def split_item(item: TranscriptItem) -> dict[PartKind, int]:
    """An item's estimated tokens by kind."""
    est = item.est_tokens
    if est <= 0:
        return {}
    media = min(est, estimate_tokens(item.image_bytes)) if item.image_bytes else 0
    rest = est - media
    out: dict[PartKind, int] = {PartKind.IMAGES: media} if media else {}
    if item.kind is ItemKind.REASONING:
        out[PartKind.REASONING] = rest
    elif item.elides_input and item.elidable_bytes:
        edit = min(rest, estimate_tokens(item.elidable_bytes))
        out[PartKind.EDIT_INPUTS] = edit
        if rest - edit:
            out[PartKind.CONVERSATION] = rest - edit
    elif item.kind is ItemKind.TOOL_RESULT or (item.tool_use_ids and item.kind is ItemKind.USER):
        out[PartKind.TOOL_OUTPUTS] = rest
    elif rest:
        out[PartKind.CONVERSATION] = rest
    return out


def composition(
    items: Sequence[TranscriptItem], usage: Sequence[tuple[int, int]], reported: int | None
) -> Composition:
    """The context by kind: `items` the transcript's, `usage` (line, reported context) of
    its live usage records in line order, `reported` the context it reports now."""
    live = [item for item in items if item.active]
    totals = dict.fromkeys(FITTED, 0)
    counts = dict.fromkeys(FITTED, 0)
    rows: list[tuple[list[float], float]] = []
    at = 0
    for line, context in usage:
        while at < len(live) and live[at].line_index <= line:
            _add(live[at], totals, counts)
            at += 1
        if context > 0:
            rows.append(([float(totals[k]) for k in FITTED], float(context)))
    while at < len(live):
        _add(live[at], totals, counts)
        at += 1
    current = [float(totals[k]) for k in FITTED]
    now = reported if reported is not None else round(sum(current))
    coefficients, base = _fit(rows, now)
    parts = [Part(kind=PartKind.FIXED, tokens=0)]
    for kind, value, coefficient in zip(FITTED, current, coefficients, strict=True):
        parts.append(
            Part(kind=kind, tokens=round(value * coefficient), items=counts[kind],
                 coefficient=round(coefficient, 3))
        )  # fmt: skip
    fixed = max(0, round(base)) if len(rows) >= 2 else max(0, now - sum(p.tokens for p in parts))
    parts[0] = Part(kind=PartKind.FIXED, tokens=fixed)
    return Composition(
        reported=now, parts=parts, points=len(rows), fit_error=_error(rows, coefficients, base)
    )


def _add(item: TranscriptItem, totals: dict[PartKind, int], counts: dict[PartKind, int]) -> None:
    for kind, tokens in split_item(item).items():
        totals[kind] += tokens
        counts[kind] += 1


def _fit(rows: list[tuple[list[float], float]], now: int) -> tuple[list[float], float]:
    """Coefficients and intercept: least squares with a light ridge toward 1 (a kind the data
    cannot separate keeps its estimate), coefficients in COEFFICIENT_BAND and the intercept
    at 0 or more: the normal equations solved, a variable out of its band pinned to the
    bound, and the rest solved again (at most once a variable)."""
    width = len(FITTED)
    if len(rows) < 2:
        return [1.0] * width, 0.0
    n = width + 1  # the intercept last
    gram = [[0.0] * n for _ in range(n)]
    moment = [0.0] * n
    for features, target in rows:
        x = [*features, 1.0]
        for i in range(n):
            if x[i]:
                moment[i] += x[i] * target
                row = gram[i]
                for j in range(n):
                    row[j] += x[i] * x[j]
    for i in range(width):  # the ridge, on the scale of each kind's own data
        ridge = _RIDGE * gram[i][i] if gram[i][i] else 1.0
        gram[i][i] += ridge
        moment[i] += ridge
    low, high = COEFFICIENT_BAND
    bounds = [(low, high)] * width + [(0.0, float(max(now, 1)))]
    pinned: dict[int, float] = {}
    beta = [1.0] * width + [0.0]
    for _ in range(n + 1):
        free = [i for i in range(n) if i not in pinned]
        solved = _solve(
            [[gram[i][j] for j in free] for i in free],
            [moment[i] - sum(gram[i][j] * v for j, v in pinned.items()) for i in free],
        )
        if solved is None:
            break
        for i, value in zip(free, solved, strict=True):
            beta[i] = value
        out = [i for i in free if not bounds[i][0] <= beta[i] <= bounds[i][1]]
        if not out:
            break
        worst = max(out, key=lambda i: max(bounds[i][0] - beta[i], beta[i] - bounds[i][1]))
        pinned[worst] = min(bounds[worst][1], max(bounds[worst][0], beta[worst]))
        beta[worst] = pinned[worst]
    for i in range(n):
        beta[i] = min(bounds[i][1], max(bounds[i][0], beta[i]))
    return beta[:width], beta[width]


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None for a singular system."""
    size = len(vector)
    a = [[*row, value] for row, value in zip(matrix, vector, strict=True)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-12:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, size):
            factor = a[r][col] / a[col][col]
            if factor:
                for c in range(col, size + 1):
                    a[r][c] -= factor * a[col][c]
    out = [0.0] * size
    for r in range(size - 1, -1, -1):
        out[r] = (a[r][size] - sum(a[r][c] * out[c] for c in range(r + 1, size))) / a[r][r]
    return out


def _error(
    rows: list[tuple[list[float], float]], coefficients: list[float], base: float
) -> float | None:
    if len(rows) < 2:
        return None
    squares = 0.0
    for features, target in rows:
        fitted = base + sum(c * x for c, x in zip(coefficients, features, strict=True))
        squares += (fitted - target) ** 2
    mean = sum(target for _, target in rows) / len(rows)
    return round((squares / len(rows)) ** 0.5 / mean, 4) if mean > 0 else None
