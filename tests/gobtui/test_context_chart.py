"""The context chart's cells: a fixed 0-to-window scale, the trigger's dashed row, the columns
over the trigger marked, a short history stretched over the width."""

from __future__ import annotations

from gobtui.widgets.context_chart import TRIGGER_DASH, bucket_max, chart_rows


def text(grid: list[list[tuple[str, bool]]]) -> list[str]:
    return ["".join(char for char, _ in row) for row in grid]


def test_a_flat_two_percent_session_is_a_low_line_not_a_full_chart() -> None:
    window = 200_000.0
    values = [4_000.0] * 30
    rows = text(chart_rows(values, window, None, 10, 2))
    assert rows == [" " * 10, "▁" * 10]


def test_the_scale_is_the_window_a_full_context_fills_both_rows() -> None:
    rows = text(chart_rows([200_000.0, 100_000.0, 0.0], 200_000.0, None, 3, 2))
    assert rows == ["█  ", "██ "]


def test_the_trigger_is_a_dashed_line_in_its_row_and_columns_over_it_are_marked() -> None:
    grid = chart_rows([10_000.0, 190_000.0], 200_000.0, 160_000.0, 2, 2)
    # 160k of 200k is level 12 of 16: the top row; the low column leaves it to the dashes.
    assert text(grid)[0][0] == TRIGGER_DASH
    assert text(grid)[1][0] == "▁"
    assert [over for _, over in grid[0]] == [False, True]
    assert [over for _, over in grid[1]] == [False, True]


def test_a_low_trigger_dashes_the_bottom_row_where_no_bar_reaches() -> None:
    rows = text(chart_rows([0.0, 0.0], 200_000.0, 20_000.0, 2, 2))
    assert rows == ["  ", TRIGGER_DASH * 2]


def test_bucket_max_keeps_each_columns_peak_and_stretches_a_short_history() -> None:
    assert bucket_max([1.0, 5.0, 2.0, 3.0], 2) == [5.0, 3.0]
    assert bucket_max([7.0], 3) == [7.0, 7.0, 7.0]
    assert bucket_max([], 4) == []
