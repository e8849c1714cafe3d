"""`d` on two marked snapshots: what changed between them, record by record hash.

Counts (records added, removed, unchanged; per-type counts on each side), then the records
behind them, one line each (+ added, in B; − removed, from A) with a preview of their
content; enter opens one in the record viewer. Two snapshots of different sessions are
headed with both names.

The changed records are found by a second read of both snapshots in a thread worker, after
the counts are shown; a snapshot that fails to verify there shows the error modal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from gobtui.adapters.vault.fork_diff import fork_changes_of
from gobtui.adapters.vault.vault import Vault
from gobtui.controllers.messages import VaultFailed
from gobtui.controllers.publishing import publishing_of
from gobtui.core.fork_changes import ForkChanges, RecordChange
from gobtui.core.record_number import shown
from gobtui.core.vault.errors import VaultError
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import SnapshotDiff
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.worker_errors import UNEXPECTED_CODE, WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.view_models.vault_rows import (
    ChangedRecords,
    RecordRow,
    age,
    changed_records,
    rows_at,
    type_counts,
)
from gobtui.widgets.line_list import LineList, fit, text_strip
from gobtui.widgets.palette import BandStyles, band_styles

CHANGED_LISTED = 2_000
"""Changed records listed per side; the counts above the list cover them all."""
TYPE_WIDTH = 14
SIZE_WIDTH = 9

DIFF_LEGEND = [
    ("A → B", "the older marked snapshot → the newer one"),
    ("added", "records of B whose hash is not in A (or more often in B than in A)"),
    ("removed", "records of A whose hash is not in B (or more often in A than in B)"),
    ("unchanged", "records of B whose hash is also in A"),
    ("Δ", "change in the number of records of that type"),
    ("+ / −", "an added record (rec: its line in B) / a removed one (its line in A)"),
    ("~ ≠", "a fork's diff (session ids set aside): a record it stubbed, one it rewrote"),
]


def _signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"{n:,}" if n < 0 else "0"


@dataclass
class ChangedScanned(Message):
    request: int
    changed: ChangedRecords
    fork: ForkChanges | None = None
    """What B changed with the session ids set aside (two sessions only)."""
    fork_rows: list[tuple[str, bool, RecordRow]] | None = None


CHANGE_MARKS = {
    RecordChange.STUBBED: "~",
    RecordChange.REWRITTEN: "≠",
    RecordChange.REMOVED: "−",
    RecordChange.APPENDED: "+",
}


class ChangedList(LineList):
    """One line per added or removed record; enter opens it."""

    HEADER_ROWS: ClassVar[int] = 1
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-list--cursor",
        "changed-list--header",
        "changed-list--muted",
    }
    DEFAULT_CSS = """
    ChangedList > .changed-list--header { color: $text-muted; text-style: bold; }
    ChangedList > .changed-list--muted { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_row", "View", tooltip="Read the record", id="vault_diff.view"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[str, bool, RecordRow]] = []
        """(mark, of B, row): a record of B, else of A."""

    def set_rows(self, rows: list[tuple[str, bool, RecordRow]]) -> None:
        self.rows = rows
        self.rows_changed()

    def row_count(self) -> int:
        return len(self.rows)

    def _index_width(self) -> int:
        return max(3, *(len(str(shown(row.index))) for _, _, row in self.rows)) if self.rows else 3

    def render_header(self, width: int) -> Strip:
        index_width = self._index_width()
        preview = max(0, width - 2 - index_width - 2 - TYPE_WIDTH - 1 - SIZE_WIDTH)
        line = f"  {'rec':>{index_width}}  {fit('type', TYPE_WIDTH)} {fit('preview', preview)}"
        line += f"{'size':>{SIZE_WIDTH}}"
        style = self.get_component_rich_style("changed-list--header", partial=True)
        return text_strip(Text(line, style), width, self.rich_style, self)

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        mark, _, row = self.rows[index]
        styles = band_styles(self.app)
        index_width = self._index_width()
        preview = max(0, width - 2 - index_width - 2 - TYPE_WIDTH - 1 - SIZE_WIDTH)
        muted = self.get_component_rich_style("changed-list--muted", partial=True)
        text = Text()
        tone = styles.alert if mark == "−" else styles.ok if mark == "+" else styles.warn
        text.append(f"{mark} ", tone + Style(bold=True))
        text.append(f"{shown(row.index):>{index_width}}  {fit(row.kind, TYPE_WIDTH)} ")
        text.append(fit(row.preview, preview), muted)  # (one_line'd by vault_text)
        text.append(f"{human_bytes(row.size):>{SIZE_WIDTH}}")
        return text_strip(text, width, self.rich_style, self)


class DiffSummaryScreen(WorkerErrors, Screen[None]):
    HELP_LEGEND = DIFF_LEGEND
    HELP_LEGEND_TITLE = "Reading the diff"
    DEFAULT_CSS = """
    DiffSummaryScreen #vdiff-head {
        height: auto; max-height: 50%; border-top: solid $primary; padding: 0 1;
    }
    DiffSummaryScreen #vdiff-records { height: 1fr; border-top: solid $primary; }
    """
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the vault", id="vault_diff.close"),
    ]

    def __init__(
        self,
        diff: SnapshotDiff,
        older: IndexEntry,
        newer: IndexEntry,
        *,
        now: float,
        project: str | None = None,
        newer_project: str | None = None,
    ) -> None:
        super().__init__()
        self.diff = diff
        self.older = older
        self.newer = newer
        self.now = now
        self.project = project
        """The board's name for A's session (and B's, when they are one session)."""
        same = older.session_id == newer.session_id
        self.newer_project = project if same and newer_project is None else newer_project
        self.changed: ChangedRecords | None = None
        self.fork: ForkChanges | None = None

    @property
    def two_sessions(self) -> bool:
        return self.older.session_id != self.newer.session_id

    def compose(self) -> ComposeResult:
        yield Static(id="vdiff-title")
        with VerticalScroll(id="vdiff-head"):
            yield Static(id="vdiff-summary")
            yield Static(id="vdiff-types")
        yield ChangedList(id="vdiff-records")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        styles = band_styles(self.app)
        self.query_one("#vdiff-title", Static).update(self._title())
        self.query_one("#vdiff-summary", Static).update(self._summary(styles))
        self.query_one("#vdiff-types", Static).update(self._types(styles))
        records = self.query_one(ChangedList)
        records.focus()
        if self.diff.added or self.diff.removed:
            records.loading = True
            self._scan()

    # --- the changed records -------------------------------------------------------------

    @screen_work("vdiff-scan")
    def _scan(self) -> None:
        worker = get_current_worker()
        try:
            vault = publishing_of(self.app).open_vault()
            changed = changed_records(
                vault, self.diff, limit=CHANGED_LISTED, cancelled=lambda: worker.is_cancelled
            )
        except VaultError as error:
            self.post_message(VaultFailed(0, "diff", str(error), error.code, error.damaged))
            return
        fork, fork_rows = None, None
        if changed is not None and self.two_sessions and not worker.is_cancelled:
            try:
                fork = fork_changes_of(vault, self.older.sha256, self.newer.sha256)
                if fork.unpaired is None:
                    fork_rows = _fork_rows(vault, fork)
            except VaultError as error:
                self.post_message(VaultFailed(0, "diff", str(error), error.code, error.damaged))
                return
        if changed is not None and not worker.is_cancelled:
            self.post_message(ChangedScanned(0, changed, fork, fork_rows))

    @on(ChangedScanned)
    def _scanned(self, message: ChangedScanned) -> None:
        self.changed = changed = message.changed
        self.fork = message.fork
        records = self.query_one(ChangedList)
        records.loading = False
        rows = message.fork_rows
        if rows is None:
            rows = [("+", True, row) for row in changed.added]
            rows += [("−", False, row) for row in changed.removed]
        records.set_rows(rows)
        records.focus()
        self.query_one("#vdiff-summary", Static).update(self._summary(band_styles(self.app)))
        self.refresh_bindings()

    @on(VaultFailed)
    def _failed(self, message: VaultFailed) -> None:
        self.query_one(ChangedList).loading = False
        title = "The snapshot cannot be read" if message.damaged else "Cannot list the records"
        hint = "the vault needs repair; nothing was changed" if message.damaged else ""
        self.app.push_screen(ErrorScreen(title, message.error, code=message.code, hint=hint))

    @on(LineList.Selected, "#vdiff-records")
    def _open(self, event: LineList.Selected) -> None:
        from gobtui.screens.vault_viewer import RecordViewerScreen

        _, of_b, row = self.query_one(ChangedList).rows[event.index]
        entry, project = (self.newer, self.newer_project) if of_b else (self.older, self.project)
        self.app.push_screen(RecordViewerScreen(entry, row, project))

    # --- drawing -------------------------------------------------------------------------

    def _who(self, entry: IndexEntry, project: str | None) -> str:
        short = fmt.short_id(entry.session_id)
        return f"{fmt.ellipsize(project, 24)} {short}" if project else f"session {short}"

    def _side(self, name: str, entry: IndexEntry) -> str:
        label = fmt.ellipsize(entry.strategy or "unlabelled", 40)
        return f"{name} {entry.sha256[:8]} {label} {age(self.now, entry.ts)}"

    def _title(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("DIFF ", style="reverse bold")
        if self.two_sessions:  # both names first: the line is cut at the pane's edge
            text.append(f" A {self._who(self.older, self.project)}", style="bold")
            text.append(" → ")
            text.append(f"B {self._who(self.newer, self.newer_project)}", style="bold")
            text.append(" · two sessions")
        else:
            who = self.project or fmt.short_id(self.older.session_id)
            text.append(f" {who}", style="bold")
        text.append("\n")
        text.append(self._side("A", self.older))
        text.append(" → ")
        text.append(self._side("B", self.newer))
        return text

    def _summary(self, styles: BandStyles) -> Text:
        d = self.diff
        text = Text()
        text.append(f"records {d.records_a:,} → {d.records_b:,} · ", style="bold")
        text.append(f"{d.records_added:,} added", styles.ok if d.added else styles.muted)
        text.append(" · ")
        text.append(f"{d.records_removed:,} removed", styles.alert if d.removed else styles.muted)
        text.append(f" · {d.unchanged:,} unchanged")
        if not d.added and not d.removed:
            text.append("\nthe same records (by hash) on both sides", styles.muted)
        elif self.two_sessions and self.fork is not None and self.fork.unpaired is None:
            # A restore or a fork holds its source's records under a new session id, which
            # every record carries: by hash all differ; with the ids set aside, a few do.
            f = self.fork
            counts = " · ".join(f"{n:,} {change.value}" for change, n in f.counts.items())
            text.append("\nwhat B changed, session ids set aside: ", style="bold")
            text.append(f"{f.kept:,} kept" + (f" · {counts}" if counts else " · nothing else"))
        elif self.two_sessions:
            text.append(
                "\ntwo sessions: records carry their session id, so equal content counts"
                " as added and removed",
                styles.muted,
            )
            if self.fork is not None and self.fork.unpaired:
                text.append("; none pairs with the session ids set aside either", styles.muted)
        changed = self.changed
        if changed is not None and (
            len(changed.added) < changed.added_total or len(changed.removed) < changed.removed_total
        ):
            text.append(f"\nthe first {CHANGED_LISTED:,} of each side are listed", styles.muted)
        return text

    def _types(self, styles: BandStyles) -> Table:
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
        table.add_column("record type", no_wrap=True, overflow="ellipsis", max_width=40)
        table.add_column("A", justify="right")
        table.add_column("B", justify="right")
        table.add_column("Δ", justify="right")
        for row in type_counts(self.diff):
            style = styles.ok if row.delta > 0 else styles.alert if row.delta < 0 else styles.muted
            kind = Text(fmt.ellipsize(row.kind, 40))  # (a str cell would be markup-parsed)
            table.add_row(kind, f"{row.a:,}", f"{row.b:,}", Text(_signed(row.delta), style))
        return table

    def action_close(self) -> None:
        self.dismiss(None)

    def worker_failed(self, group: str, message: str) -> None:
        what = {"vdiff-scan": "diff"}.get(group, group)
        self.post_message(VaultFailed(0, what, message, UNEXPECTED_CODE, False))


def _fork_rows(vault: Vault, fork: ForkChanges) -> list[tuple[str, bool, RecordRow]]:
    """A row per record the fork changed (the first CHANGED_LISTED), read from its side."""
    shown = fork.changes[:CHANGED_LISTED]
    in_b = {c.record_b for c in shown if c.record_b is not None}
    in_a = {c.record_a for c in shown if c.record_b is None and c.record_a is not None}
    rows_b, rows_a = rows_at(vault, fork.b, in_b), rows_at(vault, fork.a, in_a)
    out: list[tuple[str, bool, RecordRow]] = []
    for c in shown:
        if c.record_b is not None and c.record_b in rows_b:
            out.append((CHANGE_MARKS[c.change], True, rows_b[c.record_b]))
        elif c.record_a is not None and c.record_a in rows_a:
            out.append((CHANGE_MARKS[c.change], False, rows_a[c.record_a]))
    return out
