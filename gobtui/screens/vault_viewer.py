"""enter on a record: its archived content, laid out to be read (r: the raw JSON).

The read form (vault_text) shows the record's text fields as lines under who wrote them,
then its other fields, a page of about 16,000 characters at a time, cut between lines or
words; long lines wrap between words. The raw JSON is paged 16 KiB at a time. n/pgdn and
p/pgup page either. Opened after a search, the page marks every literal (case-sensitive,
like the search) hit of the query and the header counts them.

The record is read whole, once, from the verified snapshot in a thread worker; one over
VIEW_READ_MAX_BYTES is not laid out but shown raw, each page a fresh read_record. The header
says what this is: untrusted archived data, shown as text with every control character made
visible (core.sanitize), never markup-parsed, never followed as instructions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from gobtui.adapters.vault.recovery import read_record
from gobtui.controllers.messages import RecordPageRead, VaultFailed
from gobtui.controllers.publishing import publishing_of
from gobtui.core.limits import VAULT_VIEW_PAGE_BYTES
from gobtui.core.record_number import shown
from gobtui.core.sanitize import terminal_safe
from gobtui.core.vault.errors import VaultError
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.records import utf8_page
from gobtui.core.vault.reports import RecordPage
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.worker_errors import UNEXPECTED_CODE, WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.view_models.vault_rows import RecordRow, read_whole
from gobtui.view_models.vault_text import Entry, PageStyles, entries, pages, render_page
from gobtui.widgets.palette import band_styles

UNTRUSTED = "untrusted archived data"
PAGE = VAULT_VIEW_PAGE_BYTES
VIEW_READ_MAX_BYTES = 8 * 1024 * 1024
"""A record up to this size is read whole and laid out; a larger one is shown raw only."""

VIEWER_LEGEND = [
    ("untrusted", "archived transcript text: history to read, never instructions to follow"),
    ("rec N", "the record's number in the transcript (1-based, as in the list and verify)"),
    ("record N of M", "its place among the snapshot's records (1-based)"),
    ("fields", "the record's other values, one per line, by their JSON path"),
    ("r", "the raw JSON of the record, 16 KiB a page (r again: the text)"),
    ("n / p", "the next / previous page"),
]


@dataclass
class RecordRead(Message):
    """The record, read whole (`line` None: over VIEW_READ_MAX_BYTES, `page` its first raw
    page), and its read form in pages."""

    request: int
    line: bytes | None
    pages: list[list[Entry]]
    page: RecordPage | None


class RecordText(VerticalScroll, inherit_bindings=False):
    """Scrolls a page with the arrows; pgup/pgdn are left to the screen, which pages."""

    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
    ]


class RecordViewerScreen(WorkerErrors, Screen[None]):
    HELP_LEGEND = VIEWER_LEGEND
    HELP_LEGEND_TITLE = "Reading a record"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the records", id="viewer.close"),
        Binding(
            "n,pagedown",
            "page(1)",
            "Next page",
            key_display="n",
            tooltip="The next page of the record",
            id="viewer.next",
        ),
        Binding(
            "p,pageup",
            "page(-1)",
            "Prev page",
            key_display="p",
            tooltip="The previous page of the record",
            id="viewer.prev",
        ),
        Binding(
            "r",
            "toggle_raw",
            "Raw/text",
            tooltip="The record's raw JSON, or its text laid out to read",
            id="viewer.raw",
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
        self.line: bytes | None = None
        """The whole record, once read (None: not yet, or too large to hold)."""
        self.read_pages: list[list[Entry]] | None = None
        """The read form in pages; None until read, and for a record too large to lay out."""
        self.read_index = 0
        self.raw = False
        self.offsets: list[int] = [0]
        """Start of every raw page read so far, the shown one last (p pops back)."""
        self.page: RecordPage | None = None
        """The raw page (the first until r and n move on)."""
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
        self.call_after_refresh(self._start)  # `loading` needs the scroll view mounted

    def _busy(self) -> None:
        self._request += 1
        self.reading = True
        self.query_one("#viewer-scroll").loading = True
        self._render_title()

    def _start(self) -> None:
        self._busy()
        self._read_whole(self._request)

    @screen_work("viewer-read")
    def _read_whole(self, request: int) -> None:
        sha, index = self.entry.sha256, self.row.index
        try:
            vault = publishing_of(self.app).open_vault()
            line = read_whole(vault, sha, index, VIEW_READ_MAX_BYTES)
            first = None if line is not None else read_record(vault, sha, index, 0, PAGE)
        except VaultError as error:
            self.post_message(VaultFailed(request, "read", str(error), error.code, error.damaged))
            return
        laid_out = pages(entries(line)) if line is not None else []
        self.post_message(RecordRead(request, line, laid_out, first))

    @screen_work("viewer-read")
    def _read_page(self, request: int, offset: int) -> None:
        """A raw page of a record too large to hold: read from the vault each time."""
        try:
            vault = publishing_of(self.app).open_vault()
            page = read_record(vault, self.entry.sha256, self.row.index, offset, PAGE)
        except VaultError as error:
            self.post_message(VaultFailed(request, "read", str(error), error.code, error.damaged))
            return
        self.post_message(RecordPageRead(request, page))

    @on(RecordRead)
    def _record_read(self, message: RecordRead) -> None:
        if message.request != self._request:
            return
        self.line = message.line
        if message.line is None:
            self.read_pages, self.raw, self.page = None, True, message.page
        else:
            self.read_pages, self.page = message.pages, self._raw_page(0)
        self._shown()

    @on(RecordPageRead)
    def _page_read(self, message: RecordPageRead) -> None:
        if message.request != self._request:
            return
        self.page = message.page
        self._shown()

    def _raw_page(self, offset: int) -> RecordPage:
        """A raw page of the record held in memory, as read_record would give it."""
        line = self.line or b""
        content, next_offset = utf8_page(line, offset, PAGE)
        return RecordPage(
            snapshot_sha256=self.entry.sha256,
            source_sha256=self.entry.source_sha256,
            record_index=self.row.index,
            record_sha256=hashlib.sha256(line).hexdigest(),
            record_bytes=len(line),
            offset=offset,
            next_offset=next_offset,
            content=content,
        )

    def _shown(self) -> None:
        """Draw the page now current (read form or raw), scrolled to its top."""
        self.reading, self.error = False, None
        scroll = self.query_one(RecordText)
        scroll.loading = False
        self.query_one("#viewer-content", Static).update(self._content())
        scroll.scroll_home(animate=False)
        if self.focused is None:
            scroll.focus()
        self.refresh_bindings()
        self._render_title()

    def _content(self) -> Text:
        styles = band_styles(self.app)
        hit = styles.accent + Style(bold=True, reverse=True)
        if not self.raw and self.read_pages is not None:
            heading = styles.accent + Style(bold=True)
            page = self.read_pages[self.read_index]
            content, self.page_hits = render_page(
                page, self.query_text, PageStyles(heading, styles.muted, hit)
            )
            return content
        raw = self.page.content if self.page is not None else ""
        content = Text(terminal_safe(raw, multiline=True), overflow="fold")
        self.page_hits = 0
        if self.query_text is not None:
            self.page_hits = content.highlight_words([_as_in_json(self.query_text)], hit)
        return content

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

    # --- the header ----------------------------------------------------------------------

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        row = self.row
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("RECORD ", style="reverse bold")
        text.append(f" rec {shown(row.index)} · {row.kind}", style="bold")
        who = self.project or fmt.short_id(self.entry.session_id)
        text.append(f" · {human_bytes(row.size)} · {who} {self.entry.sha256[:8]}")
        text.append(f" · sha256 {row.sha256_prefix}")
        text.append("\n")
        text.append(f" {UNTRUSTED} ", styles.warn + Style(reverse=True))
        # The position first: the line is cut at the pane's edge (with an ellipsis).
        text.append(f" record {row.index + 1:,} of {max(self.entry.record_count, 1):,}")
        if self.error is not None:
            text.append(f" · cannot read: {self.error}", styles.alert)
        elif self.reading or (self.page is None and self.read_pages is None):
            text.append(" · reading…", styles.muted)
        else:
            text.append(self._position())
            if self.query_text is not None:
                hits = fmt.plural(self.page_hits, "hit")
                query = fmt.ellipsize(self.query_text, 24)
                text.append(f" · {hits} of “{query}” on this page", styles.accent)
            if self.raw and self.page is not None:
                page = self.page
                end = page.next_offset if page.next_offset is not None else page.record_bytes
                text.append(f" · bytes {page.offset:,}–{end:,} of {page.record_bytes:,}")
            text.append(self._mode_hint(), styles.muted)
        text.append(" · text to read, never instructions", styles.muted)
        self.query_one("#viewer-title", Static).update(text)

    def _position(self) -> str:
        if not self.raw and self.read_pages is not None:
            return f" · page {self.read_index + 1}/{len(self.read_pages)}"
        size = self.page.record_bytes if self.page is not None else self.row.size
        count = max(1, -(-size // PAGE), len(self.offsets))
        return f" · raw JSON page {len(self.offsets)}/{count}"

    def _mode_hint(self) -> str:
        if self.read_pages is None:
            return " · too large to lay out: raw only"
        return " · r: text" if self.raw else " · r: raw JSON"

    # --- actions -------------------------------------------------------------------------

    def action_page(self, step: int) -> None:
        if self.reading:
            return
        if not self.raw and self.read_pages is not None:
            target = self.read_index + step
            if not 0 <= target < len(self.read_pages):
                self._edge(step)
                return
            self.read_index = target
            self._shown()
            return
        if self.page is None:
            return
        if step > 0:
            if self.page.next_offset is None:
                self._edge(step)
                return
            self.offsets.append(self.page.next_offset)
        else:
            if len(self.offsets) == 1:
                self._edge(step)
                return
            self.offsets.pop()
        if self.line is not None:
            self.page = self._raw_page(self.offsets[-1])
            self._shown()
        else:
            self._busy()
            self._read_page(self._request, self.offsets[-1])

    def _edge(self, step: int) -> None:
        last = "That was the last page of the record."
        self.notify(last if step > 0 else "This is the first page.", timeout=3)

    def action_toggle_raw(self) -> None:
        if self.reading or self.error is not None:
            return
        if self.read_pages is None:
            self.notify("This record is too large to lay out: raw JSON only.", timeout=3)
            return
        self.raw = not self.raw
        self._shown()

    def action_close(self) -> None:
        self.dismiss(None)

    def worker_failed(self, group: str, message: str) -> None:
        what = {"viewer-read": "read"}.get(group, group)
        self.post_message(VaultFailed(self._request, what, message, UNEXPECTED_CODE, False))


def _as_in_json(query: str) -> str:
    """The query as the record's raw JSON spells it: search matches decoded strings, so a
    quote or backslash in the query shows escaped on the page (f"x -> f\\"x)."""
    try:
        return orjson.dumps(query).decode("utf-8")[1:-1]
    except orjson.JSONEncodeError:  # a lone surrogate: no JSON spells it; mark it as typed
        return query
