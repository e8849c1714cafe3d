"""A yes/no modal that says exactly what will be written where, before anything is.

Keyboard first: y confirms, n, esc or q cancels, and enter presses the focused button, which
starts on the confirming one; tab or the arrows move between the buttons. A mouse click works
as well.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gobtui.core.sanitize import terminal_safe


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape,q", "answer(False)", "No", id="confirm.no"),
        Binding("left,right", "app.focus_next", "Other button", show=False),
    ]

    def __init__(self, title: str, question: str, *, yes: str = "Publish", no: str = "Cancel"):
        super().__init__()
        self.title_text = title
        self.question = question
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box") as box:
            box.border_title = self.title_text
            yield Static(Text(terminal_safe(self.question, multiline=True)), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(
                    f"{self.yes_label} (y)", variant="primary", compact=True, id="confirm-yes"
                )
                yield Button(f"{self.no_label} (n)", compact=True, id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-yes", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)
