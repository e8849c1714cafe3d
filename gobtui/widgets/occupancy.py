"""The occupancy bar: filled share of the window, coloured by band, with the trigger marked."""

from __future__ import annotations

from rich.text import Text

from gobtui.core.board import BoardRow
from gobtui.core.model import ContextState
from gobtui.view_models import format as fmt
from gobtui.widgets.palette import BandStyles

FILLED = "█"
EMPTY = "░"
TRIGGER = "┃"


def occupancy_bar(row: BoardRow, width: int, styles: BandStyles) -> Text:
    """`width` cells of bar plus a right-aligned percentage (5 cells)."""
    text = Text(no_wrap=True, overflow="crop")
    summary = row.summary
    if row.occupancy is None:
        label = "reset" if summary.context_state is ContextState.RESET else "no usage"
        text.append(fmt.ellipsize(label, width + 5).ljust(width + 5), styles.muted)
        return text
    filled = min(width, round(row.occupancy * width))
    share = row.trigger_share
    mark_at = width if share is None else min(width - 1, max(0, round(share * width) - 1))
    band_style = styles.for_band(row.band)

    def run(start: int, end: int) -> None:
        full = min(max(0, filled - start), end - start)
        if full:
            text.append(FILLED * full, band_style)
        if end - start - full:
            text.append(EMPTY * (end - start - full), styles.muted)

    run(0, mark_at)
    if mark_at < width:
        text.append(
            TRIGGER, styles.marker
        )  # over the fill too: the alert colour would vanish in a red bar
        run(mark_at + 1, width)
    text.append(f"{fmt.percent(row.occupancy):>5}", band_style)
    return text
