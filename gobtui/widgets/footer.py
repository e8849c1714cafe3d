"""The board's key bar: Textual's Footer, rebuilt once per burst of binding changes."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A Footer that queues one rebuild however many times the bindings change before it runs.

    Textual's Footer queues a rebuild (every key widget composed and styled again) for each
    change; a screen's start changes its bindings several times in a row (focus, the table's
    rows), each a rebuild the first paint would wait for. The queued rebuild reads the
    bindings as they are when it runs, so one is enough.
    """

    _rebuild_queued = False

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if self._rebuild_queued and screen is self.screen:
            return
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._rebuild_queued = True  # (what Footer.bindings_changed queues on)

    async def recompose(self) -> None:
        self._rebuild_queued = False  # a change from here on queues another
        await super().recompose()
