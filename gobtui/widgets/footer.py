"""The key bar: Textual's Footer, rebuilt once per burst of binding changes, and fitted to
its width by leaving out whole keys (least needed first) instead of cutting one in half."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

LEAST_NEEDED = ("quit", "app.quit", "command_palette", "cycle_provider")
"""Actions whose keys go first when the bar is too narrow: q and ctrl+p are known to all
and listed by ? help; the provider filter is the board's least used. Then keys go from the
right end, so the first ones (filter, sort, the session's actions) stay longest."""
KEPT_LONGEST = ("help", "app.help")
"""? help lists every key the bar leaves out, so it is the last to go."""


def key_cells(key: FooterKey) -> int:
    """A key's width in a compact footer: "k Description" and the margin (or, for the
    palette's key docked right, the border) beside it."""
    label = cell_len(key.key_display)
    if key.description:
        label += 1 + cell_len(key.description)
    return label + 1


def fitted(keys: list[FooterKey], width: int) -> set[int]:
    """The indexes of `keys` to leave out so the rest fit in `width` cells."""
    total = sum(key_cells(k) for k in keys) - 1  # the last key needs no margin
    order = [i for name in LEAST_NEEDED for i, k in enumerate(keys) if k.action == name]
    last = [i for i, k in enumerate(keys) if k.action in KEPT_LONGEST]
    order += [i for i in reversed(range(len(keys))) if i not in order and i not in last]
    order += last
    dropped: set[int] = set()
    for index in order:
        if total <= width:
            break
        dropped.add(index)
        total -= key_cells(keys[index])
    return dropped


class KeyFooter(Footer):
    """A Footer that queues one rebuild however many times the bindings change before it runs.

    Textual's Footer queues a rebuild (every key widget composed and styled again) for each
    change; a screen's start changes its bindings several times in a row (focus, the table's
    rows), each a rebuild the first paint would wait for. The queued rebuild reads the
    bindings as they are when it runs, so one is enough.
    """

    _rebuild_queued = False
    _fitted_width = 0

    def compose(self) -> ComposeResult:
        widgets: list[Widget] = list(super().compose())
        keys = [w for w in widgets if isinstance(w, FooterKey)]
        self._fitted_width = width = self.size.width
        dropped = {id(keys[i]) for i in fitted(keys, width)} if width else set()
        yield from (w for w in widgets if id(w) not in dropped)

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._fitted_width and self._bindings_ready:
            self._rebuild_queued = True
            self.call_after_refresh(self.recompose)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if self._rebuild_queued and screen is self.screen:
            return
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._rebuild_queued = True  # (what Footer.bindings_changed queues on)

    async def recompose(self) -> None:
        self._rebuild_queued = False  # a change from here on queues another
        await super().recompose()
