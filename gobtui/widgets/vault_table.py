"""The vault's snapshot table: one row per index entry, keyed by its serial (position in
append order, stable when newer snapshots arrive), marks in the first column."""

from __future__ import annotations

from collections.abc import Callable, Collection

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from gobtui.core.vault.index import IndexEntry
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.view_models.vault_rows import age
from gobtui.widgets.palette import band_styles
from gobtui.widgets.row_keys import row_edge_bindings

MARK = "◆"
WIDE_MIN_WIDTH = 100
"""From this width on, the table gains the record count and a longer snapshot id."""


class VaultTable(DataTable[Text | str]):
    """enter opens the record browser, and the footer says so."""

    BINDINGS = [
        Binding(
            "enter",
            "select_cursor",
            "Records",
            tooltip="Browse the snapshot's records",
            id="vault.records",
        ),
        *row_edge_bindings("vault"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self._shown: tuple[list[tuple[int, IndexEntry]], Callable[..., str | None], float] | None
        self._shown = None
        self._marks: set[int] = set()
        self._wide: bool | None = None

    def on_resize(self) -> None:
        """Rows shown before the table had its width (or before a resize across the wide
        threshold) are laid out again, marks and cursor kept."""
        if self._shown is None or self._wide == (self.size.width >= WIDE_MIN_WIDTH):
            return
        rows, project_of, now = self._shown
        self.show(
            rows, marks=self._marks, project_of=project_of, now=now, select=self.selected_serial
        )

    def show(
        self,
        rows: list[tuple[int, IndexEntry]],
        *,
        marks: Collection[int],
        project_of: Callable[[IndexEntry], str | None],
        now: float,
        select: int | None,
    ) -> None:
        """Show exactly `rows` ((serial, entry), newest first); the cursor on `select`."""
        self.clear(columns=True)
        wide = self._wide = self.size.width >= WIDE_MIN_WIDTH
        self._shown = (rows, project_of, now)
        self._marks = set(marks)
        name_width, label_width = (14, 14) if wide else (12, 11)
        self.add_column("", key="mark", width=1)
        self.add_column("", key="provider", width=1)
        self.add_column("Project", key="project", width=name_width)
        self.add_column("Session", key="session", width=8)
        self.add_column("Label", key="label", width=label_width)
        self.add_column("Size", key="size", width=8)
        if wide:
            self.add_column("Records", key="records", width=7)
        self.add_column("Taken", key="taken", width=8)
        self.add_column("Snapshot", key="snapshot", width=16 if wide else 8)
        styles = band_styles(self.app)
        for serial, entry in rows:
            cells: list[Text | str] = [
                Text(MARK if serial in marks else " ", styles.accent),
                entry.provider.traits.mark,
                fmt.ellipsize(project_of(entry) or "—", name_width),
                fmt.short_id(entry.session_id),
                fmt.ellipsize(entry.strategy or "—", label_width),
                Text(human_bytes(entry.bytes), justify="right"),
            ]
            if wide:
                cells.append(Text(f"{entry.record_count:,}", justify="right"))
            cells.append(Text(age(now, entry.ts), justify="right"))
            cells.append(Text(entry.sha256[: 16 if wide else 8], styles.muted))
            self.add_row(*cells, key=str(serial))
        keys = [serial for serial, _ in rows]
        if select is not None and select in keys:
            self.move_cursor(row=keys.index(select), animate=False)

    def action_select_cursor(self) -> None:
        """enter: on an empty table (a filter matching nothing) DataTable selects nothing;
        the screen's records action still runs, to say no snapshot is selected."""
        if self.row_count:
            super().action_select_cursor()
        else:
            self.call_later(self.run_action, "screen.records")

    def refresh_ages(self, now: float) -> None:
        """The Taken cells as of `now`; only those whose text changed are redrawn."""
        if self._shown is None:
            return
        rows, project_of, _ = self._shown
        self._shown = (rows, project_of, now)
        for serial, entry in rows:
            text = age(now, entry.ts)
            key = str(serial)
            if str(self.get_cell(key, "taken")) != text:
                self.update_cell(key, "taken", Text(text, justify="right"))

    def set_mark(self, serial: int, marked: bool) -> None:
        (self._marks.add if marked else self._marks.discard)(serial)
        cell = Text(MARK if marked else " ", band_styles(self.app).accent)
        self.update_cell(str(serial), "mark", cell)

    @property
    def selected_serial(self) -> int | None:
        if self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:  # the cursor is out of range while rows change
            return None
        return int(str(key.value)) if key.value is not None else None
