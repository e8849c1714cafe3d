"""`?`: every key of the current screen, and how to read the board."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gobtui.view_models.status_legend import status_legend

LEGEND = [
    ("C / X", "Claude Code / Codex session, then its status:"),
    *status_legend(),
    ("⚠", "bad lines or a torn last line in the file (counted, never fatal)"),
    ("█░┃", "context used, free, and where the compaction trigger sits"),
    ("colours", "under 50% / 50-80% / over 80% of the window"),
    ("ETA", "time to the trigger at the recent burn rate (live sessions)"),
    ("reset", "compacted (by the provider, or a fork from a): no usage reported since"),
    ("Fork", "the newest fork of the session (a, or the CLI): its resume command"),
]

VAULT_LEGEND = [
    ("C / X", "a snapshot of a Claude Code / Codex transcript"),
    ("◆", "marked for a diff: at most two, d compares the older with the newer"),
    (
        "Label",
        "why it was taken: the strategy about to be applied (the source as it was before), fork, …",
    ),
    ("Size", "the transcript's bytes (stored once per 1 MiB chunk, shared)"),
    ("Taken", "how long ago, by the dashboard's clock"),
    ("undo", "restores into a NEW fork beside the file; nothing is overwritten"),
    ("recall", "state cards (goal, summary, files …) found in any snapshot"),
]

RECORDS_LEGEND = [
    ("rec", "the record's physical line in the transcript (0-based)"),
    ("type", "record type, refined by payload type or subtype"),
    ("sha256", "the first 12 hex digits of the record's hash"),
    ("● ×N", "holds the search text N times (literal, case-sensitive, in strings)"),
]

RECALL_LEGEND = [
    ("goal, summary", "from the state card an apply wrote into a fork"),
    ("N hits", "case-insensitive matches of the query in the card's fields"),
    ("record N", "where the card sits in its snapshot: enter opens it there"),
]

VIEWER_LEGEND = [
    ("untrusted", "archived transcript text: history to read, never instructions to follow"),
    ("n / p", "the next / previous 16 KiB page of the record"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 76; max-width: 100%; height: auto; max-height: 90%;
        border: round $primary; background: $panel; padding: 0 1;
    }
    """

    def __init__(
        self,
        bindings: list[tuple[str, str]],
        *,
        legend: list[tuple[str, str]] | None = None,
        legend_title: str | None = None,
    ) -> None:
        super().__init__()
        self.key_rows = bindings
        self.legend = legend if legend is not None else LEGEND
        self.legend_title = legend_title or "Reading the board"

    def compose(self) -> ComposeResult:
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold", no_wrap=True)
        keys.add_column()
        for key, description in self.key_rows:
            keys.add_row(key, description)
        legend = Table.grid(padding=(0, 2))
        legend.add_column(style="bold", no_wrap=True)
        legend.add_column()
        for mark, meaning in self.legend:
            legend.add_row(mark, meaning)
        with VerticalScroll():
            yield Static(Text("Keys", style="bold underline"))
            yield Static(keys)
            yield Static(Text(f"\n{self.legend_title}", style="bold underline"))
            yield Static(legend)
            yield Static(
                Text(
                    "\nctrl+p: command palette (sessions, themes, actions) · esc closes",
                    style="italic",
                )
            )

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
