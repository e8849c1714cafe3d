"""enter on a record: its archived text, 16 KiB at a time (n/pgdn next page, p/pgup back).

Opened after a search, the page marks every literal (case-sensitive, like the search) hit of
the query and the header counts them.

Every page is a fresh read_record from the vault in a thread worker (the snapshot is verified
on every read). The header says what this is: untrusted archived data, shown as text with
control characters removed, never followed as instructions.
"""

from __future__ import annotations

import orjson
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gobtui import format as fmt
from gobtui.adapters.vault.recovery import read_record
from gobtui.core.limits import VAULT_VIEW_PAGE_BYTES
from gobtui.core.sanitize import terminal_safe
from gobtui.core.vault_model import IndexEntry, RecordPage, VaultError
from gobtui.format import human_bytes
from gobtui.messages import RecordPageRead, VaultFailed
from gobtui.publishing import publishing_of
from gobtui.screens.error import ErrorScreen
from gobtui.screens.help import VIEWER_LEGEND
from gobtui.vault_rows import RecordRow
from gobtui.widgets.palette import band_styles

UNTRUSTED = "untrusted archived data"


class RecordText(VerticalScroll, inherit_bindings=False):
    """Scrolls a page with the arrows; pgup/pgdn are left to the screen, which pages."""

    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
    ]


class RecordViewerScreen(Screen[None]):
    HELP_LEGEND = VIEWER_LEGEND
    HELP_LEGEND_TITLE = "Reading a record"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the records", id="viewer.close"),
        Binding(
            "n,pagedown",
            "page(1)",
            "Next page",
            key_display="n",
            tooltip="The next 16 KiB of the record",
            id="viewer.next",
        ),
        Binding(
            "p,pageup",
            "page(-1)",
            "Prev page",
            key_display="p",
            tooltip="The previous 16 KiB of the record",
            id="viewer.prev",
        ),
    ]

    def __init__(
        self, entry: IndexEntry, row: RecordRow, project: str | None, query: str | None = None
    ) -> None:
        super().__init__()
        self.entry = entry
        self.row = row
        self.project = project
        self.query_text = query or None
        """The records screen's search, marked on every page."""
        self.page_hits = 0
        self.offsets: list[int] = [0]
        """Start of every page read so far, the shown one last (p pops back)."""
        self.page: RecordPage | None = None
        self.error: str | None = None
        self.reading = False
        self._request = 0

    def compose(self) -> ComposeResult:
        yield Static(id="viewer-title")
        with RecordText(id="viewer-scroll"):
            yield Static(id="viewer-content")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#viewer-scroll").focus()
        self.call_after_refresh(self._read, 0)  # `loading` needs the scroll view mounted

    def _read(self, offset: int) -> None:
        self._request += 1
        self.reading = True
        self.query_one("#viewer-scroll").loading = True
        self._render_title()
        self._read_page(self._request, offset)

    @work(thread=True, exclusive=True, group="viewer-read")
    def _read_page(self, request: int, offset: int) -> None:
        try:
            vault = publishing_of(self.app).open_vault()
            page = read_record(
                vault, self.entry.sha256, self.row.index, offset, VAULT_VIEW_PAGE_BYTES
            )
        except VaultError as error:
            self.post_message(VaultFailed(request, "read", str(error), error.code, error.damaged))
            return
        self.post_message(RecordPageRead(request, page))

    @on(RecordPageRead)
    def _page_read(self, message: RecordPageRead) -> None:
        if message.request != self._request:
            return
        self.reading, self.page, self.error = False, message.page, None
        scroll = self.query_one(RecordText)
        scroll.loading = False
        content = Text(terminal_safe(message.page.content, multiline=True), overflow="fold")
        self.page_hits = 0
        if self.query_text is not None:
            hit = band_styles(self.app).accent + Style(bold=True, reverse=True)
            self.page_hits = content.highlight_words([_as_in_json(self.query_text)], hit)
        self.query_one("#viewer-content", Static).update(content)
        scroll.scroll_home(animate=False)
        if self.focused is None:
            scroll.focus()
        self.refresh_bindings()
        self._render_title()

    @on(VaultFailed)
    def _failed(self, message: VaultFailed) -> None:
        if message.request != self._request:
            return
        self.reading, self.error = False, message.error
        self.query_one("#viewer-scroll").loading = False
        self.query_one("#viewer-content", Static).update("")
        self._render_title()
        title = "The snapshot cannot be read" if message.damaged else "Cannot read the record"
        self.app.push_screen(ErrorScreen(title, message.error, code=message.code))

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        row = self.row
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("RECORD ", style="reverse bold")
        text.append(f" {row.index} · {row.kind}", style="bold")
        text.append(f" · {human_bytes(row.size)} · sha256 {row.sha256_prefix}")
        who = self.project or fmt.short_id(self.entry.session_id)
        text.append(f" · {who} {self.entry.sha256[:8]}")
        text.append("\n")
        text.append(f" {UNTRUSTED} ", styles.warn + Style(reverse=True))
        page = self.page
        if self.error is not None:
            text.append(f" cannot read: {self.error}", styles.alert)
        elif page is None:
            text.append(" reading…", styles.muted)
        else:
            end = page.next_offset if page.next_offset is not None else page.record_bytes
            text.append(f" page {len(self.offsets)}")
            if self.query_text is not None:  # first: the line is cut at the pane's edge
                hits = fmt.plural(self.page_hits, "hit")
                shown = fmt.ellipsize(self.query_text, 24)
                text.append(f" · {hits} of “{shown}” on this page", styles.accent)
            text.append(f" · bytes {page.offset:,}–{end:,} of {page.record_bytes:,}")
            text.append(" · end" if page.next_offset is None else " · n: next page", styles.muted)
        text.append(" · text to read, never instructions", styles.muted)
        self.query_one("#viewer-title", Static).update(text)

    def action_page(self, step: int) -> None:
        if self.reading or self.page is None:
            return
        if step > 0:
            if self.page.next_offset is None:
                self.notify("That was the last page of the record.", timeout=3)
                return
            self.offsets.append(self.page.next_offset)
        else:
            if len(self.offsets) == 1:
                self.notify("This is the first page.", timeout=3)
                return
            self.offsets.pop()
        self._read(self.offsets[-1])

    def action_close(self) -> None:
        self.dismiss(None)


def _as_in_json(query: str) -> str:
    """The query as the record's raw JSON spells it: search matches decoded strings, so a
    quote or backslash in the query shows escaped on the page (f"x -> f\\"x)."""
    try:
        return orjson.dumps(query).decode("utf-8")[1:-1]
    except orjson.JSONEncodeError:  # a lone surrogate: no JSON spells it; mark it as typed
        return query
