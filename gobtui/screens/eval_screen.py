"""`e`: every strategy on one session, side by side, the best marked ★.

evaluate_session runs in a thread worker; its progress callback feeds a ProgressBar through
call_from_thread. `enter` opens that strategy's plan preview.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, ProgressBar, Static
from textual.worker import get_current_worker

from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import PlanningError
from gobtui.controllers.messages import EvalFailed, EvalReady, SessionsChanged
from gobtui.core.context_words import fills_words
from gobtui.core.evaluation import EvalRow, RowStatus
from gobtui.core.model import SessionSummary
from gobtui.screens.plan_preview import CHANGED_NOTICE
from gobtui.screens.worker_errors import WorkerErrors, screen_work
from gobtui.services.planning_state import (
    ignoring_trigger,
    load_for_plan,
    policy_for,
    session_moved_on,
)
from gobtui.view_models import format as fmt
from gobtui.view_models.eval_rows import (
    COLUMNS,
    EVAL_LEGEND,
    STATUS_WORDS,
    EvalSort,
    known_recall,
    row_note,
    sort_rows,
)
from gobtui.widgets.palette import BandStyles, band_styles
from gobtui.widgets.row_keys import row_edge_bindings


class EvalTable(DataTable[Text | str]):
    """The table's enter opens the preview, and says so in the footer."""

    BINDINGS = [
        Binding(
            "enter",
            "select_cursor",
            "Preview",
            tooltip="Plan preview of the strategy",
            id="eval.open",
        ),
        *row_edge_bindings("eval"),
    ]


NOTE_COLUMN_MIN_WIDTH = 100
"""From this screen width on, the table gains a note column (reason, error, card)."""


class EvalScreen(WorkerErrors, Screen[None]):
    HELP_LEGEND = EVAL_LEGEND
    HELP_LEGEND_TITLE = "Reading the table"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the sessions", id="eval.close"),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort: " + ", ".join(EvalSort), id="eval.sort"),
        Binding(
            "t",
            "toggle_trigger",
            "Trigger",
            tooltip="Ignore the trigger: evaluate at the current context anyway",
            id="eval.ignore_trigger",
        ),
        Binding(
            "r", "rerun", "Re-run", tooltip="Read the session and evaluate again", id="eval.rerun"
        ),
    ]

    def __init__(
        self,
        summary: SessionSummary,
        *,
        live: bool = False,
        ignore_trigger: bool = False,
        show_timings: bool = True,
    ) -> None:
        super().__init__()
        self.summary = summary
        self.policy, _ = policy_for(summary)
        self.live = live
        self.ignore_trigger = ignore_trigger
        self.show_timings = show_timings
        """False in the demo: timings vary between runs, and screenshots must not."""
        self.sort_key = EvalSort.REGISTRY
        self.rows: list[EvalRow] = []
        self.fills = ""
        self.error: str | None = None
        self.running = False
        self.changed = False
        self.planned_bytes = summary.bytes
        """Size of the file the shown answer was computed from (set when it arrives)."""
        self._request = 0

    def compose(self) -> ComposeResult:
        yield Static(id="eval-title")
        with Horizontal(id="eval-progress-bar"):
            yield ProgressBar(show_eta=False, id="eval-progress")
            yield Static(id="eval-what")
        yield Static(CHANGED_NOTICE.replace("re-plan", "re-run"), id="eval-notice")
        yield EvalTable(cursor_type="row", id="eval-table")
        yield Static(id="eval-detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._fill_table()
        self.query_one("#eval-notice", Static).display = False
        self.query_one(DataTable).focus()
        signal = getattr(self.app, "sessions_changed", None)
        if signal is not None:
            signal.subscribe(self, self._sessions_changed)
        self.rerun()

    # --- evaluation ----------------------------------------------------------------------

    def rerun(self) -> None:
        self._request += 1
        self.running = True
        self.error = None
        self.query_one("#eval-progress-bar").display = True
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.query_one("#eval-what", Static).update(" reading the session")  # not the last run's
        self._render_title()
        self._evaluate(self._request, self.ignore_trigger)

    @screen_work("eval")
    def _evaluate(self, request: int, ignore_trigger: bool) -> None:
        worker = get_current_worker()

        def progress(done: int, total: int, what: str) -> None:
            if worker.is_cancelled:
                return
            with suppress(RuntimeError):  # the app is shutting down: nobody is watching
                self.app.call_from_thread(self._progress, request, done, total, what)

        try:
            session = load_for_plan(self.summary)
            context = session.transcript.context_tokens()
            policy = ignoring_trigger(self.policy, context) if ignore_trigger else self.policy
            rows = evaluate_session(session, policy, None, self.live, progress)
        except PlanningError as error:
            self.post_message(EvalFailed(request, str(error)))
            return
        if not worker.is_cancelled:
            fills = fills_words(session.composition)
            self.post_message(EvalReady(request, rows, context, len(session.source_bytes), fills))

    def _progress(self, request: int, done: int, total: int, what: str) -> None:
        if request != self._request or not self.is_attached:  # stale, or the screen closed
            return
        self.query_one(ProgressBar).update(total=total, progress=done)
        self.query_one("#eval-what", Static).update(f" {what}")

    @on(EvalReady)
    def _ready(self, message: EvalReady) -> None:
        if message.request != self._request:
            return
        self.running = False
        self.rows = message.rows
        self.fills = message.fills
        self.planned_bytes = message.source_bytes
        self.query_one("#eval-progress-bar").display = False
        self._fill_table()
        self._render_title()

    @on(EvalFailed)
    def _failed(self, message: EvalFailed) -> None:
        if message.request != self._request:
            return
        self.running = False
        self.error = message.error
        self.rows = []
        self.query_one("#eval-progress-bar").display = False
        self._fill_table()
        self._render_title()

    def _sessions_changed(self, message: SessionsChanged) -> None:
        if not self.changed and session_moved_on(
            self.summary, self.planned_bytes, message.summaries, message.removed
        ):
            self.changed = True
            self.query_one("#eval-notice", Static).display = True

    # --- drawing -------------------------------------------------------------------------

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("EVAL ", style="reverse bold")
        project = fmt.ellipsize(Path(self.summary.cwd).name, 40) if self.summary.cwd else ""
        text.append(f" {project or fmt.short_id(self.summary.session_id)}", style="bold")
        text.append(f" · {self.summary.provider.label} {fmt.short_id(self.summary.session_id)}")
        trigger = fmt.tokens(self.policy.effective_trigger())
        text.append(f" · trigger {'ignored' if self.ignore_trigger else trigger}")
        text.append(f" · sort {self.sort_key.value}")
        if self.error is not None:
            text.append(f"\ncannot evaluate: {self.error}", styles.alert)
        elif self.running:
            text.append("\nevaluating every strategy on an in-memory copy…", styles.muted)
        else:
            best = next((r for r in self.rows if r.best), None)
            line = f"best: ★ {best.strategy}" if best else "no strategy qualifies as best"
            if any(r.client_compacts for r in self.rows):
                line += " · ! the client would compact that fork itself"
            text.append(
                f"\n{line} · {len(self.rows)} strategies", styles.ok if best else styles.warn
            )
            if self.fills:
                text.append(f"\n{self.fills}", styles.muted)
        self.query_one("#eval-title", Static).update(text)

    def _cells(self, row: EvalRow, styles: BandStyles) -> list[Text | str]:
        ok = row.status is RowStatus.PLAN
        name = Text(("★ " if row.best else "  ") + row.strategy, styles.ok if row.best else "")
        status_style = {RowStatus.ERROR: styles.alert, RowStatus.REFUSED: styles.warn}.get(
            row.status, styles.muted if not ok else ""
        )
        after = (
            fmt.tokens(row.context_tokens_after) if row.context_tokens_after is not None else "—"
        )
        share = fmt.percent(row.savings_share) if row.est_reclaimed else "—"
        valid: Text | str = "—"
        if row.valid is not None:
            valid = Text("yes", styles.ok) if row.valid else Text("NO", styles.alert)
        recall = fmt.percent(known_recall(row))
        ms = f"{row.duration_ms:.0f}" if self.show_timings else "·"
        return [
            name,
            Text(STATUS_WORDS[row.status], status_style),
            # ! : the client would compact this fork itself on resume (its summary, not ours)
            Text(
                after + ("!" if row.client_compacts else ""),
                styles.alert if row.client_compacts else "",
                justify="right",
            ),
            Text(fmt.tokens(row.est_reclaimed) if row.est_reclaimed else "—", justify="right"),
            Text(share, justify="right"),
            Text(fmt.tokens(row.prefix_tokens) if ok else "—", justify="right"),
            valid,
            Text(recall, justify="right"),
            Text(ms, justify="right"),
        ]

    def on_resize(self) -> None:
        table: DataTable[Text | str] = self.query_one(DataTable)
        wide = self.size.width >= NOTE_COLUMN_MIN_WIDTH
        if wide != ("note" in {str(k.value) for k in table.columns}):
            self._fill_table()

    def _fill_table(self) -> None:
        table: DataTable[Text | str] = self.query_one(DataTable)
        selected = self.selected_strategy()
        table.clear(columns=True)
        wide = self.size.width >= NOTE_COLUMN_MIN_WIDTH
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        if wide:
            # An explicit width: an auto-sized column added before its rows sometimes keeps the
            # header's width, which clipped every note in one snapshot run out of ten.
            notes = [len(row_note(row)) for row in self.rows]
            table.add_column("note", key="note", width=max([len("note"), *notes]))
        styles = band_styles(self.app)
        for row in sort_rows(self.rows, self.sort_key):
            cells = self._cells(row, styles)
            if wide:
                cells.append(Text(row_note(row), styles.alert if row.error else styles.muted))
            table.add_row(*cells, key=row.strategy)
        if selected is not None and selected in {r.strategy for r in self.rows}:
            table.move_cursor(row=table.get_row_index(selected))
        self._render_detail()

    def selected_strategy(self) -> str | None:
        table: DataTable[Text | str] = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    def _render_detail(self) -> None:
        styles = band_styles(self.app)
        name = self.selected_strategy()
        row = next((r for r in self.rows if r.strategy == name), None)
        text = Text(no_wrap=True, overflow="ellipsis")
        if row is None:
            self.query_one("#eval-detail", Static).update(text)
            return
        text.append(f"{row.strategy}: ", style="bold")
        style: Style | str = ""
        if row.error:
            style = styles.alert
        elif row.status is not RowStatus.PLAN:
            style = styles.warn
        if row.status is not RowStatus.PLAN and not row.error:
            text.append(f"{STATUS_WORDS[row.status]}: ", style)
        text.append(row_note(row), style)
        if row.status is RowStatus.PLAN and not row.control:
            text.append(f" · probes {row.probes_recalled}/{row.probes_total}")
        text.append("\nenter: preview this strategy", styles.muted)
        self.query_one("#eval-detail", Static).update(text)

    @on(DataTable.RowHighlighted, "#eval-table")
    def _highlighted(self) -> None:
        self._render_detail()

    # --- actions -------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss(None)

    def action_cycle_sort(self) -> None:
        self.sort_key = self.sort_key.next()
        self._fill_table()
        self._render_title()

    def action_toggle_trigger(self) -> None:
        self.ignore_trigger = not self.ignore_trigger
        self.rerun()

    def action_rerun(self) -> None:
        self.changed = False
        self.query_one("#eval-notice", Static).display = False
        self.rerun()

    @on(DataTable.RowSelected, "#eval-table")
    def _selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        from gobtui.screens.plan_preview import PlanPreviewScreen

        strategy = self.selected_strategy()
        if strategy is None:
            return
        self.app.push_screen(
            PlanPreviewScreen(
                self.summary,
                strategy=strategy,
                ignore_trigger=self.ignore_trigger,
                live=self.live,
            )
        )

    def worker_failed(self, group: str, message: str) -> None:
        self.post_message(EvalFailed(self._request, message))
