"""The preview's side-by-side record table: one line per row, original records on the left,
the same records after the plan on the right, so both sides always scroll together."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.strip import Strip

from gobtui.core.record_number import shown
from gobtui.core.sanitize import one_line
from gobtui.view_models.format import human_bytes
from gobtui.view_models.preview_rows import PairRow, Record, RowChange
from gobtui.widgets.line_list import LineList, fit, text_strip

SEPARATOR = " │ "
LINE_WIDTH = 6
KIND_WIDTH = 6
SIZE_WIDTH = 8
AFTER_MIN_WIDTH = 28
clean = one_line
"""Transcript text on one line, safe to show (core.sanitize)."""


class RecordPairs(LineList):
    """Rows of a PlanPreview, drawn on demand."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_row", "Diff", tooltip="Text diff of the record", id="plan.diff"),
        # Left and right switch strategy (the screen's keys), not scroll sideways.
        Binding("left", "screen.strategy(-1)", "Prev strategy", show=False),
        Binding("right", "screen.strategy(1)", "Next strategy", show=False),
    ]
    HEADER_ROWS = 1
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-list--cursor",
        "record-pairs--header",
        "record-pairs--muted",
        "record-pairs--fold",
        "record-pairs--stubbed",
        "record-pairs--changed",
        "record-pairs--added",
        "record-pairs--api",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[PairRow] = []
        self.number: Callable[[int], int] = shown
        """A row's line (of the text the plan read) as the file's own record number."""

    def set_rows(
        self,
        rows: list[PairRow],
        keep_cursor: bool = False,
        number: Callable[[int], int] | None = None,
    ) -> None:
        self.rows = rows
        if number is not None:
            self.number = number
        self.rows_changed(keep_cursor)

    def row_count(self) -> int:
        return len(self.rows)

    @property
    def selected(self) -> PairRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    # --- drawing -------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"record-pairs--{name}", default=Style())

    @staticmethod
    def _halves(width: int) -> tuple[int, int]:
        """The original side gets the room for labels; the after side needs little."""
        room = max(0, width - len(SEPARATOR))
        right = min(room, max(AFTER_MIN_WIDTH, room * 2 // 5))
        return room - right, right

    def render_header(self, width: int) -> Strip:
        left, right = self._halves(width)
        text = Text(style=self._style("header"))
        text.append(self._left_cells(left, "rec", "kind", "original record", "size"))
        text.append(SEPARATOR)
        text.append(self._right_cells(right, "after the plan", "size"))
        return text_strip(text, width, self.rich_style, self)

    @staticmethod
    def _left_cells(width: int, line: str, kind: str, label: str, size: str) -> str:
        label_width = max(0, width - LINE_WIDTH - KIND_WIDTH - SIZE_WIDTH - 3)
        if label_width < 6:  # too narrow for labels: line, kind and size only
            return fit(f"{line:>{LINE_WIDTH}} {kind:<{KIND_WIDTH}} {size}", width)
        if not kind and line:  # a fold's line span takes the kind column too
            head = f"{line:>{LINE_WIDTH + 1 + KIND_WIDTH}}"[-(LINE_WIDTH + 1 + KIND_WIDTH) :]
        else:
            head = f"{line[-LINE_WIDTH:]:>{LINE_WIDTH}} {fit(kind, KIND_WIDTH)}"
        return f"{head} {fit(label, label_width)} {size:>{SIZE_WIDTH}}"

    @staticmethod
    def _right_cells(width: int, label: str, size: str) -> str:
        label_width = max(0, width - SIZE_WIDTH - 1)
        return f"{fit(label, label_width)} {size:>{SIZE_WIDTH}}"[:width]

    def _left(self, record: Record | None, width: int) -> str:
        if record is None:
            return " " * width
        return self._left_cells(
            width,
            str(self.number(record.line)),
            record.kind,
            clean(record.label),
            human_bytes(record.size),
        )

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        left, right = self._halves(width)
        text = Text()
        change = row.change
        if change is RowChange.FOLD:
            first = row.before.line if row.before else 0
            last = row.after.line if row.after else first
            size = human_bytes(row.fold_bytes)
            span = f"{self.number(first)}–{self.number(last)}"
            label = f"… {row.count} unchanged records"
            text.append(self._left_cells(left, span, "", label, size))
            text.append(SEPARATOR)
            text.append(self._right_cells(right, "=", size))
            text.stylize(self._style("fold"))
        elif change is RowChange.CARD_LINE:
            # The injected card is read whole: its lines take the full width, under a "card"
            # kind, rather than the narrow after-side column beside an empty original.
            head = f"{'':>{LINE_WIDTH}} {'card':<{KIND_WIDTH}} "
            text.append(fit(head + clean(row.text), width), self._style("added"))
        elif change is RowChange.ADDED:
            after = row.after
            text.append(self._left_cells(left, "", "", "(new record)", ""), self._style("muted"))
            text.append(SEPARATOR)
            label = f"+ rec {self.number(after.line)} {after.kind} {after.label}" if after else "+"
            size = human_bytes(after.size) if after else ""
            text.append(self._right_cells(right, clean(label), size), self._style("added"))
        else:
            text.append(self._left(row.before, left))
            text.append(SEPARATOR)
            text.append(self._after_cell(row, right))
        return text_strip(text, width, self.rich_style, self)

    def _after_cell(self, row: PairRow, width: int) -> Text:
        after = row.after
        if row.change is RowChange.SAME:
            label = f"= {clean(row.before.label) if row.before else ''}"
            size = human_bytes(after.size) if after else ""
            return Text(self._right_cells(width, label, size), self._style("muted"))
        if row.change is RowChange.LEFT_OUT and row.before is not None:
            label = f"left out, frees {human_bytes(row.before.size)}"
            return Text(self._right_cells(width, label, "0 B"), self._style("stubbed"))
        if after is None:
            return Text(self._right_cells(width, "(missing from the candidate)", ""))
        if row.change is RowChange.STUBBED:
            label, style = f"stub, frees {human_bytes(row.freed)}", "stubbed"
        elif row.change is RowChange.API_DROP:
            label, style = "dropped at the API (file unchanged)", "api"
        else:
            label, style = f"rewritten ({human_bytes(-row.freed)} change)", "changed"
        return Text(self._right_cells(width, label, human_bytes(after.size)), self._style(style))
