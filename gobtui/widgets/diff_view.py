"""A record's text diff, split (two columns) or unified (one), long lines wrapped to the
width; drawn with the Line API, so a large record never becomes thousands of widgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import chop_cells
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from gobtui.view_models.diff_model import DiffLine, DiffTag, RecordDiff
from gobtui.widgets.line_list import LineList, text_strip
from gobtui.widgets.record_pairs import clean

SIGNS = {DiffTag.EQUAL: " ", DiffTag.DELETE: "-", DiffTag.INSERT: "+", DiffTag.FOLD: " "}
SPLIT_SEPARATOR = " │ "


@dataclass(frozen=True, slots=True)
class Cell:
    """One wrapped piece of a diff line in one column."""

    tag: DiffTag
    gutter: str
    text: str


VisualRow = tuple[Cell | None, ...]


def _wrap(line: DiffLine, gutter: str, width: int) -> list[Cell]:
    room = max(1, width - len(gutter))
    text = clean(line.text)
    chunks = chop_cells(text, room) if text else [""]
    blank = " " * (len(gutter) - 2) + SIGNS[line.tag] + " "
    return [Cell(line.tag, gutter if k == 0 else blank, c) for k, c in enumerate(chunks)]


def number_width(diff: RecordDiff) -> int:
    """Digits of the longest side's last line number: narrow gutters leave room for text."""
    return max(2, len(str(max(len(diff.before.lines), len(diff.after.lines)))))


def _number(n: int | None, digits: int) -> str:
    return f"{n:>{digits}}" if n is not None else " " * digits


def unified_layout(lines: list[DiffLine], width: int, digits: int) -> list[VisualRow]:
    rows: list[VisualRow] = []
    for line in lines:
        if line.tag is DiffTag.FOLD:
            rows.append((Cell(DiffTag.FOLD, "", line.text),))
            continue
        old, new = _number(line.old_no, digits), _number(line.new_no, digits)
        gutter = f"{old} {new} {SIGNS[line.tag]} "
        rows.extend((cell,) for cell in _wrap(line, gutter, width))
    return rows


def split_layout(diff: RecordDiff, width: int) -> list[VisualRow]:
    digits = number_width(diff)
    half = max(1, (width - len(SPLIT_SEPARATOR)) // 2)
    rows: list[VisualRow] = []
    for pair in diff.split():
        if pair.left is not None and pair.left.tag is DiffTag.FOLD:
            fold = Cell(DiffTag.FOLD, "", pair.left.text)
            rows.append((fold, fold))
            continue
        sides: list[list[Cell]] = []
        for line, number in ((pair.left, "old_no"), (pair.right, "new_no")):
            if line is None:
                sides.append([])
                continue
            gutter = f"{_number(getattr(line, number), digits)} {SIGNS[line.tag]} "
            sides.append(_wrap(line, gutter, half))
        left, right = sides
        for k in range(max(len(left), len(right))):
            rows.append((left[k] if k < len(left) else None, right[k] if k < len(right) else None))
    return rows


class DiffView(LineList):
    SHOW_CURSOR = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--delete",
        "diff-view--insert",
        "diff-view--fold",
        "diff-view--gutter",
        "diff-view--empty",
    }

    def __init__(self, diff: RecordDiff, *, split: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff = diff
        self.split = split
        self._unified = diff.unified()
        self._layout: list[VisualRow] = []
        self._layout_key: tuple[int, bool] = (-1, split)

    def set_split(self, split: bool) -> None:
        self.split = split
        self.rows_changed()

    def rows(self) -> list[VisualRow]:
        width = self.scrollable_content_region.width
        key = (width, self.split)
        if key != self._layout_key:
            self._layout_key = key
            if width <= 0:
                self._layout = []
            elif self.split:
                self._layout = split_layout(self.diff, width)
            else:
                self._layout = unified_layout(self._unified, width, number_width(self.diff))
        return self._layout

    def row_count(self) -> int:
        return len(self.rows())

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"diff-view--{name}", default=Style())

    def _cell(self, cell: Cell | None, width: int) -> Text:
        if cell is None:
            return Text(" " * width, self._style("empty"))
        if cell.tag is DiffTag.FOLD:
            return Text(f" {cell.text}".ljust(width)[:width], self._style("fold"))
        style = {DiffTag.DELETE: "delete", DiffTag.INSERT: "insert"}.get(cell.tag)
        text = Text(cell.gutter, self._style("gutter"))
        text.append(cell.text)
        text.pad_right(max(0, width - text.cell_len))
        text.truncate(width)
        if style is not None:  # after the padding, so a change colours its whole column
            text.stylize(self._style(style))
        return text

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows()[index]
        if len(row) == 1:
            return text_strip(self._cell(row[0], width), width, self.rich_style, self)
        half = max(1, (width - len(SPLIT_SEPARATOR)) // 2)
        text = self._cell(row[0], half)
        text.append(SPLIT_SEPARATOR, self._style("gutter"))
        text.append_text(self._cell(row[1], width - half - len(SPLIT_SEPARATOR)))
        return text_strip(text, width, self.rich_style, self)
