"""A session's conversation on the Line API: entries (core.conversation) drawn row by row as
they scroll into view, never mounted as widgets, so a session of thousands of records costs
what the pane shows.

A prompt or an answer is its wrapped text under a role label; a tool call, its result,
thinking and injected context are one header row each, folded, opened in place (enter or
space on the cursor's entry). The cursor moves by entry (j/k); search matches are marked,
the current one apart. Every string drawn was sanitized by core.conversation and is drawn as
Rich Text, never parsed as markup.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import ClassVar

from rich.cells import get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.strip import Strip

from gobtui.core.conversation import Entry, EntryKind, Match, Part, pattern_of, searched_part
from gobtui.widgets.line_list import LineList, text_strip

GUTTER = 8
"""Cells left of the text: the role label, the fold marker, the bar of an opened body."""
MIN_TEXT_WIDTH = 10

Span = tuple[int, int]


def wrap_offsets(text: str, width: int) -> list[Span]:
    """Where each row of `text` wrapped to `width` cells starts and ends (offsets into it):
    at a space when a row has one (the space is dropped), else at the width; an empty line
    is an empty row."""
    rows: list[Span] = []
    width = max(1, width)
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        if line.isascii():
            _wrap_ascii(line, start, width, rows)
        else:
            _wrap_cells(line, start, width, rows)
        start = end + 1
    return rows


def _wrap_ascii(line: str, base: int, width: int, rows: list[Span]) -> None:
    pos, size = 0, len(line)
    while size - pos > width:
        cut = line.rfind(" ", pos + 1, pos + width + 1)
        if cut <= pos:
            rows.append((base + pos, base + pos + width))
            pos += width
        else:
            rows.append((base + pos, base + cut))
            pos = cut + 1
    rows.append((base + pos, base + size))


def _wrap_cells(line: str, base: int, width: int, rows: list[Span]) -> None:
    pos, cells, space = 0, 0, -1
    for index, char in enumerate(line):
        size = get_character_cell_size(char)
        if cells + size > width and index > pos:
            if space > pos:
                rows.append((base + pos, base + space))
                pos = space + 1
                cells = sum(get_character_cell_size(c) for c in line[pos:index])
            else:
                rows.append((base + pos, base + index))
                pos, cells = index, 0
            space = -1
        if char == " ":
            space = index
        cells += size
    rows.append((base + pos, base + len(line)))


class ConversationView(LineList):
    """Rows of entries; `cursor_entry` is the entry enter/space opens or folds."""

    SHOW_CURSOR: ClassVar[bool] = False  # (LineList's row cursor: this one moves by entry)
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-list--cursor",
        "conversation-view--user",
        "conversation-view--assistant",
        "conversation-view--call",
        "conversation-view--result",
        "conversation-view--error",
        "conversation-view--thinking",
        "conversation-view--context",
        "conversation-view--notice",
        "conversation-view--muted",
        "conversation-view--match",
        "conversation-view--match-current",
    }
    DEFAULT_CSS = """
    ConversationView > .conversation-view--user { color: $accent; text-style: bold; }
    ConversationView > .conversation-view--assistant { color: $primary; text-style: bold; }
    ConversationView > .conversation-view--call { color: $text; }
    ConversationView > .conversation-view--result { color: $text-muted; }
    ConversationView > .conversation-view--error { color: $error; }
    ConversationView > .conversation-view--thinking { color: $text-muted; text-style: italic; }
    ConversationView > .conversation-view--context { color: $text-muted; }
    ConversationView > .conversation-view--notice { color: $warning; }
    ConversationView > .conversation-view--muted { color: $text-muted; }
    ConversationView > .conversation-view--match { color: $warning; text-style: bold underline; }
    ConversationView > .conversation-view--match-current {
        color: $accent; text-style: bold reverse;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter,space",
            "toggle_fold",
            "Open/fold",
            key_display="enter",
            tooltip="Open or fold the tool call, result or thinking under the cursor",
            id="conversation.toggle",
        ),
        Binding("down,j", "cursor(1)", "Next", show=False, id="conversation.down"),
        Binding("up,k", "cursor(-1)", "Previous", show=False, id="conversation.up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="conversation.page.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="conversation.page.up"),
        Binding("g,home", "edge(0)", "First", show=False, id="conversation.first"),
        Binding("G,end", "edge(1)", "Last", show=False, id="conversation.last"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[Entry] = []
        self.labels: dict[EntryKind, str] = {EntryKind.USER: "user"}
        self.placeholder = ""
        """The one row shown while there are no entries (reading…, nothing to show)."""
        self.opened: set[int] = set()
        self.cursor_entry = 0
        self._heights: list[int] = []
        self._starts: list[int] = [0]
        self._wraps: dict[int, list[Span]] = {}
        self._wrap_width = 0
        self._matches: dict[tuple[int, Part], list[Span]] = {}
        self._match_starts: dict[tuple[int, Part], list[int]] = {}
        self._current: Match | None = None
        self._pattern: re.Pattern[str] | None = None
        self._search_opened: int | None = None
        """The entry the last shown match opened (folded again when the next is elsewhere)."""

    # --- content ---------------------------------------------------------------------------

    def set_entries(self, entries: list[Entry], assistant: str) -> None:
        self.entries = entries
        self.labels = {EntryKind.USER: "user", EntryKind.ASSISTANT: assistant}
        self.opened = set()
        self.cursor_entry = 0
        self._search_opened = None
        self._wraps = {}
        self.set_matches([], None)
        self._layout()
        self.scroll_to(y=0, animate=False, immediate=True)

    def set_placeholder(self, text: str) -> None:
        self.placeholder = text
        self._layout()

    def set_matches(
        self, matches: list[Match], current: Match | None, query: str | None = None
    ) -> None:
        """The matches to mark; `query` also marks (uncounted) the headers that summarise
        a searched text, so a fold shows what it holds."""
        self._pattern = pattern_of(query) if query else None
        grouped: dict[tuple[int, Part], list[Span]] = {}
        for match in matches:
            grouped.setdefault((match.entry, match.part), []).append((match.start, match.end))
        self._matches = grouped
        self._match_starts = {key: [s for s, _ in spans] for key, spans in grouped.items()}
        self._current = current
        self.refresh()

    # --- layout ----------------------------------------------------------------------------

    @property
    def text_width(self) -> int:
        return max(MIN_TEXT_WIDTH, self.scrollable_content_region.width - GUTTER)

    def _body_rows(self, index: int) -> list[Span]:
        rows = self._wraps.get(index)
        if rows is None:
            rows = self._wraps[index] = wrap_offsets(self.entries[index].body, self.text_width)
        return rows

    def _height(self, index: int) -> int:
        entry = self.entries[index]
        if entry.is_message:
            return len(self._body_rows(index))
        if index in self.opened:
            return 1 + len(self._body_rows(index))
        return 1

    def _layout(self) -> None:
        """Heights of every entry at the current width (a fold is one row, so only prompts,
        answers and opened entries are wrapped), then the canvas."""
        width = self.text_width
        if width != self._wrap_width:
            self._wraps, self._wrap_width = {}, width
        self._heights = [self._height(i) for i in range(len(self.entries))]
        self._restart()

    def _restart(self) -> None:
        self._starts = list(accumulate(self._heights, initial=0))
        self.virtual_size = Size(self.scrollable_content_region.width, self.row_count())
        self.refresh()

    def _relayout_entry(self, index: int) -> None:
        self._heights[index] = self._height(index)
        self._restart()

    def on_resize(self) -> None:
        self._layout()
        if self.entries:
            self._show_entry(self.cursor_entry)

    def row_count(self) -> int:
        if not self.entries:
            return 1 if self.placeholder else 0
        return self._starts[-1]

    def entry_at(self, row: int) -> int:
        return max(0, min(len(self.entries) - 1, bisect_right(self._starts, row) - 1))

    def row_of(self, match: Match) -> int:
        """The row a match is drawn on (its entry opened, when it is in a folded body)."""
        top = self._starts[match.entry]
        if match.part is Part.HEADER:
            return top
        rows = self._body_rows(match.entry)
        at = max(0, bisect_right([s for s, _ in rows], match.start) - 1)
        return top + at + (0 if self.entries[match.entry].is_message else 1)

    # --- drawing ---------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(
            f"conversation-view--{name}", partial=True, default=Style()
        )

    def _marked(self, text: Text, key: tuple[int, Part], start: int, end: int) -> None:
        """Mark the matches of `key` within [start, end) on `text` (which begins at `start`)."""
        spans = self._matches.get(key)
        if not spans:
            return
        starts = self._match_starts[key]
        current = self._current
        first = max(0, bisect_left(starts, start) - 1)
        for m_start, m_end in spans[first : bisect_left(starts, end)]:
            if m_end <= start or m_start >= end:
                continue
            is_current = (
                current is not None
                and (current.entry, current.part) == key
                and current.start == m_start
            )
            style = self._style("match-current" if is_current else "match")
            text.stylize(style, max(m_start, start) - start, min(m_end, end) - start)

    def _kind_style(self, entry: Entry) -> Style:
        if entry.error:
            return self._style("error")
        return self._style(
            {
                EntryKind.TOOL_CALL: "call",
                EntryKind.TOOL_RESULT: "result",
                EntryKind.THINKING: "thinking",
                EntryKind.CONTEXT: "context",
                EntryKind.NOTICE: "notice",
            }.get(entry.kind, "muted")
        )

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        if not self.entries:
            line = Text(self.placeholder, self.rich_style + self._style("muted"), no_wrap=True)
            line.truncate(width, overflow="ellipsis")
            return text_strip(line, width, self.rich_style, self)
        at = self.entry_at(index)
        entry = self.entries[at]
        row = index - self._starts[at]
        line = Text(no_wrap=True, style=self.rich_style)
        if entry.is_message:
            label = self.labels.get(entry.kind, "") if row == 0 else ""
            line.append(f"{label:<{GUTTER - 1}} "[:GUTTER], self._style(entry.kind.value))
            line.append_text(self._body_row(at, entry, row))
        elif row == 0:
            mark = ("▾" if at in self.opened else "▸") if entry.foldable else "·"
            line.append(f"{mark:>{GUTTER - 2}}  ", self._style("muted"))
            header = Text(entry.header, self._kind_style(entry))
            if searched_part(entry) is Part.HEADER:
                self._marked(header, (at, Part.HEADER), 0, len(entry.header))
            elif self._pattern is not None:
                header.highlight_regex(self._pattern, self._style("match"))
            header.truncate(max(1, width - GUTTER), overflow="ellipsis")
            line.append_text(header)
        else:
            line.append(f"{'│':>{GUTTER - 2}}  ", self._style("muted"))
            line.append_text(self._body_row(at, entry, row - 1))
        strip = text_strip(line, width, self.rich_style, self)
        if at == self.cursor_entry and row == 0 and self.has_focus:
            cursor = self.get_component_rich_style("line-list--cursor", default=Style(reverse=True))
            strip = Strip(Segment.apply_style(iter(strip), post_style=cursor), strip.cell_length)
        return strip

    def _body_row(self, at: int, entry: Entry, row: int) -> Text:
        rows = self._body_rows(at)
        start, end = rows[row] if row < len(rows) else (0, 0)
        text = Text(entry.body[start:end], self._style("error") if entry.error else Style())
        self._marked(text, (at, Part.BODY), start, end)
        return text

    # --- movement --------------------------------------------------------------------------

    def _show_rows(self, top: int, height: int) -> None:
        """Scroll the least that shows rows top..top+height (their top when they cannot all
        be shown)."""
        view, page = int(self.scroll_offset.y), self.page_rows
        if top < view:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top + min(height, page) > view + page:
            self.scroll_to(y=top + min(height, page) - page, animate=False, immediate=True)

    def _show_entry(self, index: int) -> None:
        self._show_rows(self._starts[index], self._heights[index])

    def move_to(self, index: int) -> None:
        if not self.entries:
            return
        self.cursor_entry = max(0, min(index, len(self.entries) - 1))
        self._show_entry(self.cursor_entry)
        self.refresh()

    def show_match(self, match: Match) -> None:
        """Put the cursor on the match's entry, open it when the match is in its folded
        body (folding again the one the last match opened, when that is another), and
        bring the match's row into view."""
        self._current = match
        entry = self.entries[match.entry]
        searched = self._search_opened
        if searched is not None and searched != match.entry and searched in self.opened:
            self.opened.discard(searched)
            self._relayout_entry(searched)
        self._search_opened = None
        if match.part is Part.BODY and entry.foldable and match.entry not in self.opened:
            self.opened.add(match.entry)
            self._search_opened = match.entry
            self._relayout_entry(match.entry)
        elif searched == match.entry:
            self._search_opened = searched
        self.cursor_entry = match.entry
        row = self.row_of(match)
        view, page = int(self.scroll_offset.y), self.page_rows
        if not view <= row < view + page:
            self.scroll_to(y=max(0, row - page // 3), animate=False, immediate=True)
        self.refresh()

    def toggle(self, index: int) -> None:
        if not 0 <= index < len(self.entries) or not self.entries[index].foldable:
            return
        self.opened.symmetric_difference_update({index})
        if index == self._search_opened:
            self._search_opened = None  # the reader's fold from now on
        self._relayout_entry(index)
        self._show_entry(index)

    def action_toggle_fold(self) -> None:
        self.toggle(self.cursor_entry)

    def action_cursor(self, step: int) -> None:
        self.move_to(self.cursor_entry + step)

    def action_page(self, direction: int) -> None:
        if not self.entries:
            return
        view, page = int(self.scroll_offset.y), self.page_rows
        top = max(0, min(view + direction * page, self.row_count() - page))
        if top == view:  # at an end already: the cursor goes there
            self.move_to(len(self.entries) - 1 if direction > 0 else 0)
            return
        self.scroll_to(y=top, animate=False, immediate=True)
        first = self.entry_at(top)
        starts_above = self._starts[first] < top
        if starts_above and first + 1 < len(self.entries) and self._starts[first + 1] < top + page:
            first += 1  # the first entry that starts in view
        self.cursor_entry = first
        self.refresh()

    def action_edge(self, end: int) -> None:
        if not self.entries:
            return
        if end:
            self.cursor_entry = len(self.entries) - 1
            bottom = max(0, self.row_count() - self.page_rows)
            self.scroll_to(y=bottom, animate=False, immediate=True)
        else:
            self.cursor_entry = 0
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        if not self.entries:
            return
        row = int(self.scroll_offset.y) + event.y
        if row >= self.row_count():
            return
        index = self.entry_at(row)
        if index == self.cursor_entry and row == self._starts[index]:
            self.toggle(index)
        else:
            self.cursor_entry = index
            self.refresh()
