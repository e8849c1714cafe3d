"""core.calibration: estimates calibrated to the provider's tokens, per session."""

from __future__ import annotations

import pytest

from gobtui.core.calibration import Calibration, calibrate, fit, points_of


def test_a_line_through_the_reported_points_gives_base_and_slope() -> None:
    # a 24k base (system prompt, tools) and 1.25 provider tokens per estimated token
    points = [(e, 24_000 + round(1.25 * e)) for e in (1_000, 20_000, 50_000, 90_000)]
    found = fit(points, default_slope=1.2)
    assert found.points == 4
    assert found.slope == pytest.approx(1.25, abs=1e-3)
    assert found.base == pytest.approx(24_000, abs=2)
    assert found.tokens(10_000) == 12_500


def test_one_point_keeps_the_typical_slope_and_what_is_left_is_the_base() -> None:
    found = fit([(10_000, 40_000)], default_slope=1.2)
    assert (found.slope, found.base, found.points) == (1.2, 28_000, 1)


def test_no_usage_at_all_is_the_typical_slope_alone() -> None:
    assert fit([], default_slope=0.9) == Calibration(slope=0.9)
    assert fit([(0, 0), (5, 0)], default_slope=0.9) == Calibration(slope=0.9)


def test_odd_records_cannot_make_a_cut_look_free_or_huge() -> None:
    # a reported context that falls as the transcript grows (a compaction the parse missed)
    falling = [(1_000, 90_000), (50_000, 10_000)]
    assert fit(falling, 1.2).slope == 0.3
    steep = [(1_000, 1_000), (2_000, 100_000)]
    assert fit(steep, 1.2).slope == 3.0


def test_a_negative_base_is_no_base() -> None:
    # the content alone would cost more than was reported: the slope is what was reported
    found = fit([(10_000, 5_000), (20_000, 30_000)], 1.2)
    assert found.base == 0
    assert found.slope == pytest.approx(35_000 / 30_000, abs=1e-3)


def test_each_usage_record_is_measured_against_everything_up_to_its_line() -> None:
    estimates = [(0, 100), (2, 50), (3, 10), (7, 40)]
    usage = [(2, 1_000), (5, 1_100), (9, 1_300)]
    assert points_of(estimates, usage) == [(150, 1_000), (160, 1_100), (200, 1_300)]


def test_the_records_after_the_last_usage_are_the_tail() -> None:
    estimates = [(0, 1_000), (4, 2_000), (6, 300), (8, 100)]
    found = calibrate(estimates, [(4, 30_000)], default_slope=1.5)
    assert found.tail_tokens == round(400 * 1.5)
    assert calibrate(estimates, [], default_slope=1.0).tail_tokens == 3_400
