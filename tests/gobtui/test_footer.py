"""The key footer: one rebuild for a burst of binding changes, showing the bindings as they are
once it runs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from gobtui.app import GobtuiApp
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


def footer_line(app: App[None]) -> list[str]:
    """The keys the footer shows, as "k Description", left to right (the docked palette last)."""
    keys = sorted(app.query(FooterKey), key=lambda k: k.region.x)
    return [f"{k.key_display} {k.description}".strip() for k in keys if k.display]


@pytest.mark.parametrize(
    ("width", "wanted", "left_out"),
    [
        (80, ["/ Find", "l Live", "R Resume", "o Read", "t Jump", "? Help"], ["q Quit", "f Prov"]),
        (120, ["f Prov", "q Quit", "^p palette", "c Copy"], []),
        (56, ["/ Find", "l Live", "s Sort", "R Resume", "p Plan", "? Help"], ["c Copy", "t Jump"]),
    ],
)
async def test_the_board_footer_shows_whole_keys_that_fit_least_needed_left_out(
    demo_app_factory: Callable[..., GobtuiApp],
    width: int,
    wanted: list[str],
    left_out: list[str],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(width, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.pause()
        await pilot.pause()
        line = footer_line(app)
        assert all(k in line for k in wanted), " | ".join(line)
        assert not any(k in line for k in left_out), line
        footer = app.query_one(KeyFooter)
        shown = [k for k in footer.query(FooterKey) if k.display]
        # Every key shown is whole: none reaches past the footer's right edge.
        assert all(k.region.right <= footer.region.right for k in shown), line


async def test_a_narrower_pane_refits_the_footer(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.pause()
        assert "q Quit" in footer_line(app)
        await pilot.resize_terminal(70, 24)
        await pilot.pause()
        await pilot.pause()
        line = footer_line(app)
        assert "q Quit" not in line and "/ Find" in line
