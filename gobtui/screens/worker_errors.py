"""A screen's background work, and its failures handled in one place.

Textual ends the whole app when a worker raises (exit_on_error), with a traceback: one bad
transcript or an OSError nobody foresaw would close the dashboard. Every screen's thread
worker is made with `screen_work` instead, which leaves the failure to the screen: Textual
tells the worker's screen (Worker.StateChanged), WorkerErrors turns the exception into one
line, and the screen's `worker_failed` puts it where that screen shows its errors (its own
Failed message, so its loading state ends as for an expected error), an error modal by
default. Expected errors stay the workers' own (a VaultError says which code it is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import work
from textual.app import App
from textual.worker import Worker, WorkerState

UNEXPECTED_CODE = "unexpected"
"""The code an error modal shows for a failure no worker foresaw."""


def one_line_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def screen_work(group: str, *, thread: bool = True) -> Callable[[Any], Any]:
    """@work for a screen's background job: exclusive in its group (a newer request cancels
    an older one), and its failure the screen's to report (WorkerErrors), never the app's end."""
    return work(thread=thread, exclusive=True, group=group, exit_on_error=False)


class WorkerErrors:
    """Mix into a Screen (or the App) whose workers are made with `screen_work`."""

    app: App[Any]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state is WorkerState.ERROR and worker.error is not None:
            self.worker_failed(worker.group, one_line_error(worker.error))

    def worker_failed(self, group: str, message: str) -> None:
        """Show a failure of the worker group `group` (one line, from the exception)."""
        from gobtui.dialogs.error import ErrorScreen

        self.app.push_screen(ErrorScreen("Something went wrong", message, code=UNEXPECTED_CODE))
