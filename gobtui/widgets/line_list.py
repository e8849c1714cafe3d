"""A Line API list with a cursor: rows are drawn when they scroll into view, never mounted as
widgets, so a 100k-record preview costs what the screen shows. An optional header row stays
put while the rows scroll under it."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


def text_strip(text: Text, width: int, console_style: Style, widget: ScrollView) -> Strip:
    """One Rich Text as a Strip of exactly `width` cells (cropped or padded)."""
    segments = list(text.render(widget.app.console, end=""))
    return Strip(segments).adjust_cell_length(width, console_style)


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells with an ellipsis, or padded with spaces."""
    if width <= 0:
        return ""
    cell = Text(text)
    if cell.cell_len > width:
        cell.truncate(width, overflow="ellipsis")
    else:
        cell.pad_right(width - cell.cell_len)
    return cell.plain


class LineList(ScrollView, can_focus=True):
    """Subclasses give `row_count()` and `render_row()`; this handles cursor and scrolling."""

    DEFAULT_CSS = """
    LineList { scrollbar-gutter: stable; overflow-x: hidden; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "edge(0)", "First", show=False),
        Binding("end,G", "edge(1)", "Last", show=False),
    ]
    """Subclasses with a cursor bind enter to `select_row` under their own description."""

    HEADER_ROWS: ClassVar[int] = 0
    SHOW_CURSOR: ClassVar[bool] = True

    cursor: reactive[int] = reactive(0, init=False)

    class Selected(Message):
        """Enter (or a second click) on a row."""

        def __init__(self, control: LineList, index: int) -> None:
            super().__init__()
            self._control = control
            self.index = index

        @property
        def control(self) -> LineList:
            return self._control

    class Highlighted(Message):
        def __init__(self, control: LineList, index: int) -> None:
            super().__init__()
            self._control = control
            self.index = index

        @property
        def control(self) -> LineList:
            return self._control

    # --- for subclasses ------------------------------------------------------------------

    def row_count(self) -> int:
        raise NotImplementedError

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        raise NotImplementedError

    def render_header(self, width: int) -> Strip:
        return Strip.blank(width, self.rich_style)

    # --- layout --------------------------------------------------------------------------

    def rows_changed(self, keep_cursor: bool = False) -> None:
        """Call after the rows changed: resizes the virtual canvas and redraws."""
        count = self.row_count()
        self.virtual_size = Size(self.scrollable_content_region.width, count + self.HEADER_ROWS)
        cursor = min(self.cursor, count - 1) if keep_cursor else 0
        self.set_reactive(LineList.cursor, max(0, cursor))
        if not keep_cursor:
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        self.virtual_size = Size(width, self.row_count() + self.HEADER_ROWS)

    @property
    def page_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - self.HEADER_ROWS)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y < self.HEADER_ROWS:
            return self.render_header(width)
        index = int(self.scroll_offset.y) + y - self.HEADER_ROWS
        if index < 0 or index >= self.row_count():
            return Strip.blank(width, self.rich_style)
        selected = self.SHOW_CURSOR and index == self.cursor
        strip = self.render_row(index, width, selected)
        if selected and self.has_focus:
            cursor = self.get_component_rich_style("line-list--cursor", default=Style(reverse=True))
            strip = Strip(Segment.apply_style(iter(strip), post_style=cursor), strip.cell_length)
        return strip

    # --- cursor --------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self, new))

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + self.page_rows:
            self.scroll_to(y=self.cursor - self.page_rows + 1, animate=False, immediate=True)

    def move_cursor(self, index: int) -> None:
        count = self.row_count()
        if count == 0:
            return
        if not self.SHOW_CURSOR:
            top = max(0, min(index, count - self.page_rows))
            self.scroll_to(y=top, animate=False, immediate=True)
            return
        self.cursor = max(0, min(index, count - 1))

    def show_row(self, index: int) -> None:
        """Put the cursor on `index` and scroll it into view, once the list has its size: a
        list just filled (or shown) may not know its height or scroll range yet."""

        def place() -> None:
            self.move_cursor(index)
            self._scroll_to_cursor()

        self.call_after_refresh(place)

    def action_cursor(self, step: int) -> None:
        if not self.SHOW_CURSOR:
            self.move_cursor(int(self.scroll_offset.y) + step)
            return
        self.move_cursor(self.cursor + step)

    def action_page(self, direction: int) -> None:
        base = self.cursor if self.SHOW_CURSOR else int(self.scroll_offset.y)
        self.move_cursor(base + direction * self.page_rows)

    def action_edge(self, end: int) -> None:
        self.move_cursor(self.row_count() - 1 if end else 0)

    def action_select_row(self) -> None:
        if self.SHOW_CURSOR and 0 <= self.cursor < self.row_count():
            self.post_message(self.Selected(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y - self.HEADER_ROWS
        if not self.SHOW_CURSOR or event.y < self.HEADER_ROWS or index >= self.row_count():
            return
        if index == self.cursor:
            self.post_message(self.Selected(self, index))
        else:
            self.cursor = index

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
