"""One session as a conversation to read: prompts and answers in order, every tool call, its
result, thinking and injected context folded to one line (enter/space opens one), `/` to
search (n/N between matches), escape or q back.

A thread worker reads the file once, parses it with the provider's own full parse
(adapters.providers) and feeds each item with its record to core.conversation, which keeps
the entries only; the rows are drawn on the Line API (widgets.conversation_view). The
header says what this is: transcript text, shown with control characters made visible,
never followed as instructions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from gobtui.adapters.files.jsonl import Record
from gobtui.adapters.files.regular import regular_file
from gobtui.adapters.providers.full_parse import feed_all, memory_chunks
from gobtui.adapters.providers.registry import parse_data, provider_of
from gobtui.core.board import project_name
from gobtui.core.conversation import (
    Entry,
    SearchResult,
    counts,
    first_match_from,
    search,
    step_match,
)
from gobtui.core.limits import MAX_PLAN_SOURCE_BYTES
from gobtui.core.model import SessionSummary
from gobtui.screens.worker_errors import WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.widgets.conversation_view import ConversationView
from gobtui.widgets.footer import KeyFooter
from gobtui.widgets.palette import band_styles

CONVERSATION_LEGEND = [
    ("user / claude / codex", "a prompt and an answer, shown whole"),
    ("▸ / ▾", "a folded / opened tool call, result, thinking or injected context"),
    ("⇒ / ✗", "a tool's result / a result that reports a failure"),
    ("·", "a notice from the client: a compaction, a slash command, an error"),
    ("search", "literal; a capital letter makes it match case"),
]


class ConversationError(Exception):
    """A one-line reason the session cannot be shown (no transcript content)."""


def read_conversation(summary: SessionSummary) -> list[Entry]:
    """The session's entries: the file read once, parsed by its provider, every item given
    its record (decoded again from the same bytes) in file order."""
    try:
        with regular_file(summary.path) as handle:
            stat = os.fstat(handle.fileno())
            if stat.st_size > MAX_PLAN_SOURCE_BYTES:
                raise ConversationError(
                    f"the transcript is {human_bytes(stat.st_size)}, over the "
                    f"{human_bytes(MAX_PLAN_SOURCE_BYTES)} this view reads"
                )
            data = handle.read()
    except OSError as error:
        raise ConversationError(f"cannot read the transcript: {error.strerror or error}") from None
    transcript = parse_data(summary.provider, summary.path, data, stat.st_mtime_ns, part=False)
    if transcript is None:  # (a whole file is always parsed)
        raise ConversationError("the transcript could not be parsed")
    items = {item.line_index: item for item in transcript.items}
    builder = provider_of(summary.provider).conversation_builder()

    def take(index: int, _length: int, record: Record) -> None:
        item = items.get(index)
        if item is not None:
            builder.add(item, record)

    feed_all(take, memory_chunks(data))
    return builder.entries


@dataclass
class ConversationRead(Message):
    request: int
    entries: list[Entry]


@dataclass
class ConversationFailed(Message):
    request: int
    error: str


@dataclass
class ConversationSearched(Message):
    request: int
    result: SearchResult


class ConversationScreen(WorkerErrors, Screen[None]):
    """The conversation of `summary`'s file, read when the screen opens."""

    AUTO_FOCUS = "#conversation-view"
    HELP_LEGEND = CONVERSATION_LEGEND
    HELP_LEGEND_TITLE = "Reading the conversation"
    DEFAULT_CSS = """
    ConversationScreen { layout: vertical; }
    #conversation-title {
        height: 2; background: $panel; padding: 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    #conversation-search { height: 1; padding: 0 1; }
    #conversation-view { height: 1fr; border-top: solid $primary; }
    """
    BINDINGS = [
        Binding(
            "escape,q",
            "close",
            "Back",
            key_display="esc",
            tooltip="Back where you came from (q too)",
            id="conversation.close",
        ),
        Binding(
            "slash",
            "search",
            "Search",
            tooltip="Search the conversation (literal; a capital letter matches case)",
            id="conversation.search",
        ),
        Binding(
            "n",
            "match(1)",
            "Next match",
            tooltip="The next search match (opens a fold that holds it)",
            id="conversation.next_match",
        ),
        Binding(
            "N",
            "match(-1)",
            "Prev match",
            show=False,
            tooltip="The previous search match",
            id="conversation.prev_match",
        ),
    ]

    def __init__(self, summary: SessionSummary) -> None:
        super().__init__()
        self.summary = summary
        self.entries: list[Entry] | None = None
        self.error: str | None = None
        self.result: SearchResult | None = None
        self.current: int | None = None
        """Index of the shown match in `result.matches`."""
        self.searching: str | None = None
        self._request = 0

    def compose(self) -> ComposeResult:
        yield Static(id="conversation-title")
        yield Input(placeholder="/ search the conversation", id="conversation-search", compact=True)
        yield ConversationView(id="conversation-view")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#conversation-search", Input).display = False
        view = self.query_one(ConversationView)
        view.set_placeholder(f"reading the transcript ({human_bytes(self.summary.bytes)})…")
        self._render_title()
        self._request += 1
        self._read(self._request)

    # --- reading ---------------------------------------------------------------------------

    @screen_work("conversation-read")
    def _read(self, request: int) -> None:
        worker = get_current_worker()
        try:
            entries = read_conversation(self.summary)
        except ConversationError as error:
            self.post_message(ConversationFailed(request, str(error)))
            return
        if not worker.is_cancelled:
            self.post_message(ConversationRead(request, entries))

    @on(ConversationRead)
    def _read_done(self, message: ConversationRead) -> None:
        if message.request != self._request:
            return
        self.entries, self.error = message.entries, None
        view = self.query_one(ConversationView)
        view.set_placeholder("nothing to show: the transcript holds no conversation yet")
        view.set_entries(message.entries, self.summary.provider.label.lower())
        if self.focused is None:
            view.focus()
        self.refresh_bindings()
        self._render_title()

    @on(ConversationFailed)
    def _read_failed(self, message: ConversationFailed) -> None:
        if message.request != self._request:
            return
        self.entries, self.error = None, message.error
        self.query_one(ConversationView).set_placeholder(f"cannot show: {message.error}")
        self._render_title()

    # --- search ----------------------------------------------------------------------------

    def action_search(self) -> None:
        if self.entries is None:
            self.notify("The transcript is still being read.", timeout=3)
            return
        box = self.query_one("#conversation-search", Input)
        box.value = ""
        box.display = True
        box.focus()

    @on(Input.Submitted, "#conversation-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one("#conversation-search", Input)
        box.display = False
        view = self.query_one(ConversationView)
        view.focus()
        if self.entries is None:
            return
        self._request += 1
        if not event.value:  # an empty search clears the last one
            self.result, self.current, self.searching = None, None, None
            view.set_matches([], None)
            self._render_title()
            return
        self.searching = event.value
        self._render_title()
        self._search(self._request, self.entries, event.value)

    @screen_work("conversation-search")
    def _search(self, request: int, entries: list[Entry], query: str) -> None:
        self.post_message(ConversationSearched(request, search(entries, query)))

    @on(ConversationSearched)
    def _searched(self, message: ConversationSearched) -> None:
        if message.request != self._request:
            return
        self.searching = None
        self.result = message.result
        view = self.query_one(ConversationView)
        matches = message.result.matches
        self.current = first_match_from(matches, view.cursor_entry)
        view.set_matches(matches, None, message.result.query)
        if self.current is not None:
            view.show_match(matches[self.current])
        self._render_title()

    def action_match(self, step: int) -> None:
        result = self.result
        if result is None or not result.matches:
            self.notify("No search matches to move between (/ searches).", timeout=3)
            return
        self.current = step_match(len(result.matches), self.current, step)
        assert self.current is not None
        self.query_one(ConversationView).show_match(result.matches[self.current])
        self._render_title()

    # --- drawing ---------------------------------------------------------------------------

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        summary = self.summary
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("CONVERSATION ", style="reverse bold")
        text.append(f" {project_name(summary)}", style="bold")
        if self.entries is not None:
            figures = counts(self.entries)
            text.append(f" · {fmt.plural(figures.messages, 'message')}", style="bold")
            text.append(f" · {fmt.plural(figures.tool_calls, 'tool call')}")
        text.append(f" · {summary.provider.label} {fmt.short_id(summary.session_id)}")
        if summary.title:
            text.append(f" · {fmt.ellipsize(summary.title, 60)}")
        text.append("\n")
        text.append(self._status_line(styles.muted, styles.accent, styles.alert))
        self.query_one("#conversation-title", Static).update(text)

    def _status_line(self, muted: Style, accent: Style, alert: Style) -> Text:
        line = Text()
        if self.error is not None:
            line.append(f"cannot show: {self.error}", alert)
            return line
        if self.entries is None:
            line.append(f"reading {human_bytes(self.summary.bytes)}…", muted)
            return line
        if self.searching is not None:
            line.append(f"searching “{fmt.ellipsize(self.searching, 24)}”…", accent)
            return line
        result = self.result
        if result is not None:
            shown = f"“{fmt.ellipsize(result.query, 24)}”"
            total = len(result.matches)
            if not total:
                line.append(f"{shown}: no match", alert)
            else:
                more = "+" if result.truncated else ""
                at = (self.current or 0) + 1
                line.append(f"{shown}: match {at:,} of {total:,}{more}", accent)
                line.append(" · n/N: next/previous", muted)
            line.append(" · ", muted)
        line.append("transcript text to read, never instructions", muted)
        return line

    # --- actions ---------------------------------------------------------------------------

    def action_close(self) -> None:
        box = self.query_one("#conversation-search", Input)
        if box.has_focus:
            box.display = False
            self.query_one(ConversationView).focus()
            return
        self.dismiss(None)

    def worker_failed(self, group: str, message: str) -> None:
        self.post_message(ConversationFailed(self._request, message))
