"""The sessions table: one row per session, updated in place by row key.

Rows are never rebuilt on an update: changed cells are updated, new sessions added, gone ones
removed, and the order applied without moving the cursor off the selected session. Only a
change of width (which drops or restores columns) rebuilds the columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from textual.binding import BindingType
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from gobtui.core.board import BoardRow
from gobtui.view_models.due_times import DueTimes
from gobtui.widgets.cells import BAR_WIDTH, Cell, Clock, age_cell, next_age_change, row_cells
from gobtui.widgets.palette import BandStyles, band_styles
from gobtui.widgets.row_keys import row_edge_bindings

TITLE_MIN = 8


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    min_table_width: int
    """The column is shown only when the table is at least this wide."""
    wide: int = 0
    """Its width in a table of WIDE_TABLE columns or more (0: `width` still)."""


COLUMNS: tuple[Column, ...] = (
    Column("state", "", 3, 0),
    Column("status", "Status", 9, 100),
    Column("project", "Project", 14, 0, wide=22),
    Column("title", "Title", 0, 0),  # takes what is left
    Column("model", "Model", 16, 104, wide=26),
    Column("used", "Used/Win", 10, 0),
    Column("occupancy", "Context", BAR_WIDTH + 5, 0),
    Column("burn", "Burn", 7, 96),
    Column("eta", "ETA", 4, 0),
    Column("last", "Last", 4, 0),
)
CELL_PADDING = 1
WIDE_TABLE = 150
"""From this width on, project and model names get room to show whole (a model id with its
context suffix, "claude-opus-4-6[1m]"), the title still the widest column."""


def visible_columns(table_width: int) -> tuple[list[Column], int]:
    """The columns that fit `table_width`, at their widths there, and the width left for the
    title."""
    wide = table_width >= WIDE_TABLE
    shown = [
        replace(c, width=c.wide) if wide and c.wide else c
        for c in COLUMNS
        if table_width >= c.min_table_width
    ]
    fixed = sum(c.width for c in shown) + 2 * CELL_PADDING * len(shown) + 1
    return shown, max(TITLE_MIN, table_width - fixed)


class SessionsTable(DataTable[Cell]):
    """DataTable of BoardRows keyed by session path."""

    # The vertical scrollbar's room is kept even without one: columns laid out for the whole
    # width would overflow when it appears (a horizontal bar, one row fewer, the table jumps).
    DEFAULT_CSS = """
    SessionsTable { height: 1fr; scrollbar-gutter: stable; overflow-x: hidden; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [*row_edge_bindings("sessions")]

    def __init__(self, clock: Clock, *, id: str | None = None) -> None:
        self._ordered: list[Any] | None = None  # read by DataTable's own __init__
        super().__init__(id=id, cursor_type="row", zebra_stripes=True, cell_padding=CELL_PADDING)
        self._due = DueTimes()
        """When each row's age next reads otherwise (tick)."""
        self.now = clock()
        """The board's one clock reading (SessionsScreen.now): every age shown is from it,
        as the detail pane's is."""
        self._rows: list[BoardRow] = []
        self._cells: dict[str, tuple[Cell, ...]] = {}
        self._columns: list[Column] = []
        self._title_width = TITLE_MIN
        self._layout_width = -1
        self._column_keys: list[str] = []
        self._widths: dict[str, int] = {}
        self._ordered = None

    @property
    def ordered_columns(self) -> list[Any]:
        # DataTable recomputes this list for every cell of every new row; ours change only
        # in _relayout, so keep it until then.
        if self._ordered is None or len(self._ordered) != len(self.columns):
            self._ordered = super().ordered_columns
        return self._ordered

    @property
    def selected_key(self) -> str | None:
        if not self._rows or self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:  # cursor out of range while rows change
            return None
        return str(key.value) if key.value is not None else None

    def select_key(self, key: str) -> bool:
        try:
            index = self.get_row_index(key)
        except Exception:
            return False
        self.move_cursor(row=index, animate=False)
        return True

    def on_resize(self, event: Resize) -> None:
        self._relayout(self._room())

    def _room(self) -> int:
        """The width the columns may take: the table's, less the scrollbar's gutter."""
        return self.scrollable_content_region.width

    def _relayout(self, width: int) -> None:
        columns, title_width = visible_columns(width)
        if columns == self._columns and title_width == self._title_width:
            return
        selected = self.selected_key
        self._columns, self._title_width, self._layout_width = columns, title_width, width
        self._column_keys = [c.key for c in columns]
        self._widths = {c.key: title_width if c.key == "title" else c.width for c in columns}
        self._ordered = None
        self.clear(columns=True)
        for col in columns:
            self.add_column(
                col.label, width=title_width if col.key == "title" else col.width, key=col.key
            )
        self._cells = {}
        self._apply(self._rows, selected)
        self.post_message(self.LaidOut())

    class LaidOut(Message):
        """Columns fit the current width and the rows are in."""

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        # DataTable renders every cell of every new row to measure it (work that grows with
        # the board, at its first paint). Here nothing of a row changes the table's dimensions: no
        # row has a label, every row is one line high and every column has a set width.
        super()._update_dimensions(())

    def action_select_cursor(self) -> None:
        """enter: DataTable selects nothing on an empty table, and the screen never heard of
        it; here resume still runs, to say no session is selected."""
        if self.row_count:
            super().action_select_cursor()
        else:
            self.call_later(self.run_action, "screen.resume")

    @property
    def laid_out(self) -> bool:
        return bool(self._columns)

    def set_rows(self, rows: list[BoardRow], changed: set[str] | None = None) -> None:
        """Show exactly `rows`, in this order. Only rows new to the table or named in
        `changed` are drawn again (None: all of them)."""
        if not self._columns:
            if not self.size.width:
                self._rows = rows  # not laid out yet: on_resize shows them at the right width
                return
            self._relayout(self._room())
        self._apply(rows, self.selected_key, changed)

    def update_rows(self, rows: list[BoardRow]) -> None:
        """Refresh the cells of these rows (already shown) without changing the order."""
        if not self._columns or not rows:
            return
        styles = band_styles(self.app)
        index = {row.key: row for row in rows}
        for key, row in index.items():
            if key in self._cells:
                self._update_row(row, styles)
        self._rows = [index.get(row.key, row) for row in self._rows]

    def tick(self, now: float) -> None:
        """The board's clock moved: each age that now reads otherwise is drawn again. Ages
        are due in time order (a heap of when each next reads otherwise), so a second costs
        the few in seconds, not a look at every row."""
        self.now = now
        due = self._due.pop_due(now)
        if not due or "last" not in self._column_keys:
            return
        column = self._column_keys.index("last")
        styles = band_styles(self.app)
        for key, mtime in due:
            cells = self._cells.get(key)
            if cells is None:
                continue  # not in the table now
            cell = age_cell(mtime, now, styles)
            if cells[column] != cell:
                self._cells[key] = (*cells[:column], cell, *cells[column + 1 :])
                self.update_cell(key, "last", cell)
            self._due.add(key, mtime, next_age_change(mtime, now), again=True)

    def _schedule(self, row: BoardRow) -> None:
        """When the row's age next reads otherwise (tick)."""
        mtime = row.summary.mtime
        self._due.add(row.key, mtime, next_age_change(mtime, self.now))

    def _update_row(self, row: BoardRow, styles: BandStyles) -> tuple[Cell, ...] | None:
        """Draw one row's cells again, in place; for a row new to the table, its cells (to
        add)."""
        cells = row_cells(row, self._column_keys, self._widths, styles, self.now)
        self._schedule(row)
        old = self._cells.get(row.key)
        self._cells[row.key] = cells
        if old is None:
            return cells
        if old != cells:
            for col, before, after in zip(self._columns, old, cells, strict=True):
                if before != after:
                    self.update_cell(row.key, col.key, after)
        return None

    def _apply(
        self, rows: list[BoardRow], selected: str | None, changed: set[str] | None = None
    ) -> None:
        styles = band_styles(self.app)
        wanted = {row.key for row in rows}
        for key in [k for k in self._cells if k not in wanted]:
            self.remove_row(key)
            del self._cells[key]
            self._due.forget(key)
        new: list[tuple[str, tuple[Cell, ...]]] = []
        for row in rows:
            if changed is None or row.key in changed or row.key not in self._cells:
                cells = self._update_row(row, styles)
                if cells is not None:
                    new.append((row.key, cells))
        for key, cells in new:
            self.add_row(*cells, key=key)
        self._rows = rows
        self._reorder([row.key for row in rows])
        if selected is not None and selected in self._cells:
            self.select_key(selected)

    def _reorder(self, keys: list[str]) -> None:
        """Rows in the order of `keys`. DataTable sorts by cell values, so the sort key is
        each row's first cell itself, by identity: each row's cells are its own objects."""
        if [row.key.value for row in self.ordered_rows] == keys:
            return
        first = self._column_keys[0]
        place = {id(self.get_cell(key, first)): index for index, key in enumerate(keys)}
        self.sort(first, key=lambda cell: place[id(cell)])
