"""A modal for a failure the user has to read: its title, one line of why, and its code.

Never a traceback: callers pass the one-line message of a PublishError or VaultError.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from gobtui.core.sanitize import terminal_safe


class ErrorScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,enter,q", "close", "Close", id="error.close"),
    ]

    def __init__(self, title: str, message: str, *, code: str | None = None, hint: str = ""):
        super().__init__()
        self.title_text = title
        self.message = message
        self.code = code
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="error-box") as box:
            box.border_title = self.title_text
            box.border_subtitle = "esc · enter closes"
            yield Static(Text(terminal_safe(self.message, multiline=True)), id="error-message")
            notes = Text()
            if self.code:
                notes.append(f"[{self.code}]")
            if self.hint:
                notes.append(("  " if self.code else "") + self.hint)
            yield Static(notes, id="error-notes")

    def on_mount(self) -> None:
        self.query_one("#error-notes", Static).display = bool(self.code or self.hint)

    def action_close(self) -> None:
        self.dismiss(None)
