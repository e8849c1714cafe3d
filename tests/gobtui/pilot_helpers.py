"""Helpers shared by the Pilot tests: poll a condition, select a demo session, collect
toasts."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any

from rich.console import Console
from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import WorkerState

from gobtui.app import GobtuiApp
from gobtui.core.board import BoardRow
from gobtui.widgets.detail import DetailPane


async def until(predicate: Callable[[], bool], pilot: Pilot[None], timeout: float = 30.0) -> None:
    """Let the app run until `predicate` holds; fail after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)


def on_top(app: App[Any]) -> Screen[Any]:
    """The screen shown now, read afresh: after `assert app.screen is x` mypy keeps app.screen
    narrowed to x's type across the keypresses that change it."""
    return app.screen


async def workers_done(app: App[None], timeout: float = 30.0) -> None:
    """Every worker of the app finished, those cancelled on the way included (Textual's
    wait_for_complete raises WorkerCancelled for one, as an exclusive worker started again
    cancels the one before: how often depends on the machine's load)."""

    async def wait() -> None:
        while pending := [w for w in app.workers if w.state in _UNFINISHED]:
            await asyncio.gather(*(w.wait() for w in pending), return_exceptions=True)

    await asyncio.wait_for(wait(), timeout)


_UNFINISHED = frozenset({WorkerState.PENDING, WorkerState.RUNNING})


async def select(app: GobtuiApp, project: str) -> BoardRow:
    """After the first paint, put the cursor on the session of `project`."""
    await asyncio.wait_for(app.first_paint.wait(), timeout=30)
    row = next(r for r in app.sessions_screen.rows.values() if r.project == project)
    assert app.sessions_screen.select_session(row.key)
    return row


class Toasts:
    """Collects every notification the app raises (toasts are off under run_test)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.seen.append(f"{message.notification.title}: {message.notification.message}")

    def has(self, text: str) -> bool:
        return any(text in toast for toast in self.seen)


def plain(widget: Static) -> str:
    """What a Static shows (Text or a Rich table) as plain text."""
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(widget.content)
    return console.export_text()


def detail_text(app: GobtuiApp) -> str:
    """The board's detail pane, as plain text."""
    pane = app.sessions_screen.query_one(DetailPane)
    return plain(pane.query_one("#detail-facts", Static))
