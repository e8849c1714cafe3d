"""The detail pane's context chart: occupancy over the session on a fixed scale (0 to the
context window), the trigger drawn as a dashed line, compactions marked underneath.

A sparkline scales to its own minimum and maximum, so a session flat at 2 % filled the whole
chart; on a fixed scale the same session is a low line, and one near its trigger reads so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from gobtui.core.model import SessionSummary
from gobtui.view_models import format as fmt
from gobtui.widgets.palette import band_styles

BLOCKS = " ▁▂▃▄▅▆▇█"
TRIGGER_DASH = "┈"
COMPACTION_MARK = "▲"
AXIS_CELLS = 6
"""The scale's labels ("258k", "0") and the tick after them."""


def bucket_max(values: Sequence[float], width: int) -> list[float]:
    """`values` spread over `width` columns, each the highest value that falls in it (a
    short history is stretched, so the chart always spans the pane)."""
    n = len(values)
    if n == 0 or width <= 0:
        return []
    out: list[float] = []
    for col in range(width):
        start = col * n // width
        end = max(start + 1, (col + 1) * n // width)
        out.append(max(values[start:end]))
    return out


def chart_rows(
    values: Sequence[float], scale: float, trigger: float | None, width: int, rows: int
) -> list[list[tuple[str, bool]]]:
    """Cells top row first: (character, over_trigger). A value above zero always shows at
    least the lowest block; the trigger's dashes fill the cells of its row a bar leaves."""
    levels = rows * 8
    columns = bucket_max(values, width)
    trigger_level = (
        None if trigger is None or scale <= 0 else min(levels - 1, int(trigger / scale * levels))
    )
    grid: list[list[tuple[str, bool]]] = [[] for _ in range(rows)]
    for value in columns:
        height = 0 if value <= 0 else max(1, min(levels, math.ceil(value / scale * levels)))
        over = trigger is not None and value >= trigger
        for row in range(rows):
            floor = (rows - 1 - row) * 8  # the level this row starts at
            filled = max(0, min(8, height - floor))
            char = BLOCKS[filled]
            if filled == 0 and trigger_level is not None and floor <= trigger_level < floor + 8:
                char = TRIGGER_DASH
            grid[row].append((char, over))
    return grid


def marks_line(summary: SessionSummary, width: int) -> str:
    """COMPACTION_MARK under the column where each provider compaction happened."""
    samples = summary.usage_history
    if not samples or width <= 0 or not summary.compactions:
        return ""
    line = [" "] * width
    n = len(samples)
    for event in summary.compactions:
        if event.ts is None:
            continue
        index = next(
            (i for i, s in enumerate(samples) if s.ts is not None and s.ts >= event.ts), n - 1
        )
        line[min(width - 1, index * width // max(1, n))] = COMPACTION_MARK
    return "".join(line).rstrip()


class ContextChart(Widget):
    """Two rows of occupancy (one in a short pane) on 0..window, and a row of marks."""

    DEFAULT_CSS = """
    ContextChart { height: auto; margin: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summary: SessionSummary | None = None
        self.trigger: int | None = None
        self.rows = 2

    def show(self, summary: SessionSummary | None, trigger: int | None, *, rows: int = 2) -> None:
        if summary is self.summary and trigger == self.trigger and rows == self.rows:
            return  # the detail pane shows its row again every second: the chart has not moved
        shape = self._lines_for(summary, rows)
        changed = shape != self._lines_for(self.summary, self.rows)
        self.summary, self.trigger, self.rows = summary, trigger, rows
        self.display = shape > 0
        self.refresh(layout=changed)

    @staticmethod
    def _lines_for(summary: SessionSummary | None, rows: int) -> int:
        if summary is None or not summary.usage_history:
            return 0
        return rows + (1 if summary.compactions else 0)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return self._lines_for(self.summary, self.rows)

    def render(self) -> Text:
        summary = self.summary
        if summary is None or not summary.usage_history:
            return Text()
        values = [float(s.context_tokens) for s in summary.usage_history]
        scale = float(summary.context_window or 0) or max(values) or 1.0
        width = max(1, self.content_region.width - AXIS_CELLS)
        grid = chart_rows(values, scale, self.trigger, width, self.rows)
        styles = band_styles(self.app) if self.is_mounted else None
        bar = styles.primary if styles else Style()
        over = styles.alert if styles else Style()
        dash = Style(dim=True)
        text = Text(no_wrap=True, overflow="crop")
        for index, cells in enumerate(grid):
            label = (
                fmt.tokens(int(scale)) if index == 0 else ("0" if index == self.rows - 1 else "")
            )
            text.append(f"{label:>{AXIS_CELLS - 1}}┤", "dim")
            for char, is_over in cells:
                text.append(char, dash if char == TRIGGER_DASH else over if is_over else bar)
            if index < len(grid) - 1:
                text.append("\n")
        marks = marks_line(summary, width)
        if marks:
            text.append("\n" + " " * AXIS_CELLS)
            text.append(marks, over)
        return text
