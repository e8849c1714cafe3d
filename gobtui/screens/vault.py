"""`v`: the snapshot vault. Every snapshot newest first, one session's history on `h`, two
marked (`m`) and diffed (`d`), a record browser on enter, undo into a new fork (`u`), and
recall of state cards (`r`).

The index is read in a thread worker. Any VaultError empties the table and opens the error
modal: a damaged vault never shows a partial list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from gobtui.controllers.commands import ScreenCommands
from gobtui.controllers.messages import SnapshotsDiffed, VaultFailed, VaultLoaded
from gobtui.controllers.publishing import publishing_of
from gobtui.core.receipt import Receipt
from gobtui.core.vault.errors import VaultError
from gobtui.core.vault.index import IndexEntry
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.help import VAULT_LEGEND
from gobtui.screens.worker_errors import UNEXPECTED_CODE, WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.view_models.vault_rows import age, diff_order, entry_matches, project_of
from gobtui.widgets.footer import KeyFooter
from gobtui.widgets.palette import band_styles
from gobtui.widgets.publish_bar import PublishBar
from gobtui.widgets.vault_table import MARK, VaultTable

MAX_MARKS = 2

Clock = Callable[[], float]


AGE_REFRESH_SECS = 1.0
"""How often an open vault screen updates the snapshots' ages (only cells that changed),
so the Taken column agrees with the undo dialog's "taken 54s ago"."""


class VaultScreen(WorkerErrors, Screen[None]):
    COMMANDS = {ScreenCommands}
    HELP_LEGEND = VAULT_LEGEND
    HELP_LEGEND_TITLE = "Reading the vault"
    PALETTE_ACTIONS = [
        ("Diff the marked snapshots", "diff", "Record hashes added and removed, per-type counts"),
        ("Undo into a new fork", "undo", "Restore the selected snapshot beside its file"),
        ("Recall state cards", "recall", "Search the cards every snapshot holds"),
        ("Toggle session history", "toggle_history", "Only the selected session's snapshots"),
        ("Reload the vault", "reload", "Read the index again"),
    ]
    BINDINGS = [
        Binding(
            "escape",
            "close",
            "Back",
            tooltip="Clear the filter; with none, back to the sessions",
            id="vault.close",
        ),
        Binding(
            "slash",
            "focus_filter",
            "Filter",
            tooltip="Filter by project, session, label, provider, path or snapshot id",
            id="vault.filter",
        ),
        Binding(
            "h",
            "toggle_history",
            "History",
            tooltip="Only the selected session's snapshots (h again: all)",
            id="vault.history",
        ),
        Binding("m", "mark", "Mark", tooltip="Mark or unmark for a diff (two)", id="vault.mark"),
        Binding("d", "diff", "Diff", tooltip="Diff the two marked snapshots", id="vault.diff"),
        Binding(
            "u",
            "undo",
            "Undo",
            tooltip="Restore the snapshot into a new fork (asks first)",
            id="vault.undo",
        ),
        Binding(
            "r",
            "recall",
            "Recall",
            tooltip="Search the state cards of every snapshot",
            id="vault.recall",
        ),
    ]

    def __init__(
        self,
        clock: Clock,
        *,
        projects: Mapping[str, str] | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__()
        self.clock = clock
        self.projects: Mapping[str, str] = projects or {}
        """Board project names by path and by session id, for snapshots of known sessions."""
        self.preferred_session = session_id
        self.entries: list[IndexEntry] = []
        """Newest first; a row's key is its serial (position in append order), stable on reload."""
        self.stored_bytes = 0
        self.loaded = False
        self.error: str | None = None
        self.filter_text = ""
        self.history_of: str | None = None
        self.marks: list[int] = []
        """Serials of the marked snapshots, in marking order."""
        self._request = 0

    def compose(self) -> ComposeResult:
        yield Static(id="vault-title")
        yield Input(
            placeholder="/ filter: project, session, label, path, id…",
            id="vault-filter",
            compact=True,
        )
        yield VaultTable(id="vault-table")
        yield Static(id="vault-detail")
        yield PublishBar()
        yield KeyFooter(compact=True)  # fits 80 columns: q and ^p give way (? lists them)

    def on_mount(self) -> None:
        self.query_one("#vault-filter", Input).display = False
        self.query_one(VaultTable).focus()
        forks = getattr(self.app, "forks_published", None)
        if forks is not None:
            forks.subscribe(self, self._fork_published)
        # After the first refresh: `loading` set before the table counts as mounted is
        # applied late, and could cover the table after a quick answer already arrived.
        self.call_after_refresh(self.reload)
        self.set_interval(AGE_REFRESH_SECS, self._refresh_ages)

    def _refresh_ages(self) -> None:
        """The Taken column moves on while the screen stays open ("14s ago" for minutes)."""
        if self.loaded and self.is_current:
            self.query_one(VaultTable).refresh_ages(self.clock())

    # --- loading -------------------------------------------------------------------------

    def reload(self) -> None:
        self._request += 1
        self.query_one(VaultTable).loading = True
        self._load(self._request)

    @screen_work("vault-load")
    def _load(self, request: int) -> None:
        worker = get_current_worker()
        try:
            vault = publishing_of(self.app).open_vault()
            with vault.reading() as reader:  # one lock: the index and the stats agree
                entries = reader.entries()
                stored = reader.stats().stored_bytes
        except VaultError as error:
            self.post_message(VaultFailed(request, "index", str(error), error.code, error.damaged))
            return
        if not worker.is_cancelled:
            self.post_message(VaultLoaded(request, entries, stored))

    @on(VaultLoaded)
    def _loaded(self, message: VaultLoaded) -> None:
        if message.request != self._request:
            return
        first_load = not self.loaded
        self.entries, self.stored_bytes = message.entries, message.stored_bytes
        self.loaded, self.error = True, None
        serials = set(range(len(self.entries)))
        self.marks = [m for m in self.marks if m in serials]
        table = self.query_one(VaultTable)
        table.loading = False
        self._fill(select_session=self.preferred_session if first_load else None)
        if self.focused is None:  # the loading indicator took the focus away
            table.focus()
        self.refresh_bindings()  # the footer missed the focus that came back with the rows

    @on(VaultFailed)
    def _failed(self, message: VaultFailed) -> None:
        if message.request != self._request:
            return
        table = self.query_one(VaultTable)
        table.loading = False
        if self.focused is None:
            table.focus()
        if message.what == "index":  # never a partial list
            self.entries, self.marks = [], []
            self.loaded, self.error = True, message.error
            self._fill()
        title = "The vault cannot be read" if message.damaged else f"Cannot {message.what}"
        hint = "the vault needs repair; nothing was changed" if message.damaged else ""
        self.app.push_screen(ErrorScreen(title, message.error, code=message.code, hint=hint))

    def _fork_published(self, _receipt: Receipt) -> None:
        self.reload()  # an apply snapshots its source: the new entry belongs in the list

    # --- drawing -------------------------------------------------------------------------

    def serial(self, position: int) -> int:
        return len(self.entries) - 1 - position

    def position(self, serial: int) -> int:
        return len(self.entries) - 1 - serial

    def project(self, entry: IndexEntry) -> str | None:
        return project_of(entry, self.projects)

    def shown_entries(self) -> list[tuple[int, IndexEntry]]:
        """(serial, entry) of the rows shown, newest first."""
        shown = []
        for position, entry in enumerate(self.entries):
            if self.history_of is not None and entry.session_id != self.history_of:
                continue
            if not entry_matches(entry, self.filter_text, self.project(entry)):
                continue
            shown.append((self.serial(position), entry))
        return shown

    def _fill(self, select_session: str | None = None) -> None:
        table = self.query_one(VaultTable)
        rows = self.shown_entries()
        selected = table.selected_serial
        if select_session is not None:  # the newest snapshot of the session selected on the board
            preferred = next((s for s, e in rows if e.session_id == select_session), None)
            selected = preferred if preferred is not None else selected
        table.show(
            rows, marks=self.marks, project_of=self.project, now=self.clock(), select=selected
        )
        self._render_title()
        self._render_detail()

    def on_resize(self) -> None:
        if self.loaded:
            self._fill()

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("VAULT ", style="reverse bold")
        if not self.loaded:
            text.append(" reading the index…", styles.muted)
        elif self.error is not None:
            text.append(f" cannot read the vault: {self.error}", styles.alert)
        else:
            sessions = len({e.session_id for e in self.entries})
            text.append(
                f" {_count(len(self.entries), 'snapshot')} · {_count(sessions, 'session')}",
                style="bold",
            )
            text.append(f" · {human_bytes(self.stored_bytes)} stored")
            entry = next((e for e in self.entries if e.session_id == self.history_of), None)
            if entry is not None:
                who = self.project(entry) or fmt.short_id(entry.session_id)
                text.append(f" · history of {who} ({fmt.short_id(entry.session_id)})")
            if self.filter_text:
                text.append(f" · “{fmt.ellipsize(self.filter_text, 16)}”")
        text.append("\n")
        if self.loaded and self.filter_text and not self.shown_entries():
            text.append("No snapshot matches the filter: esc clears it.", styles.muted)
        elif len(self.marks) == MAX_MARKS:
            older, newer = diff_order([self.position(m) for m in self.marks], self.entries)
            text.append(f"{MARK} {older.sha256[:8]} → {newer.sha256[:8]}", styles.accent)
            text.append(" marked: d diffs them")
        elif self.marks:
            mark = self.entries[self.position(self.marks[0])].sha256[:8]
            text.append(f"{MARK} {mark} marked: mark one more (m) to diff", styles.accent)
        elif self.loaded and not self.entries and self.error is None:
            text.append(
                "No snapshots yet: every apply (a) snapshots its source first.", styles.muted
            )
        else:
            text.append("m marks two snapshots to diff · enter browses records", styles.muted)
        self.query_one("#vault-title", Static).update(text)

    def _render_detail(self) -> None:
        entry = self.selected_entry()
        text = Text(no_wrap=True, overflow="ellipsis")
        if entry is not None:
            styles = band_styles(self.app)
            text.append(f"snapshot {entry.sha256}\n", styles.muted)
            text.append(f"{entry.record_count:,} records · {human_bytes(entry.bytes)} · ")
            text.append(fmt.display_path(entry.path))
        self.query_one("#vault-detail", Static).update(text)

    @on(DataTable.RowHighlighted, "#vault-table")
    def _highlighted(self) -> None:
        self._render_detail()

    # --- selection -----------------------------------------------------------------------

    def selected_serial(self) -> int | None:
        return self.query_one(VaultTable).selected_serial

    def selected_entry(self) -> IndexEntry | None:
        serial = self.selected_serial()
        if serial is None or not 0 <= self.position(serial) < len(self.entries):
            return None
        return self.entries[self.position(serial)]

    def _need_entry(self) -> IndexEntry | None:
        entry = self.selected_entry()
        if entry is None:
            self.notify("No snapshot selected.", severity="warning")
        return entry

    # --- actions -------------------------------------------------------------------------

    def action_close(self) -> None:
        """esc: clears the filter first (as on the board), then leaves."""
        box = self.query_one("#vault-filter", Input)
        if box.has_focus or self.filter_text:
            box.value, box.display = "", False
            self.filter_text = ""
            self.query_one(VaultTable).focus()
            self._fill()
            return
        self.dismiss(None)

    def action_reload(self) -> None:
        self.reload()

    def action_focus_filter(self) -> None:
        box = self.query_one("#vault-filter", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#vault-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._fill()

    @on(Input.Submitted, "#vault-filter")
    def _filter_submitted(self) -> None:
        box = self.query_one("#vault-filter", Input)
        box.display = bool(box.value)
        self.query_one(VaultTable).focus()

    def action_toggle_history(self) -> None:
        if self.history_of is not None:
            self.history_of = None
        else:
            entry = self._need_entry()
            if entry is None:
                return
            self.history_of = entry.session_id
        self._fill()

    def action_mark(self) -> None:
        serial = self.selected_serial()
        if serial is None:
            self.notify("No snapshot selected.", severity="warning")
            return
        if serial in self.marks:
            self.marks.remove(serial)
        elif len(self.marks) >= MAX_MARKS:
            self.notify("Two snapshots are marked already: unmark one first (m).", timeout=4)
            return
        else:
            self.marks.append(serial)
        self.query_one(VaultTable).set_mark(serial, serial in self.marks)
        self._render_title()

    def action_diff(self) -> None:
        if len(self.marks) != MAX_MARKS:
            self.notify("Mark two snapshots with m, then d diffs them.", timeout=4)
            return
        older, newer = diff_order([self.position(m) for m in self.marks], self.entries)
        self._request += 1
        self.query_one(VaultTable).loading = True
        self._diff(self._request, older.sha256, newer.sha256)

    @screen_work("vault-diff")
    def _diff(self, request: int, a: str, b: str) -> None:
        try:
            diff = publishing_of(self.app).open_vault().diff(a, b)
        except VaultError as error:
            self.post_message(VaultFailed(request, "diff", str(error), error.code, error.damaged))
            return
        self.post_message(SnapshotsDiffed(request, diff))

    @on(SnapshotsDiffed)
    def _diffed(self, message: SnapshotsDiffed) -> None:
        from gobtui.screens.vault_diff import DiffSummaryScreen

        if message.request != self._request:
            return
        table = self.query_one(VaultTable)
        table.loading = False
        if self.focused is None:
            table.focus()
        older, newer = diff_order([self.position(m) for m in self.marks], self.entries)
        self.app.push_screen(
            DiffSummaryScreen(
                message.diff,
                older,
                newer,
                now=self.clock(),
                project=self.project(older),
                newer_project=self.project(newer),
            )
        )

    def action_undo(self) -> None:
        entry = self._need_entry()
        if entry is None:
            return
        publishing_of(self.app).undo(entry, self.project(entry), age(self.clock(), entry.ts))

    def action_recall(self) -> None:
        from gobtui.screens.vault_recall import RecallScreen

        self.app.push_screen(RecallScreen(self.clock, self.entries, self.projects))

    @on(DataTable.RowSelected, "#vault-table")
    def _selected(self) -> None:
        self.action_records()

    def action_records(self) -> None:
        from gobtui.screens.vault_records import VaultRecordsScreen

        entry = self._need_entry()
        if entry is not None:
            self.app.push_screen(VaultRecordsScreen(entry, self.project(entry), self.clock))

    def worker_failed(self, group: str, message: str) -> None:
        what = {"vault-load": "index", "vault-diff": "diff"}.get(group, group)
        self.post_message(VaultFailed(self._request, what, message, UNEXPECTED_CODE, False))


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
