"""Cells of the sessions table, drawn lazily.

A DataTable holds every cell of every row, but draws only the rows on screen. So a cell here
is a key (the values it shows) and a way to draw it: building 2,000 rows costs tuples, not
Rich Text, and only the visible ones are ever drawn. Cells compare by key, so an update
touches exactly the cells whose values changed. Cells have no measure hook: column widths
are fixed, and DataTable would otherwise measure every cell of every new row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

from gobtui.core.board import BoardRow
from gobtui.core.status import Status
from gobtui.view_models import format as fmt
from gobtui.view_models.status_legend import STATUS_GLYPHS
from gobtui.widgets.occupancy import occupancy_bar
from gobtui.widgets.palette import BandStyles

Clock = Callable[[], float]
BAR_WIDTH = 10


class Cell:
    __slots__ = ("draw", "key")

    def __init__(self, key: tuple[Any, ...], draw: Callable[[], Text]) -> None:
        self.key = key
        self.draw = draw

    @property
    def plain(self) -> str:
        return self.draw().plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.draw()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cell) and self.key == other.key

    __hash__ = None  # type: ignore[assignment]


def status_style(status: Status, styles: BandStyles) -> Style:
    """Waiting sessions stand out; what needs no one is muted."""
    if status is Status.WAITING:
        return styles.warn
    if status is Status.APPROVAL:
        return styles.alert
    return styles.ok if status is Status.WORKING else styles.muted


def _state(row: BoardRow, styles: BandStyles) -> Text:
    return Text.assemble(
        (row.summary.provider.traits.mark, "bold"),
        (STATUS_GLYPHS[row.status], status_style(row.status, styles)),
        ("⚠" if row.summary.warned else " ", styles.warn),
    )


def _eta(row: BoardRow, styles: BandStyles) -> Text:
    if row.over_trigger:
        return Text("now", styles.alert)
    return Text(fmt.duration(row.eta_secs), justify="right")


def _ellipsized(text: str, width: int, style: str | Style = "") -> Text:
    return Text(fmt.ellipsize(text, width), style)


def next_age_change(mtime: float, now: float) -> float:
    """When the age of something written at `mtime` next reads otherwise (fmt.duration
    counts seconds for a minute, then minutes, hours, days)."""
    age = max(0, int(now - mtime))
    unit = 1 if age < 60 else 60 if age < 3600 else 3600 if age < 86_400 else 86_400
    when = mtime + (age // unit + 1) * unit
    return when if when > now else now + unit  # (float rounding: always later than now)


def age_cell(mtime: float, now: float, styles: BandStyles) -> Cell:
    """The Last column's cell: the age at the board's clock reading `now`."""
    age = fmt.duration(now - mtime)
    return Cell(("last", age, styles), partial(Text, age, styles.muted, justify="right"))


def row_cells(
    row: BoardRow, columns: Sequence[str], widths: dict[str, int], styles: BandStyles, now: float
) -> tuple[Cell, ...]:
    """One Cell per column key, in order."""
    s = row.summary
    cells: list[Cell] = []
    for key in columns:
        width = widths[key]
        if key == "state":
            cell = Cell(
                (key, s.provider, row.status, s.warned, styles), lambda: _state(row, styles)
            )
        elif key == "status":
            status = row.status
            cell = Cell(
                (key, status, styles),
                partial(Text, status.value, status_style(status, styles)),
            )
        elif key == "project":
            cell = Cell((key, row.project, width), partial(_ellipsized, row.project, width))
        elif key == "title":
            title = s.title or s.session_id
            cell = Cell((key, title, width), partial(_ellipsized, title, width))
        elif key == "model":
            cell = Cell(
                (key, s.model, width, styles),
                partial(_ellipsized, s.model or "—", width, styles.muted),
            )
        elif key == "used":
            used = f"{fmt.tokens(s.context_tokens)}/{fmt.tokens(s.context_window)}"
            cell = Cell((key, used), partial(Text, used, justify="right"))
        elif key == "occupancy":
            bar_key = (key, row.occupancy, row.trigger_share, row.band, row.over_trigger)
            cell = Cell(
                (*bar_key, s.context_state, styles),
                lambda: occupancy_bar(row, BAR_WIDTH, styles),
            )
        elif key == "burn":
            burn = fmt.rate(row.burn_per_min) if row.live else "idle"
            cell = Cell((key, burn, styles), partial(Text, burn, styles.muted, justify="right"))
        elif key == "eta":
            cell = Cell(
                (key, row.over_trigger, fmt.duration(row.eta_secs), styles),
                lambda: _eta(row, styles),
            )
        else:  # "last": the age at the board's clock reading
            cell = age_cell(s.mtime, now, styles)
        cells.append(cell)
    return tuple(cells)
