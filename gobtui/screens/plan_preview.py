"""`p`: what one strategy would do to a session, record by record, before anything is written.

The header carries the plan's figures (tokens before and after, savings, preserved prefix,
probe recall, verify, admission, state card size); below, every original record beside what
the plan makes of it, unchanged runs folded. Planning runs in a thread worker.

The record-diff mode (split or unified) and the strategy picked here are remembered between
runs (the app's `remembered`, ui-state.json): read as the screen is composed, saved by a thread
worker when the user changes them. A strategy the screen is opened with (the eval table's
row), or one config.toml sets for the session, wins over the remembered one.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Select, Static
from textual.worker import get_current_worker

from gobtui.adapters.config.ui_state import RememberedChoices, UiState
from gobtui.adapters.planning.load import PlanningError
from gobtui.controllers.commands import PlanCommands
from gobtui.controllers.messages import PlanFailed, PlanReady, SessionsChanged
from gobtui.core.model import SessionSummary
from gobtui.screens.plan_header import HeaderView, figures_text
from gobtui.screens.worker_errors import WorkerErrors, screen_work
from gobtui.services.planning_state import (
    DEFAULT_STRATEGY,
    STRATEGY_IDS,
    PlanPreview,
    PreviewPlanner,
    ignoring_trigger,
    load_for_plan,
    next_strategy,
    policy_for,
    session_moved_on,
)
from gobtui.view_models import format as fmt
from gobtui.view_models.preview_rows import PairRow, RowChange, unfold
from gobtui.widgets.line_list import LineList
from gobtui.widgets.palette import band_styles
from gobtui.widgets.publish_bar import PublishBar
from gobtui.widgets.record_pairs import RecordPairs

CHANGED_NOTICE = "session changed since this preview — press r to re-plan"
LIVE_NOTICE = "session is being written — apply once it is idle: r re-plans, then a"
"""A live session moves on every few seconds: re-planning alone would not let `a` through."""

PREVIEW_LEGEND = [
    ("=", "the record stays byte-identical"),
    ("… N unchanged", "a run of untouched records, folded into one row (enter opens it)"),
    ("stub, frees X", "the payload is replaced by a short stub"),
    ("+ line N card", "a record the plan appends: the state card, shown whole below it"),
    ("API drop", "cache_edits: dropped at the API layer, the file keeps it"),
    ("prefix", "tokens before the first change: what the prompt cache keeps"),
    ("recall", "probes (paths, errors, ids) still findable after the plan"),
]


class PlanPreviewScreen(WorkerErrors, Screen[None]):
    """One session, one strategy at a time; `[`/`]` or the selector switch strategy."""

    COMMANDS = {PlanCommands}
    AUTO_FOCUS = "#plan-records"
    HELP_LEGEND = PREVIEW_LEGEND
    HELP_LEGEND_TITLE = "Reading the preview"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back where you came from", id="plan.close"),
        Binding(
            "right_square_bracket,right",
            "strategy(1)",
            "Strategy",
            key_display="[ ]",
            tooltip="Next strategy (] or →; [ or ← goes back)",
            id="plan.strategy_next",
        ),
        Binding(
            "left_square_bracket,left",
            "strategy(-1)",
            "Prev strategy",
            show=False,
            key_display="[",
            tooltip="Previous strategy ([ or ←)",
            id="plan.strategy_prev",
        ),
        Binding(
            "s",
            "toggle_split",
            "Split",
            tooltip="Record diffs: split or unified",
            id="plan.toggle_split",
        ),
        Binding(
            "t",
            "toggle_trigger",
            "Trigger",
            tooltip="Ignore the trigger: plan at the current context anyway",
            id="plan.ignore_trigger",
        ),
        Binding(
            "a",
            "apply",
            "Apply",
            tooltip="Publish this plan as a new fork (asks first; the original is kept)",
            id="plan.apply",
        ),
        Binding(
            "r",
            "replan",
            "Re-plan",
            show=False,
            tooltip="Read the session again and plan",
            id="plan.replan",
        ),
    ]

    def __init__(
        self,
        summary: SessionSummary,
        *,
        strategy: str | None = None,
        ignore_trigger: bool = False,
        live: bool = False,
    ) -> None:
        super().__init__()
        self.summary = summary
        self.policy, default = policy_for(summary)
        self.strategy = strategy if strategy in STRATEGY_IDS else default
        self._strategy_fixed = strategy in STRATEGY_IDS or default != DEFAULT_STRATEGY
        """Opened with a strategy (eval's row), or config.toml names one for this session: it
        wins over the one remembered, which only fills in where nothing else chose."""
        self.ignore_trigger = ignore_trigger
        self.live = live
        self.split = True
        self.changed = False
        self.planned_bytes = summary.bytes
        """Size of the file the shown answer was computed from (set when it arrives)."""
        self.preview: PlanPreview | None = None
        self.error: str | None = None
        self._planner: PreviewPlanner | None = None
        self._request = 0
        self._records_take_focus = False
        """The strategy list closed while the records were loading: they get the focus."""

    def compose(self) -> ComposeResult:
        self._recall_choices()  # before the selector is made with the strategy
        with Horizontal(id="plan-bar"):
            yield Static(id="plan-title")
            yield Select(
                [(name, name) for name in STRATEGY_IDS],
                value=self.strategy,
                allow_blank=False,
                compact=True,
                id="plan-strategy",
            )
        yield Static(id="plan-figures")
        yield Static(CHANGED_NOTICE, id="plan-notice")
        yield RecordPairs(id="plan-records")
        yield PublishBar()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#plan-notice", Static).display = False
        self.query_one(RecordPairs).focus()
        self.watch(self.query_one("#plan-strategy", Select), "expanded", self._list_toggled)
        signal = getattr(self.app, "sessions_changed", None)
        if signal is not None:
            signal.subscribe(self, self._sessions_changed)
        self._render_header()
        self.replan(reload=True)

    def on_unmount(self) -> None:
        remembered = self._remembered()
        if remembered is not None and remembered.pending:
            remembered.flush()  # a change whose worker had not started yet (a quick quit)

    # --- remembered choices --------------------------------------------------------------

    def _remembered(self) -> RememberedChoices | None:
        remembered = getattr(self.app, "remembered", None)
        return remembered if isinstance(remembered, RememberedChoices) else None

    def _recall_choices(self) -> None:
        """The split mode and (unless one was given) the strategy of the last run."""
        remembered = self._remembered()
        if remembered is None:
            return
        split, strategy = remembered.state.diff_split, remembered.state.strategy
        if split is not None:
            self.split = split
        if not self._strategy_fixed and strategy is not None and strategy in STRATEGY_IDS:
            self.strategy = strategy

    def _remember(self, changes: UiState) -> None:
        """Keep `changes` for the next run: in memory now, in the file from a thread."""
        remembered = self._remembered()
        if remembered is None:
            return
        remembered.remember(changes)
        self.app.run_worker(
            remembered.flush, thread=True, group="ui-state", description="save ui-state.json"
        )

    # --- planning ------------------------------------------------------------------------

    def replan(self, reload: bool = False) -> None:
        """Plan again in a thread; a newer request makes any older answer stale."""
        self._request += 1
        self.query_one(RecordPairs).loading = True
        self._render_header()
        planner = None if reload else self._planner
        self._plan(self._request, planner, self.strategy, self.ignore_trigger)

    @screen_work("plan-preview")
    def _plan(
        self, request: int, planner: PreviewPlanner | None, strategy: str, ignore_trigger: bool
    ) -> None:
        worker = get_current_worker()
        try:
            if planner is None:
                planner = PreviewPlanner(load_for_plan(self.summary))
            preview = planner.preview(
                strategy, self.policy, self.live, ignore_trigger=ignore_trigger
            )
        except PlanningError as error:
            self.post_message(PlanFailed(request, str(error)))
            return
        if not worker.is_cancelled:
            self.post_message(PlanReady(request, planner, preview))

    @on(PlanReady)
    def _plan_ready(self, message: PlanReady) -> None:
        if message.request != self._request:
            return
        self._planner = message.planner
        self.planned_bytes = len(message.planner.session.source_bytes)
        self.preview = message.preview
        self.error = None
        records = self.query_one(RecordPairs)
        records.set_rows(message.preview.rows, number=message.planner.session.record_number)
        records.loading = False
        if self.focused is None or self._records_take_focus:
            self._focus_records()
        self.refresh_bindings()  # the footer missed the focus that came back with the rows
        self._render_header()

    @on(PlanFailed)
    def _plan_failed(self, message: PlanFailed) -> None:
        if message.request != self._request:
            return
        self.preview = None
        self.error = message.error
        records = self.query_one(RecordPairs)
        records.set_rows([])
        records.loading = False
        if self._records_take_focus:
            self._focus_records()
        self._render_header()

    def _sessions_changed(self, message: SessionsChanged) -> None:
        if not self.changed and session_moved_on(
            self.summary, self.planned_bytes, message.summaries, message.removed
        ):
            self.changed = True
            notice = self.query_one("#plan-notice", Static)
            notice.update(LIVE_NOTICE if self.live else CHANGED_NOTICE)
            notice.display = True

    # --- header --------------------------------------------------------------------------

    def _render_header(self) -> None:
        styles = band_styles(self.app)
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("PLAN ", style="reverse bold")
        project = fmt.ellipsize(Path(self.summary.cwd).name, 40) if self.summary.cwd else ""
        title.append(f" {project or fmt.short_id(self.summary.session_id)}", style="bold")
        title.append(f" · {self.summary.provider.label} {fmt.short_id(self.summary.session_id)}")
        first = self._planner.session.live_first_record if self._planner is not None else 1
        if first > 1:  # what precedes the newest compaction goes into the fork as it is
            title.append(f" · live from rec {first:,}")
        self.query_one("#plan-title", Static).update(title)
        view = HeaderView(
            self.preview,
            self.error,
            self.strategy,
            self.split,
            self.ignore_trigger,
            self.policy.trigger_tokens,
        )
        self.query_one("#plan-figures", Static).update(figures_text(view, styles))

    # --- actions -------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss(None)

    def action_strategy(self, step: int) -> None:
        # From the Select's value, set at once, not self.strategy (set when its Changed
        # message comes): `]]]` in one burst moves three strategies, as three slow presses do.
        select = self.query_one("#plan-strategy", Select)
        current = select.value if isinstance(select.value, str) else self.strategy
        select.value = next_strategy(current, step)

    def set_strategy(self, strategy: str) -> None:
        if strategy in STRATEGY_IDS:
            self.query_one("#plan-strategy", Select).value = strategy

    @on(Select.Changed, "#plan-strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        value = event.value
        if isinstance(value, str) and value != self.strategy:
            self.strategy = value
            self._remember(UiState(strategy=value))
            self.replan()

    def _list_toggled(self, expanded: bool) -> None:
        """The dropdown closed (a pick, or escape): the keys go back to the records. After the
        refresh, or the Select's own focus call on closing would take them again; once they
        are drawn, when a new pick has them loading (a loading widget takes no focus)."""
        if not expanded:
            self._records_take_focus = True
            self.call_after_refresh(self._focus_records)

    def _focus_records(self) -> None:
        records = self.query_one(RecordPairs)
        if not records.loading:
            self._records_take_focus = False
            records.focus()

    def action_toggle_split(self) -> None:
        self.split = not self.split
        self._remember(UiState(diff_split=self.split))
        self._render_header()

    def action_toggle_trigger(self) -> None:
        self.ignore_trigger = not self.ignore_trigger
        self.replan()

    def action_replan(self) -> None:
        self.changed = False
        self.query_one("#plan-notice", Static).display = False
        self.replan(reload=True)

    def action_diff(self) -> None:
        records = self.query_one(RecordPairs)
        row = records.selected
        if row is not None:
            self._open_diff(row)

    @on(LineList.Selected, "#plan-records")
    def _row_selected(self, _event: LineList.Selected) -> None:
        self.action_diff()

    def _open_diff(self, row: PairRow) -> None:
        from gobtui.screens.record_diff import RecordDiffScreen

        if self.preview is None:
            return
        if row.change is RowChange.FOLD:
            self._unfold(row)
            return
        if not row.diffable:
            self.notify("Nothing to diff on the state card: pick a record row.", timeout=3)
            return
        before, after = self.preview.record_bytes(row)

        def remember(split: bool | None) -> None:
            if split is not None and split != self.split:
                self.split = split
                self._remember(UiState(diff_split=split))
                self._render_header()

        record = row.before or row.after
        number = self.query_one(RecordPairs).number(record.line) if record is not None else None
        screen = RecordDiffScreen(row, before, after, split=self.split, number=number)
        self.app.push_screen(screen, remember)

    def _unfold(self, row: PairRow) -> None:
        """A fold row (the cursor's) opened into its unchanged records, a row each, until
        the next plan folds them again."""
        if self.preview is None or self._planner is None:
            return
        records = self.query_one(RecordPairs)
        at = records.cursor
        opened = unfold(row, self.preview.source_lines, self._planner.session.transcript)
        records.set_rows([*records.rows[:at], *opened, *records.rows[at + 1 :]], keep_cursor=True)

    # --- apply ---------------------------------------------------------------------------

    def apply_refusal(self) -> str | None:
        """Why the shown preview cannot be published as it stands, or None."""
        preview, planner = self.preview, self._planner
        if preview is None or planner is None:
            return "the plan is not ready yet" if self.error is None else "there is no plan"
        if self.changed:
            return LIVE_NOTICE if self.live else CHANGED_NOTICE
        if self.query_one(RecordPairs).loading:  # a re-plan runs on the same loaded session
            return "the plan is being recomputed; try again in a moment"
        f = preview.figures
        if f.no_plan_reason is not None:
            hint = " (t plans anyway)" if f.no_plan_reason == "below_trigger" else ""
            return f"no plan: {fmt.no_plan_words(f.no_plan_reason)}{hint}"
        if f.admitted is False:
            return f"the plan is refused by admission ({f.admission_code})"
        if f.control is not None:
            return f"a control plan {f.control}: there is no file to publish"
        return None

    def action_apply(self) -> None:
        """Publish the previewed plan: same loaded bytes, strategy, policy and trigger."""
        refusal = self.apply_refusal()
        if refusal is not None:
            self.notify(f"Nothing to apply: {refusal}", severity="warning", markup=False)
            return
        assert self._planner is not None
        session = self._planner.session
        policy = self.policy
        if self.ignore_trigger:
            policy = ignoring_trigger(policy, session.transcript.context_tokens())
        publishing = getattr(self.app, "publishing", None)
        if publishing is not None:
            publishing.apply(
                self.summary,
                live=self.live,
                strategy=self.strategy,
                policy=policy,
                session=session,
            )

    def worker_failed(self, group: str, message: str) -> None:
        self.post_message(PlanFailed(self._request, message))
