"""enter on a snapshot: its records, one line each (index, type, a one-line preview of its
content, size, and from 110 columns the hash prefix).

The records are streamed out of the verified snapshot in a thread worker that keeps one small
row per record (its preview sanitized and bounded: vault_text.preview), drawn with the Line
API, so a 100 MB snapshot is never held in widgets. The rows appear only once the whole
snapshot has verified: a damaged one shows the error modal and no rows. `/` runs the vault's
literal search (matches highlighted, counted); enter opens the record viewer.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Footer, Input, ProgressBar, Static
from textual.worker import get_current_worker

from gobtui.adapters.vault.recovery import search
from gobtui.controllers.messages import RecordsScanned, SnapshotSearched, VaultFailed
from gobtui.controllers.publishing import publishing_of
from gobtui.core.limits import VAULT_VIEW_PROGRESS_RECORDS, VAULT_VIEW_SEARCH_RESULTS
from gobtui.core.record_number import shown
from gobtui.core.vault.errors import VaultError
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import SearchResult
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.help import RECORDS_LEGEND
from gobtui.screens.worker_errors import UNEXPECTED_CODE, WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.view_models.vault_rows import RecordRow, age, scan_records
from gobtui.widgets.line_list import LineList, fit, text_strip
from gobtui.widgets.palette import band_styles

SIZE_WIDTH = 9
HASH_WIDTH = 12
HITS_WIDTH = 6
TYPE_MIN_WIDTH = 8
TYPE_MAX_WIDTH = 22
"""The type column fits the longest type up to this; a preview takes the rest of the line."""
NARROW_TYPE_WIDTH = 14
"""Below HASH_MIN_WIDTH the type column is this narrow at most, so the preview keeps room."""
HASH_MIN_WIDTH = 110
"""From this width on, rows show their hash prefix too."""
PREVIEW_MIN_WIDTH = 12


class RecordList(LineList):
    """One line per record; matches of the last search are marked and highlighted."""

    HEADER_ROWS: ClassVar[int] = 1
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-list--cursor",
        "record-list--header",
        "record-list--match",
        "record-list--muted",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "select_row",
            "View",
            tooltip="Read the record, a page at a time",
            id="records.view",
        ),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[RecordRow] = []
        self.matches: dict[int, int] = {}
        """Record index -> hits of the current search."""
        self._longest_kind = 0

    def set_matches(self, matches: dict[int, int]) -> None:
        self.matches = matches
        self.refresh()

    def row_count(self) -> int:
        return len(self.rows)

    def set_rows(self, rows: list[RecordRow]) -> None:
        self.rows = rows
        self.matches = {}
        self._longest_kind = max((len(r.kind) for r in rows), default=0)
        self.rows_changed()

    def _widths(self, width: int) -> tuple[int, int, int, bool]:
        """(index, type, preview) widths and whether the hash column is shown."""
        last = shown(self.rows[-1].index) if self.rows else 0
        index_width = max(3, len(str(last)))
        wide = width >= HASH_MIN_WIDTH
        cap = TYPE_MAX_WIDTH if wide else NARROW_TYPE_WIDTH
        type_width = max(TYPE_MIN_WIDTH, min(cap, self._longest_kind))
        fixed = 2 + index_width + 2 + type_width + 1 + SIZE_WIDTH + HITS_WIDTH
        fixed += 2 + HASH_WIDTH if wide else 0
        return index_width, type_width, max(PREVIEW_MIN_WIDTH, width - fixed), wide

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"record-list--{name}", partial=True, default=Style())

    def render_header(self, width: int) -> Strip:
        index_width, type_width, preview_width, wide = self._widths(width)
        line = (
            f"  {'rec':>{index_width}}  {fit('type', type_width)} {fit('preview', preview_width)}"
            f"{'size':>{SIZE_WIDTH}}"
        )
        line += f"  {fit('sha256', HASH_WIDTH)}" if wide else ""
        line += f"{'hits':>{HITS_WIDTH}}"
        return text_strip(Text(line, self._style("header")), width, self.rich_style, self)

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        index_width, type_width, preview_width, wide = self._widths(width)
        hits = self.matches.get(row.index)
        text = Text()
        text.append("● " if hits else "  ", self._style("match"))
        text.append(f"{shown(row.index):>{index_width}}  ")
        text.append(fit(row.kind, type_width), self._style("match") if hits else Style())
        text.append(" ")
        text.append(fit(row.preview, preview_width), self._style("muted"))  # (one_line'd)
        text.append(f"{human_bytes(row.size):>{SIZE_WIDTH}}")
        if wide:
            text.append("  ")
            text.append(row.sha256_prefix, self._style("muted"))
        text.append(f"{'×' + str(hits):>{HITS_WIDTH}}" if hits else " " * HITS_WIDTH)
        return text_strip(text, width, self.rich_style, self)

    def position_of(self, record: int) -> int | None:
        """The row showing record `record` (rows are in record order, one per index)."""
        if 0 <= record < len(self.rows) and self.rows[record].index == record:
            return record
        return next((i for i, r in enumerate(self.rows) if r.index == record), None)


class VaultRecordsScreen(WorkerErrors, Screen[None]):
    HELP_LEGEND = [
        *RECORDS_LEGEND,
        ("preview", "who, and the start of the record's text (else a few of its fields)"),
    ]
    HELP_LEGEND_TITLE = "Reading the records"
    AUTO_FOCUS = "#records-list"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the vault", id="records.close"),
        Binding(
            "slash",
            "focus_search",
            "Search",
            tooltip="Literal, case-sensitive search of the records' strings",
            id="records.search",
        ),
        Binding("n", "match(1)", "Next hit", tooltip="The next matching record", id="records.next"),
        Binding(
            "N",
            "match(-1)",
            "Prev hit",
            show=False,
            tooltip="The previous matching record",
            id="records.prev",
        ),
    ]

    def __init__(
        self,
        entry: IndexEntry,
        project: str | None,
        clock: Callable[[], float],
        *,
        record: int | None = None,
    ) -> None:
        super().__init__()
        self.entry = entry
        self.project = project
        self.clock = clock
        self.initial_record = record
        self.rows: list[RecordRow] | None = None
        self.error: str | None = None
        self.query_text: str | None = None
        self.result: SearchResult | None = None
        self.searching = False
        self._request = 0

    def compose(self) -> ComposeResult:
        yield Static(id="records-title")
        with Horizontal(id="records-progress-bar"):
            yield ProgressBar(show_eta=False, id="records-progress")
            yield Static(id="records-what")
        yield Input(
            placeholder="/ search (literal, case-sensitive)", id="records-search", compact=True
        )
        yield RecordList(id="records-list")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#records-search", Input).display = False
        self.query_one(ProgressBar).update(total=max(1, self.entry.record_count), progress=0)
        self._render_title()
        self._scan(self.entry.sha256)

    # --- the scan ------------------------------------------------------------------------

    @screen_work("records-scan")
    def _scan(self, sha: str) -> None:
        worker = get_current_worker()

        def progress(done: int) -> None:
            with suppress(RuntimeError):  # the app is shutting down
                self.app.call_from_thread(self._progress, done)

        try:
            vault = publishing_of(self.app).open_vault()
            rows = scan_records(
                vault,
                sha,
                progress=progress,
                every=VAULT_VIEW_PROGRESS_RECORDS,
                cancelled=lambda: worker.is_cancelled,
            )
        except VaultError as error:
            self.post_message(VaultFailed(0, "records", str(error), error.code, error.damaged))
            return
        if rows is not None and not worker.is_cancelled:
            self.post_message(RecordsScanned(0, rows))

    def _progress(self, done: int) -> None:
        if not self.is_attached:
            return
        self.query_one(ProgressBar).update(progress=done)
        self.query_one("#records-what", Static).update(f" verifying and reading: {done:,}")

    @on(RecordsScanned)
    def _scanned(self, message: RecordsScanned) -> None:
        self.rows = message.rows
        self.query_one("#records-progress-bar").display = False
        records = self.query_one(RecordList)
        records.set_rows(message.rows)
        if self.initial_record is not None:
            position = records.position_of(self.initial_record)
            if position is not None:
                records.show_row(position)
        records.focus()
        self.refresh_bindings()
        self._render_title()

    @on(VaultFailed)
    def _failed(self, message: VaultFailed) -> None:
        if message.what == "records":
            self.rows, self.error = None, message.error
            self.query_one("#records-progress-bar").display = False
            self.query_one(RecordList).set_rows([])
        elif message.request != self._request:
            return
        self.searching = False
        self._render_title()
        title = "The snapshot cannot be read" if message.damaged else f"Cannot {message.what}"
        hint = "the vault needs repair; nothing was changed" if message.damaged else ""
        self.app.push_screen(ErrorScreen(title, message.error, code=message.code, hint=hint))

    # --- search --------------------------------------------------------------------------

    def action_focus_search(self) -> None:
        if self.rows is None:
            self.notify("The records are still being read.", timeout=3)
            return
        box = self.query_one("#records-search", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#records-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        query = event.value
        self.query_one(RecordList).focus()
        if not query:
            self.query_one("#records-search", Input).display = False
            self.query_text, self.result = None, None
            self.query_one(RecordList).set_matches({})
            self._render_title()
            return
        self._request += 1
        self.searching = True
        self.query_text = query
        self._render_title()
        self._search(self._request, query)

    @screen_work("records-search")
    def _search(self, request: int, query: str) -> None:
        try:
            vault = publishing_of(self.app).open_vault()
            result = search(vault, self.entry.sha256, query, VAULT_VIEW_SEARCH_RESULTS)
        except VaultError as error:
            self.post_message(VaultFailed(request, "search", str(error), error.code, error.damaged))
            return
        self.post_message(SnapshotSearched(request, query, result))

    @on(SnapshotSearched)
    def _searched(self, message: SnapshotSearched) -> None:
        if message.request != self._request:
            return
        self.searching = False
        self.result = message.result
        matches = {m.record_index: m.match_count for m in message.result.matches}
        records = self.query_one(RecordList)
        records.set_matches(matches)
        if matches:
            self._jump(min(matches), records)
        self._render_title()

    def action_match(self, step: int) -> None:
        records = self.query_one(RecordList)
        if not records.matches or not records.rows:
            self.notify("No search hits to move between (/ searches).", timeout=3)
            return
        current = records.rows[records.cursor].index
        ordered = sorted(records.matches)
        after = [i for i in ordered if (i > current if step > 0 else i < current)]
        target = (after[0] if step > 0 else after[-1]) if after else ordered[0 if step > 0 else -1]
        self._jump(target, records)

    def _jump(self, record: int, records: RecordList) -> None:
        position = records.position_of(record)
        if position is not None:
            records.move_cursor(position)

    # --- drawing -------------------------------------------------------------------------

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        e = self.entry
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("RECORDS ", style="reverse bold")
        text.append(f" {self.project or fmt.short_id(e.session_id)}", style="bold")
        text.append(f" · {e.strategy or 'unlabelled'} · {age(self.clock(), e.ts)}")
        text.append(f" · snapshot {e.sha256[:12]}")
        text.append("\n")
        if self.error is not None:
            text.append(f"cannot read: {self.error}", styles.alert)
        elif self.rows is None:
            text.append(f"verifying {e.record_count:,} records…", styles.muted)
        else:
            text.append(f"{len(self.rows):,} records · {human_bytes(e.bytes)}")
            text.append(self._search_text(), styles.accent)
        self.query_one("#records-title", Static).update(text)

    def _search_text(self) -> str:
        if self.query_text is None:
            return ""
        shown = f"“{fmt.ellipsize(self.query_text, 24)}”"
        if self.searching:
            return f" · searching {shown}…"
        result = self.result
        if result is None:
            return ""
        hits = fmt.plural(sum(m.match_count for m in result.matches), "hit")
        records = fmt.plural(result.matched_records, "record")
        if result.truncated:  # hits are known for the records shown only
            text = f" · {shown}: {records}, first {len(result.matches)} shown ({hits})"
        else:
            text = f" · {shown}: {records}, {hits}"
        if result.unsearchable_records:
            text += f" · {result.unsearchable_records} not JSON"
        return text

    # --- actions -------------------------------------------------------------------------

    def action_close(self) -> None:
        box = self.query_one("#records-search", Input)
        if box.has_focus:
            box.display = bool(self.query_text)
            self.query_one(RecordList).focus()
            return
        self.dismiss(None)

    @on(LineList.Selected, "#records-list")
    def _open(self, event: LineList.Selected) -> None:
        from gobtui.screens.vault_viewer import RecordViewerScreen

        records = self.query_one(RecordList)
        row = records.rows[event.index]
        query = self.query_text if self.result is not None and self.result.matches else None
        self.app.push_screen(RecordViewerScreen(self.entry, row, self.project, query))

    def worker_failed(self, group: str, message: str) -> None:
        what = {"records-scan": "records", "records-search": "search"}.get(group, group)
        self.post_message(VaultFailed(self._request, what, message, UNEXPECTED_CODE, False))
