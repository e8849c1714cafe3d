"""`d` on two marked snapshots: what changed between them, record by record hash.

Counts only (records added, removed, unchanged; per-type counts on each side) and the first
hashes of each side: never record content, which the record browser shows on request.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gobtui import format as fmt
from gobtui.core.vault_model import IndexEntry, SnapshotDiff
from gobtui.vault_rows import HASH_PREFIX_CHARS, age, type_counts
from gobtui.widgets.palette import BandStyles, band_styles

HASHES_SHOWN = 4
"""Hash prefixes listed per side; the counts say how many there are in all."""

DIFF_LEGEND = [
    ("A → B", "the older marked snapshot → the newer one"),
    ("added", "records of B whose hash is not in A (each hash once)"),
    ("removed", "records of A whose hash is not in B (each hash once)"),
    ("unchanged", "records of B whose hash is also in A"),
    ("Δ", "change in the number of records of that type"),
]


def _signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"{n:,}" if n < 0 else "0"


class DiffSummaryScreen(Screen[None]):
    HELP_LEGEND = DIFF_LEGEND
    HELP_LEGEND_TITLE = "Reading the diff"
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
    ) -> None:
        super().__init__()
        self.diff = diff
        self.older = older
        self.newer = newer
        self.now = now
        self.project = project

    def compose(self) -> ComposeResult:
        yield Static(id="vdiff-title")
        with VerticalScroll(id="vdiff-body"):
            yield Static(id="vdiff-summary")
            yield Static(id="vdiff-types")
            yield Static(id="vdiff-hashes")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        styles = band_styles(self.app)
        self.query_one("#vdiff-title", Static).update(self._title())
        self.query_one("#vdiff-summary", Static).update(self._summary(styles))
        self.query_one("#vdiff-types", Static).update(self._types(styles))
        self.query_one("#vdiff-hashes", Static).update(self._hashes(styles))
        self.query_one("#vdiff-body").focus()

    def _side(self, name: str, entry: IndexEntry) -> str:
        label = fmt.ellipsize(entry.strategy or "unlabelled", 40)
        return f"{name} {entry.sha256[:8]} {label} {age(self.now, entry.ts)}"

    def _title(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("DIFF ", style="reverse bold")
        who = self.project or fmt.short_id(self.older.session_id)
        text.append(f" {who}", style="bold")
        if self.older.session_id != self.newer.session_id:
            text.append(" · two sessions")
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
        elif self.older.session_id != self.newer.session_id:
            # A restore or a fork holds its source's records under a new session id, which
            # every record carries: by hash, all of them differ.
            text.append(
                "\ntwo sessions: records carry their session id, so equal content counts"
                " as added and removed",
                styles.muted,
            )
        return text

    def _types(self, styles: BandStyles) -> Table:
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
        table.add_column("record type", no_wrap=True, overflow="ellipsis", max_width=40)
        table.add_column("A", justify="right")
        table.add_column("B", justify="right")
        table.add_column("Δ", justify="right")
        for row in type_counts(self.diff):
            style = styles.ok if row.delta > 0 else styles.alert if row.delta < 0 else styles.muted
            table.add_row(row.kind, f"{row.a:,}", f"{row.b:,}", Text(_signed(row.delta), style))
        return table

    def _hashes(self, styles: BandStyles) -> Text:
        text = Text()
        for name, hashes in (("added", self.diff.added), ("removed", self.diff.removed)):
            if not hashes:
                continue
            shown = " ".join(h[:HASH_PREFIX_CHARS] for h in hashes[:HASHES_SHOWN])
            more = f" … +{len(hashes) - HASHES_SHOWN:,}" if len(hashes) > HASHES_SHOWN else ""
            text.append(f"\n{name}: ", style="bold")
            text.append(f"{shown}{more}", styles.muted)
        return text

    def action_close(self) -> None:
        self.dismiss(None)
