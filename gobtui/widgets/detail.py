"""The detail pane for the selected session: figures, context over time, subagents, resume."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import Static

from gobtui.core.board import BoardRow
from gobtui.core.composition import Composition
from gobtui.core.model import ContextState
from gobtui.core.report import lifetime_of
from gobtui.core.sanitize import one_line
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.widgets.context_chart import ContextChart
from gobtui.widgets.fills import fills_text
from gobtui.widgets.palette import BandStyles, band_styles

LABEL_CELLS = 10
"""The facts' label column (8 wide at least) and the gap after it."""


def facts(
    row: BoardRow,
    styles: BandStyles,
    last_fork: str | None = None,
    width: int = 0,
    fills: Composition | None = None,
) -> Table:
    """At most eight lines (nine after a fork), so the pane fits under the table in an 80x24
    pane. `last_fork` is the resume command of the fork last published from this session;
    `width` (when known) is the pane's, to which a long path is cut in its middle; `fills`
    what fills the context, once a worker has read the session whole."""
    s = row.summary
    grid = _Facts()
    state = "" if s.context_state is ContextState.REPORTED else f" ({s.context_state.value})"
    context = Text(
        f"{fmt.tokens(s.context_tokens)} / {fmt.tokens(s.context_window)}",
        styles.for_band(row.band),
    )
    headroom = "—" if row.headroom_tokens is None else fmt.tokens(max(0, row.headroom_tokens))
    context.append(
        f" {fmt.percent(row.occupancy)}{state} · trigger {fmt.tokens(row.trigger_tokens)} · headroom {headroom}"
    )
    if row.over_trigger:
        context.append("  OVER TRIGGER", styles.alert)
    grid.add_row("Context", context)
    if fills is not None:
        grid.add_row("Fills", fills_text(fills, styles))
    c = s.components
    life = lifetime_of(s)
    tokens: list[str] = []
    if c is not None:
        parts = [
            ("in", c.input_tokens),
            ("cache rd", c.cache_read_tokens),
            ("cache wr", c.cache_creation_tokens),
            ("out", c.output_tokens),
        ]
        tokens = [f"{k} {fmt.tokens(v)}" for k, v in parts if v is not None]
    if life is not None:  # what the whole session used (≥: of the head and tail read)
        tokens.append(
            f"lifetime {'≥' if life['partial'] else ''}{fmt.tokens(life['total_tokens'])}"
        )
    if tokens:
        grid.add_row("Tokens", " · ".join(tokens))
    eta = "now" if row.over_trigger else fmt.duration(row.eta_secs)  # as the board says
    burn = f"burn {fmt.rate(row.burn_per_min)} · ETA {eta}"
    if not row.live:
        burn = f"last burn {fmt.rate(row.burn_per_min)}"
    activity = Text(f"{'live' if row.live else 'idle'} {fmt.duration(row.age_secs)} ago")
    if s.warned:  # before the figures: a narrow pane cuts the end of the line
        activity.append(f" · ⚠ {_damage(s.bad_lines, s.torn_tail)}", styles.warn)
    activity.append(f" · {burn} · {s.records:,} rec · {human_bytes(s.bytes)}")
    if s.coverage.value != "full":
        activity.append(" (head+tail)")
    grid.add_row("Activity", activity)
    grid.add_row("Session", Text(one_line(f"{s.model or '—'} · {s.session_id}")))
    extra: list[str] = []
    if s.subagents:
        subs = ", ".join(
            f"{a.agent_id[:10]} {fmt.tokens(a.context_tokens)}" for a in s.subagents[:3]
        )
        more = f" +{len(s.subagents) - 3}" if len(s.subagents) > 3 else ""
        extra.append(f"{len(s.subagents)} subagents: {subs}{more}")
    if s.compactions:
        last = s.compactions[-1]
        pre = f" at {fmt.tokens(last.pre_tokens)}" if last.pre_tokens else ""
        extra.append(f"compacted {len(s.compactions)}× (last {last.trigger or 'provider'}{pre})")
    if extra:
        grid.add_row("History", Text(one_line(" · ".join(extra))))
    path = fmt.display_path(s.path)
    grid.add_row("Path", Text(fmt.ellipsize_middle(path, width - LABEL_CELLS) if width else path))
    grid.add_row("Resume", Text(one_line(s.resume_command()), styles.accent))
    if last_fork:
        grid.add_row("Fork", Text(one_line(f"last fork: {last_fork}"), styles.ok))
    return grid


class _Facts(Table):
    """Label and value, one line each: a value too long for the pane ends in an ellipsis.

    (Rich shrinks only wrappable columns to the width; a no_wrap column would run past the
    edge and be cropped there without one. So the column wraps and each value does not.)"""

    def __init__(self) -> None:
        super().__init__(
            box=None, padding=(0, 1, 0, 0), pad_edge=False, show_header=False, show_edge=False
        )
        self.add_column(style="bold", no_wrap=True, min_width=LABEL_CELLS - 2)
        self.add_column()

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        label, value = renderables
        text = value if isinstance(value, Text) else Text(str(value))
        text.no_wrap, text.overflow = True, "ellipsis"
        super().add_row(label, text, **kwargs)


def _damage(bad_lines: int, torn_tail: bool) -> str:
    """What in the file could not be read, in words."""
    if bad_lines and torn_tail:
        return f"{fmt.plural(bad_lines, 'unreadable line')}, the last one unfinished"
    if torn_tail:
        return "its last line is unfinished"
    return fmt.plural(bad_lines, "unreadable line")


class DetailPane(Vertical):
    """Shows one BoardRow (and its last fork's resume command); `show(None)` clears it."""

    DEFAULT_CSS = """
    DetailPane { height: auto; }
    DetailPane > #detail-facts { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.row: BoardRow | None = None
        self._shape: tuple[str, int] | None = None
        """(session, fact lines) last shown: the same again needs no layout pass."""
        self._words: tuple[object, ...] = ()
        """The theme and the facts' cells last drawn: the same again is not drawn."""

    def compose(self) -> ComposeResult:
        yield Static(id="detail-facts")
        yield ContextChart(id="detail-chart")

    def show(
        self, row: BoardRow | None, last_fork: str | None = None, fills: Composition | None = None
    ) -> None:
        self.row = row
        try:
            facts_widget = self.query_one("#detail-facts", Static)
            chart = self.query_one(ContextChart)
        except NoMatches:  # taken down on exit (pruned concurrently) while a tick ran
            return
        if row is None:
            self._shape, self._words = None, ()
            facts_widget.update(Text("No session selected.", style="italic"))
            chart.show(None, None)
            return
        grid = facts(row, band_styles(self.app), last_fork, self.content_region.width, fills)
        # Shown again every second (the ages move), mostly with the same words: those are
        # not drawn again, and the same session with as many fact lines keeps its height
        # (no layout pass of the whole screen).
        shape = (row.key, grid.row_count)
        words = (self.app.theme, *(cell for column in grid.columns for cell in column.cells))
        if words != self._words:
            facts_widget.update(grid, layout=shape != self._shape)
        self._shape, self._words = shape, words
        chart.show(row.summary, row.trigger_tokens)
