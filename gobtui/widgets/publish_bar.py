"""One line above the footer while an apply or undo runs: what it does, and how far the
snapshot of the source has got (big files take a moment). Hidden when nothing runs."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static


@dataclass(frozen=True, slots=True)
class PublishState:
    what: str
    done: int = 0
    total: int | None = None
    """Bytes to snapshot; None while it is not known (planning, restoring)."""


class PublishBar(Horizontal):
    DEFAULT_CSS = """
    PublishBar { height: 1; padding: 0 1; background: $panel; display: none; }
    PublishBar > ProgressBar { width: auto; }
    PublishBar > Static { width: 1fr; color: $text-muted; padding-left: 1; }
    """

    def compose(self) -> ComposeResult:
        yield ProgressBar(show_eta=False, id="publish-progress")
        yield Static(id="publish-what")

    def on_mount(self) -> None:
        # A screen opened mid-run picks up where the run is.
        controller = getattr(self.app, "publishing", None)
        self.show_state(controller.state if controller is not None else None)

    def show_state(self, state: PublishState | None) -> None:
        self.display = state is not None
        if state is None:
            return
        self.query_one(ProgressBar).update(total=state.total, progress=state.done)
        self.query_one("#publish-what", Static).update(state.what)
