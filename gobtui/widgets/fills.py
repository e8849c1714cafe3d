"""The detail pane's "Fills" line: the context split by kind (core.composition) as one stacked
bar and a legend, short enough for an 80-column pane."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from gobtui.core.composition import Composition, PartKind
from gobtui.view_models import format as fmt
from gobtui.widgets.palette import BandStyles

BAR_CELLS = 16


def kind_styles(styles: BandStyles) -> dict[PartKind, Style]:
    """A colour a kind, from the theme's own (ANSI themes included); the parts no fork
    reaches are the muted ones."""
    return {
        PartKind.FIXED: styles.muted,
        PartKind.REASONING: styles.accent,
        PartKind.TOOL_OUTPUTS: styles.warn,
        PartKind.EDIT_INPUTS: styles.ok,
        PartKind.IMAGES: styles.alert,
        PartKind.CONVERSATION: styles.primary,
    }


def fills_text(comp: Composition, styles: BandStyles) -> Text:
    """'▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇ fixed 25k think 13k tools 11k edits 2.1k talk 1.3k'"""
    colours = kind_styles(styles)
    parts = [p for p in comp.parts if p.tokens > 0]
    total = sum(p.tokens for p in parts)
    text = Text()
    if not total:
        return Text("—")
    # Largest remainder: the cells add up to the bar, a kind with any tokens gets one.
    exact = [p.tokens * BAR_CELLS / total for p in parts]
    cells = [max(1, int(x)) for x in exact]
    while sum(cells) > BAR_CELLS:
        cells[cells.index(max(cells))] -= 1
    order = sorted(range(len(parts)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    for i in order[: BAR_CELLS - sum(cells)]:
        cells[i] += 1
    for part, count in zip(parts, cells, strict=True):
        text.append("█" * count, colours[part.kind])
    for part in parts:
        text.append(f" {part.kind.short} ", colours[part.kind])
        text.append(fmt.tokens(part.tokens))
    return text
