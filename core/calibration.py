"""Estimates calibrated to the provider's tokens, per session.

Estimates are chars/4 of what a transcript sends the model; the provider counts otherwise (a
fixed base of system prompt and tools that is not in the file, and its own tokenizer). Each
session says how, at every usage record of its live context: the estimate up to that record
against the context the provider reported there. A least-squares line through those points
gives the session's slope (provider tokens per estimated token), so a cut of N estimated
tokens saves about slope x N provider tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .limits import CALIBRATION_MAX_SLOPE, CALIBRATION_MIN_SLOPE


@dataclass(frozen=True, slots=True)
class Calibration:
    """Provider tokens = base + slope x estimated tokens, fitted on one session."""

    slope: float = 1.0
    base: int = 0
    points: int = 0
    """Usage records the fit used (0: no usage seen, the provider's default slope)."""
    tail_tokens: int = 0
    """Provider tokens of the live records after the last usage record: in the context the
    client will send, not yet in any reported figure."""

    def tokens(self, estimated: int) -> int:
        """Provider tokens of `estimated` tokens of transcript content."""
        return round(estimated * self.slope)


def fit(points: Sequence[tuple[int, int]], default_slope: float) -> Calibration:
    """The calibration of a session from its (estimate, reported context) points.

    Two distinct estimates or more: least squares, the slope clamped to a sane band (a few
    odd records must not make a cut look free or huge). One point: the provider's typical
    slope, the base what is left of the reported figure. None: the typical slope alone.
    """
    default = default_slope
    usable = [(e, r) for e, r in points if e > 0 and r > 0]
    if not usable:
        return Calibration(slope=default)
    n = len(usable)
    mean_e = sum(e for e, _ in usable) / n
    mean_r = sum(r for _, r in usable) / n
    spread = sum((e - mean_e) ** 2 for e, _ in usable)
    if n >= 2 and spread > 0:
        slope = sum((e - mean_e) * (r - mean_r) for e, r in usable) / spread
    else:
        slope = default
    slope = min(CALIBRATION_MAX_SLOPE, max(CALIBRATION_MIN_SLOPE, slope))
    base = round(mean_r - slope * mean_e)
    if base < 0:  # the line would say the content costs more than was reported: no base
        base = 0
        slope = min(CALIBRATION_MAX_SLOPE, max(CALIBRATION_MIN_SLOPE, mean_r / mean_e))
    return Calibration(slope=round(slope, 4), base=base, points=n)


def calibrate(
    estimates: Sequence[tuple[int, int]], usage: Sequence[tuple[int, int]], default_slope: float
) -> Calibration:
    """fit() over points_of(estimates, usage), with the tail after the last usage record."""
    calibration = fit(points_of(estimates, usage), default_slope)
    last = usage[-1][0] if usage else -1
    tail = sum(tokens for line, tokens in estimates if line > last)
    return replace(calibration, tail_tokens=calibration.tokens(tail))


def points_of(
    estimates: Sequence[tuple[int, int]], usage: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """(estimate up to the record, reported context) for each usage record.

    `estimates` are (line, estimated tokens) of the live items, `usage` (line, reported
    context) of the live usage records, both in line order: each record's estimate is the sum
    over the items on its line and before.
    """
    points: list[tuple[int, int]] = []
    total = 0
    at = 0
    for line, reported in usage:
        while at < len(estimates) and estimates[at][0] <= line:
            total += estimates[at][1]
            at += 1
        points.append((total, reported))
    return points
