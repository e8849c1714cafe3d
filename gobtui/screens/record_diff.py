"""The text diff of one record: the original JSON against what the plan writes, split or
unified. Returns the diff mode on close, so the preview remembers it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from gobtui.core.limits import DIFF_MAX_LINES, DIFF_STRING_MAX_CHARS
from gobtui.core.record_number import shown
from gobtui.view_models import format as fmt
from gobtui.view_models.diff_model import RecordDiff, record_diff
from gobtui.view_models.format import human_bytes
from gobtui.view_models.preview_rows import PairRow, RowChange
from gobtui.widgets.diff_view import DiffView
from gobtui.widgets.palette import band_styles
from gobtui.widgets.record_pairs import clean

CHANGE_WORDS = {
    RowChange.SAME: "unchanged",
    RowChange.STUBBED: "stubbed",
    RowChange.LEFT_OUT: "left out of the fork (thinking after its first change)",
    RowChange.CHANGED: "rewritten",
    RowChange.API_DROP: "dropped at the API only, file unchanged",
    RowChange.ADDED: "appended by the plan",
}


DIFF_LEGEND = [
    ("-  /  +", "a line of the original record / of the record the plan writes"),
    ("⋯ N unchanged", "unchanged lines folded away, a few kept around each change"),
    ("[cut: N chars, #h]", "a long string shortened for display; #h tells two strings apart"),
]


class RecordDiffScreen(Screen[bool]):
    HELP_LEGEND = DIFF_LEGEND
    HELP_LEGEND_TITLE = "Reading the diff"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the preview", id="diff.close"),
        Binding(
            "s", "toggle_split", "Split/unified", tooltip="Split or unified", id="diff.toggle_split"
        ),
    ]

    def __init__(
        self,
        row: PairRow,
        before: bytes | None,
        after: bytes | None,
        *,
        split: bool,
        number: int | None = None,
    ) -> None:
        super().__init__()
        self.row = row
        self.number = number
        """The record's number as the preview shows it (the file's own)."""
        self.split = split
        self.diff: RecordDiff = record_diff(before, after)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="diff-title")
        yield Static(id="diff-note")
        yield DiffView(self.diff, split=self.split, id="diff-view")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._render_note()
        self.query_one(DiffView).focus()

    def _title(self) -> Text:
        row = self.row
        record = row.before or row.after
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("DIFF ", style="reverse bold")
        if record is not None:
            number = self.number if self.number is not None else shown(record.line)
            text.append(f" rec {number} · {record.kind}", style="bold")
            text.append(f" · {clean(record.label)}")
        return text

    def _render_note(self) -> None:
        styles = band_styles(self.app)
        row = self.row
        text = Text(no_wrap=True, overflow="ellipsis")
        sizes = " → ".join(human_bytes(r.size) for r in (row.before, row.after) if r is not None)
        text.append(f"{CHANGE_WORDS.get(row.change, row.change.value)} · {sizes}")
        if row.freed > 0:
            text.append(f", frees {human_bytes(row.freed)}", styles.ok)
        text.append(f" · {'split' if self.split else 'unified'}")
        notes = []
        if self.diff.cut_strings:
            notes.append(
                f"{fmt.plural(self.diff.cut_strings, 'string')} cut at {DIFF_STRING_MAX_CHARS} chars"
            )
        if self.diff.truncated:
            notes.append(f"first {DIFF_MAX_LINES:,} lines only")
        if not (self.diff.before.is_json and self.diff.after.is_json):
            notes.append("not JSON: shown raw")
        if notes:
            text.append(" · " + " · ".join(notes), styles.muted)
        self.query_one("#diff-note", Static).update(text)

    def action_toggle_split(self) -> None:
        self.split = not self.split
        self.query_one(DiffView).set_split(self.split)
        self._render_note()

    def action_close(self) -> None:
        self.dismiss(self.split)
