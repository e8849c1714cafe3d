"""The key footer: one rebuild for a burst of binding changes, showing the bindings as they are
once it runs."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from gobtui.widgets.footer import KeyFooter


class Pane(Static, can_focus=True):
    def __init__(self, key: str, description: str, *, id: str) -> None:
        super().__init__(id=id)
        self._bindings.bind(key, "app.bell", description)


class TwoPanes(App[None]):
    BINDINGS = [Binding("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Pane("a", "Alpha", id="one")
        yield Pane("b", "Beta", id="two")
        yield KeyFooter(compact=True)


def shown(app: App[None]) -> set[str]:
    return {key.description for key in app.query(FooterKey)}


async def test_a_burst_of_binding_changes_rebuilds_the_footer_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rebuilds = 0
    rebuild = KeyFooter.recompose

    async def counted(footer: KeyFooter) -> None:
        nonlocal rebuilds
        rebuilds += 1
        await rebuild(footer)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    app = TwoPanes()
    async with app.run_test() as pilot:
        await pilot.pause()
        app.query_one("#one").focus()
        await pilot.pause()
        assert "Alpha" in shown(app) and "Beta" not in shown(app)
        rebuilds = 0
        for _ in range(5):  # several changes before the footer gets to them
            app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == 1  # (Textual's Footer: five)
        app.query_one("#two").focus()
        await pilot.pause()
        await pilot.pause()
        assert "Beta" in shown(app) and "Alpha" not in shown(app) and "Quit" in shown(app)
        rebuilds = 0
        app.query_one("#one").focus()  # a later change rebuilds it again
        await pilot.pause()
        await pilot.pause()
        assert rebuilds >= 1 and "Alpha" in shown(app) and "Beta" not in shown(app)
