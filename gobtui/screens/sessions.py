"""The main screen: every session's context occupancy, live, with a detail pane."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from gobtui.controllers.auto_prepare import AutoPrepare, WatcherState, watcher_line
from gobtui.controllers.messages import FillsReady
from gobtui.core.board import (
    COLUMN_SORTS,
    BoardPolicy,
    BoardRow,
    SortKey,
    build_row,
    crossed_trigger,
    filter_rows,
    sort_rows,
)
from gobtui.core.composition import Composition
from gobtui.core.limits import COMPLETE_MAX_BYTES, FILLS_REFRESH_SECS
from gobtui.core.model import Provider, SessionSummary
from gobtui.core.sanitize import one_line
from gobtui.core.status import Status, started_waiting, status_limits
from gobtui.screens.worker_errors import WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.due_times import DueTimes
from gobtui.view_models.status_legend import STATUS_GLYPHS
from gobtui.widgets.cells import status_style
from gobtui.widgets.detail import DetailPane
from gobtui.widgets.footer import KeyFooter
from gobtui.widgets.palette import band_styles
from gobtui.widgets.publish_bar import PublishBar
from gobtui.widgets.sessions_table import SessionsTable

LIMIT_MARGIN_SECS = 0.5
"""A row is looked at again this long after its age crosses a limit (past it, not on it)."""
STATUS_PADDING = 2
"""The status and watcher lines' padding (styles/app.tcss), left and right together."""


class SessionsScreen(WorkerErrors, Screen[None]):
    """Holds the board: summaries in, rows out; the app feeds it from its workers."""

    BINDINGS = [
        Binding(
            "slash",
            "focus_filter",
            "Find",
            tooltip="Filter by project, title, id or model",
            id="sessions.filter",
        ),
        Binding(
            "f",
            "cycle_provider",
            "Prov",
            tooltip="Provider filter: all, Claude, Codex",
            id="sessions.provider",
        ),
        Binding(
            "l",
            "toggle_live",
            "Live",
            tooltip="Only live sessions (written in the last 3 minutes)",
            id="sessions.live",
        ),
        Binding(
            "s",
            "cycle_sort",
            "Sort",
            tooltip="Sort: activity, occupancy, ETA, tokens, project, attention",
            id="sessions.sort",
        ),
        Binding(
            "R",
            "resume",
            "Resume",
            tooltip="Resume the session in its agent, then come back (enter too)",
            id="sessions.resume",
        ),
        Binding(
            "p",
            "plan",
            "Plan",
            tooltip="Preview the compaction plan, record by record",
            id="sessions.plan",
        ),
        Binding(
            "e",
            "eval",
            "Eval",
            tooltip="Every strategy on the session, side by side",
            id="sessions.eval",
        ),
        Binding(
            "a",
            "apply",
            "Apply",
            tooltip="Publish a compacted fork with the plan (asks first)",
            id="sessions.apply",
        ),
        Binding(
            "v",
            "vault",
            "Vault",
            tooltip="Snapshot vault: history, records, diff, undo, recall",
            id="sessions.vault",
        ),
        Binding(
            "o",
            "conversation",
            "Read",
            tooltip="Read the conversation: messages, tool calls folded, searchable",
            id="sessions.read",
        ),
        Binding(
            "t",
            "jump",
            "Jump",
            tooltip="Jump to the session's tmux pane (the pane its claude or codex runs in)",
            id="sessions.jump",
        ),
        Binding(
            "c",
            "copy_resume",
            "Copy",
            tooltip="Copy the resume command to the clipboard",
            id="sessions.copy",
        ),
        Binding(
            "A",
            "toggle_auto_prepare",
            "Auto",
            tooltip="Auto-prepare: a verified fork for each idle session over its trigger (off)",
            show=False,
            id="sessions.auto_prepare",
        ),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="sessions.clear"),
    ]

    provider_filter: reactive[Provider | None] = reactive(None)
    live_only: reactive[bool] = reactive(False)
    sort_key: reactive[SortKey] = reactive(SortKey.ACTIVITY)
    sort_reverse: reactive[bool] = reactive(False)
    filter_text: reactive[str] = reactive("")

    def __init__(
        self,
        policy: BoardPolicy,
        clock: Callable[[], float],
        *,
        demo: bool = False,
        searched: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.policy = policy
        self.clock = clock
        self.demo = demo
        self.searched = searched
        """The folders a scan reads (as displayed), named when none holds a session."""
        self.summaries: dict[str, SessionSummary] = {}
        self.rows: dict[str, BoardRow] = {}
        self.loaded = False
        self.painted = False
        self.composed = False
        self.now = 0.0
        self.fills: dict[str, tuple[int, float, Composition | None]] = {}
        """What fills each session read whole so far, by path: (its size then, when, what);
        a grown file is read again FILLS_REFRESH_SECS later at the earliest."""
        self._fills_pending: tuple[str, int] | None = None
        self._status_due = DueTimes()
        """When each row's status may next read otherwise (tick)."""

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Input(placeholder="/ filter by project, title, id, model…", id="filter", compact=True)
        yield SessionsTable(self.clock, id="sessions")
        yield Static(id="empty")
        yield DetailPane(id="detail")
        yield Static(id="watcher")
        yield PublishBar()
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False
        self.query_one("#empty", Static).display = False
        self.query_one(SessionsTable).focus()
        auto = getattr(self.app, "auto_prepare", None)
        if isinstance(auto, AutoPrepare):
            auto.listeners.append(self._show_watcher)
        forks = getattr(self.app, "forks_published", None)
        if forks is not None:  # a new fork shows as "last fork" in the detail pane
            forks.subscribe(self, lambda _receipt: self._show_selected())
        # is_mounted is still False inside on_mount; a scan may already have arrived.
        self.composed = True
        self.refresh_table()

    # --- board state -------------------------------------------------------------------

    def replace_all(self, summaries: list[SessionSummary], now: float) -> None:
        self.summaries = {s.path: s for s in summaries}
        self.now = now
        self.rows = {s.path: build_row(s, self.policy, now) for s in summaries}
        self._status_due = DueTimes()
        for summary in summaries:
            self._schedule_status(summary, now)
        self.loaded = True
        self.refresh_table()

    def set_policy(self, policy: BoardPolicy) -> None:
        """Triggers changed (config.toml edited): every row is built again under them."""
        self.policy = policy
        if self.loaded:
            self.rows = {p: build_row(s, policy, self.now) for p, s in self.summaries.items()}
            self.refresh_table()

    def merge(
        self, summaries: list[SessionSummary], removed: list[str], now: float
    ) -> tuple[list[BoardRow], list[BoardRow]]:
        """Merge changed sessions; returns the rows that just crossed their trigger, and
        those that just started waiting for their user."""
        self.now = now
        crossed: list[BoardRow] = []
        waiting: list[BoardRow] = []
        for path in removed:
            self.summaries.pop(path, None)
            self.rows.pop(path, None)
            self._status_due.forget(path)
        for summary in summaries:
            row = build_row(summary, self.policy, now)
            before = self.rows.get(summary.path)
            if crossed_trigger(before, row) and before is not None:
                crossed.append(row)
            if started_waiting(before.status if before else None, row.status):
                waiting.append(row)
            self.summaries[summary.path] = summary
            self.rows[summary.path] = row
            self._schedule_status(summary, now)
        self.refresh_table({s.path for s in summaries})
        return crossed, waiting

    def _schedule_status(self, summary: SessionSummary, now: float, again: bool = False) -> None:
        """When the row's status or live flag may next read otherwise (tick): just past the
        next limit its age crosses; never once it has ended."""
        if not again and self._status_due.scheduled(summary.path, summary.mtime):
            return
        age = now - summary.mtime
        for limit in status_limits(self.policy.hot_secs):
            if age < limit + LIMIT_MARGIN_SECS:
                when = summary.mtime + limit + LIMIT_MARGIN_SECS
                self._status_due.add(summary.path, summary.mtime, when, again=again)
                return

    def tick(self, now: float) -> None:
        """The clock moved: ages repaint, table and detail pane from this one reading;
        statuses move on with age on their own (working -> approval? -> idle -> ended), as
        do live flags, for files that stopped changing too. Each row is looked at again only
        when its age crosses one of the limits that decide them (a heap of when), so a
        second costs the rows due, not a look at every row."""
        if now == self.now:
            return
        self.now = now
        changed: list[BoardRow] = []
        flipped = False
        for path, mtime in self._status_due.pop_due(now):
            summary = self.summaries.get(path)
            if summary is None or summary.mtime != mtime:
                continue  # gone, or written since: its newer entry stands
            old = self.rows[path]
            row = build_row(summary, self.policy, now)
            flipped = flipped or row.live != old.live or row.status != old.status
            self.rows[path] = row
            changed.append(row)
            self._schedule_status(summary, now, again=True)
        if not self.composed:
            return
        try:
            table = self.query_one(SessionsTable)
        except NoMatches:
            return
        table.tick(now)
        if flipped:
            self.refresh_table({row.key for row in changed})
        else:
            table.update_rows(changed)
        key = table.selected_key  # the detail pane shows the age too, from the same reading
        if key in self.summaries:
            self.rows[key] = build_row(self.summaries[key], self.policy, now)
        self._show_selected()

    def visible_rows(self) -> list[BoardRow]:
        shown = filter_rows(
            self.rows.values(),
            provider=self.provider_filter,
            live_only=self.live_only,
            text=self.filter_text,
        )
        return sort_rows(shown, self.sort_key, reverse=self.sort_reverse)

    def refresh_table(self, changed: set[str] | None = None) -> None:
        """Show the visible rows; only those in `changed` (None: all) are drawn again."""
        if not self.composed:
            return
        try:
            table = self.query_one(SessionsTable)
        except NoMatches:  # a late worker message while the app shuts down
            return
        if self.now:
            table.now = self.now  # the rows were built at this reading: so are their ages
        visible = self.visible_rows()
        table.set_rows(visible, changed)
        if self.now:
            table.tick(self.now)
        empty = self.query_one("#empty", Static)
        empty.display = self.loaded and not visible
        if not visible:
            empty.update(self._empty_message())
        self._render_status(visible)
        self._show_selected()
        self._maybe_first_paint()

    @on(SessionsTable.LaidOut)
    def _maybe_first_paint(self) -> None:
        if self.loaded and not self.painted and self.query_one(SessionsTable).laid_out:
            self.painted = True
            self.post_message(self.FirstPaint())

    class FirstPaint(Message):
        """The table shows the first complete scan."""

    def _empty_message(self) -> Text:
        if self.rows:
            return Text(
                "No session matches the filters (esc clears the text filter, f and l toggle)."
            )
        folders = [one_line(p) for p in self.searched] or ["no folder"]
        where = " and ".join([", ".join(folders[:-1]), folders[-1]] if folders[:-1] else folders)
        return Text(
            "No Claude Code or Codex sessions found in the last 7 days.\n"
            f"Searched {where}.\n"
            "Point at other homes with --claude-home DIR and --codex-home DIR "
            "(or CLAUDE_CONFIG_DIR, CODEX_HOME); --all shows older sessions, --demo a demo home."
        )

    def on_resize(self) -> None:
        """The header and watcher words follow the pane's width."""
        if self.composed:
            self._render_status(self.visible_rows())

    def _show_watcher(self, state: WatcherState | None = None) -> None:
        auto = getattr(self.app, "auto_prepare", None)
        if not self.composed or not isinstance(auto, AutoPrepare):
            return
        state = state or auto.state
        text = watcher_line(state, compact=False)
        if text.cell_len > self.size.width - STATUS_PADDING:
            text = watcher_line(state, compact=True)
        self.query_one("#watcher", Static).update(text)

    def action_toggle_auto_prepare(self) -> None:
        auto = getattr(self.app, "auto_prepare", None)
        if isinstance(auto, AutoPrepare):
            auto.toggle()

    def _render_status(self, shown: list[BoardRow]) -> None:
        # A narrow pane: the short words, then the marks alone, so the sort is never cut.
        room = self.size.width - STATUS_PADDING
        for level in range(4):
            text = self._status_text(shown, level)
            if text.cell_len <= room:
                break
        self.query_one("#status", Static).update(text)
        self._show_watcher()  # (its words follow the width too)

    def _status_text(self, shown: list[BoardRow], level: int) -> Text:
        """The counts: sessions shown (of all, when filtered); live, by status and over
        trigger among those shown, so they match what the table lists. `level` 0 says it
        all, 1 in short words, 2 without the live count (the marks say it), 3 the statuses
        by their marks alone."""
        compact = level > 0
        total = len(self.rows)
        live = sum(1 for r in shown if r.live)
        over = sum(1 for r in shown if r.over_trigger)
        counts = Counter(r.status for r in shown)
        text = Text()
        if self.demo:
            text.append(" DEMO ", style="reverse bold")
            text.append(" ")
        text.append("gobtui", style="bold")
        if not self.loaded:
            text.append(" · scanning…")
        filters = []
        if self.provider_filter is not None:
            filters.append(self.provider_filter.value)
        if self.live_only:
            filters.append("live only")
        if self.filter_text:
            filters.append(f"“{fmt.ellipsize(self.filter_text, 16)}”")
        if self.loaded:
            if compact:
                count = f"{len(shown)}/{total}" if filters else f"{total}"
                text.append(f" · {count}" + (f" · {live} live" if level < 2 else ""))
            else:
                count = f"{len(shown)} of {total}" if filters else f"{total}"
                text.append(f" · {count} sessions · {live} live")
            # The marks of the statuses that ask for something, with their words: the
            # table's legend, at any width (`?` has them all).
            styles = band_styles(self.app)
            for status in (Status.WAITING, Status.APPROVAL, Status.WORKING):
                if counts[status]:
                    text.append(" · ")
                    text.append(STATUS_GLYPHS[status], status_style(status, styles))
                    text.append(" " if level < 3 else "")
                    words = f" {status.value}" if level < 3 else ""
                    text.append(f"{counts[status]}{words}", "bold")
            if over:
                text.append(f" · {over} over" if compact else f" · {over} over trigger", "bold")
        # What narrows the list comes before the sort: a narrow pane cuts the end.
        order = f"sort {self.sort_key.value}"
        if self.sort_reverse:
            order += " rev" if compact else ", reversed"
        text.append(" · " + " · ".join([*filters, order]))
        return text

    def selected_row(self) -> BoardRow | None:
        key = self.query_one(SessionsTable).selected_key
        return self.rows.get(key) if key else None

    def _show_selected(self) -> None:
        row = self.selected_row()
        fork_line = getattr(self.app, "fork_line", None)
        fork = fork_line(row.key) if row is not None and fork_line is not None else None
        fills = None
        if row is not None:
            key = (row.summary.path, row.summary.bytes)
            known = self.fills.get(key[0])
            fills = known[2] if known is not None else None
            stale = known is None or (
                known[0] != key[1] and self.clock() - known[1] >= FILLS_REFRESH_SECS
            )
            if stale and self._fills_pending is None:
                self._fills_pending = key
                self._read_fills(row.summary, key)
        self.query_one(DetailPane).show(row, fork, fills)

    @property
    def fills_reading(self) -> bool:
        """A session is being read for the detail pane's Fills line."""
        return self._fills_pending is not None

    @screen_work("fills")
    def _read_fills(self, summary: SessionSummary, key: tuple[str, int]) -> None:
        """The selected session read whole, in the background, for the detail pane's Fills
        line (core.composition); a file too big to read whole gets none."""
        if summary.bytes > COMPLETE_MAX_BYTES:
            self.post_message(FillsReady(key, None))
            return
        from pathlib import Path

        from gobtui.adapters.planning.load import PlanningError, load_session

        try:
            comp = load_session(Path(summary.path), summary.provider).composition
        except (PlanningError, OSError, ValueError):  # unreadable now: the line is left out
            comp = None
        self.post_message(FillsReady(key, comp))

    @on(FillsReady)
    def _fills_ready(self, message: FillsReady) -> None:
        path, size = message.key
        self.fills[path] = (size, self.clock(), message.composition)
        if self._fills_pending == message.key:
            self._fills_pending = None
        self._show_selected()

    def select_session(self, path: str) -> bool:
        if path not in self.rows:
            return False
        if path not in {r.key for r in self.visible_rows()}:
            self.provider_filter, self.live_only, self.filter_text = None, False, ""
            self.query_one("#filter", Input).value = ""
            self.refresh_table()
            self.notify("Filters cleared to show the session.", timeout=3)
        table = self.query_one(SessionsTable)
        ok = table.select_key(path)
        table.focus()
        self._show_selected()
        return ok

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show_selected()

    @on(DataTable.RowSelected)
    def _row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_resume()

    # --- filters and sorting -----------------------------------------------------------

    def watch_provider_filter(self) -> None:
        self.refresh_table(set())

    def watch_live_only(self) -> None:
        self.refresh_table(set())

    def watch_sort_key(self) -> None:
        self.refresh_table(set())

    def watch_sort_reverse(self) -> None:
        self.refresh_table(set())

    def watch_filter_text(self) -> None:
        self.refresh_table(set())

    def action_focus_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        # Now, not after this message (focus() waits for the next turn): the keys of `/dov`
        # typed in one burst are already queued behind the `/`, and must reach the box.
        self.set_focus(box)

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.filter_text = ""
        self.query_one(SessionsTable).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = bool(box.value)
        self.query_one(SessionsTable).focus()

    def action_cycle_provider(self) -> None:
        order: list[Provider | None] = [None, *Provider]
        self.provider_filter = order[(order.index(self.provider_filter) + 1) % len(order)]

    def action_toggle_live(self) -> None:
        self.live_only = not self.live_only

    def action_cycle_sort(self) -> None:
        self.sort_reverse = False
        self.sort_key = self.sort_key.next()

    @on(DataTable.HeaderSelected)
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it; again, the other way round."""
        key = COLUMN_SORTS.get(str(event.column_key.value))
        if key is None:
            return
        if key is self.sort_key:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_reverse = False
            self.sort_key = key

    # --- resume --------------------------------------------------------------------------

    def action_copy_resume(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        from gobtui.services.resume import resume_of

        command = resume_of(row.summary).copy_text()
        self.app.copy_to_clipboard(command)
        self.notify(f"Copied: {command}", title="Resume command")

    def action_resume(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        resume = getattr(self.app, "resume_session", None)
        if resume is not None:
            resume(row.summary)

    def action_jump(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        jump = getattr(self.app, "jump_to_pane", None)
        if jump is not None:
            jump(row.summary)

    # --- plan preview and eval -----------------------------------------------------------

    def action_plan(self) -> None:
        from gobtui.screens.plan_preview import PlanPreviewScreen  # loads the planning stack

        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        self.app.push_screen(PlanPreviewScreen(row.summary, live=row.live))

    def action_eval(self) -> None:
        from gobtui.screens.eval_screen import EvalScreen

        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        # Demo screenshots must not change with the machine's speed: no timings there.
        self.app.push_screen(EvalScreen(row.summary, live=row.live, show_timings=not self.demo))

    def action_conversation(self) -> None:
        from gobtui.screens.conversation import ConversationScreen

        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        self.app.push_screen(ConversationScreen(row.summary))

    # --- apply and vault -----------------------------------------------------------------

    def action_apply(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        publishing = getattr(self.app, "publishing", None)
        if publishing is not None:
            publishing.apply(row.summary, live=row.live)

    def action_vault(self) -> None:
        from gobtui.screens.vault import VaultScreen

        row = self.selected_row()
        projects: dict[str, str] = {}
        for known in self.rows.values():  # snapshots name canonical paths
            projects[known.summary.session_id] = known.project
            projects[known.key] = known.project
            projects[os.path.realpath(known.key)] = known.project
        session_id = row.summary.session_id if row is not None else None
        self.app.push_screen(VaultScreen(self.clock, projects=projects, session_id=session_id))
