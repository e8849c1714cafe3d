"""Keys typed in one burst land where a slow typist's would (a newcomer pass at 80x24 found
`/dov` opening the vault, `]]]` moving once, `ay` leaving the question open).

The keys are posted all at once, as a terminal delivers a fast burst: each before the app
has handled the one before it (Pilot's press() waits between keys, which hides the bug).
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input

from gobtui.app import GobtuiApp
from gobtui.dialogs.confirm import ConfirmScreen
from gobtui.screens.plan_preview import PlanPreviewScreen
from gobtui.screens.vault import VaultScreen
from gobtui.services.planning_state import STRATEGY_IDS, next_strategy
from tests.gobtui.pilot_helpers import select, until

OVER_TRIGGER = "ledgerly"


def burst(app: GobtuiApp, keys: str) -> None:
    """The keys of `keys` (characters) posted at once, named as the terminal driver names
    them ("/" is "slash")."""
    for char in keys:
        app.post_message(events.Key(_character_to_key(char), char))


async def test_a_burst_after_the_slash_is_typed_into_the_filter(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        burst(app, "/dov")  # d, o and v are board keys too (v opens the vault)
        await until(lambda: app.query_one("#filter", Input).value == "dov", pilot)
        await pilot.pause()
        assert not isinstance(app.screen, VaultScreen)
        assert app.sessions_screen.filter_text == "dov"


async def test_three_brackets_in_a_burst_move_three_strategies(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await select(app, OVER_TRIGGER)
        await pilot.press("p")
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        await until(lambda: preview.preview is not None, pilot)
        start = preview.strategy
        expected = next_strategy(next_strategy(next_strategy(start, 1), 1), 1)
        assert expected in STRATEGY_IDS and expected != start
        burst(app, "]]]")
        await until(lambda: preview.strategy == expected, pilot)


async def test_a_yes_typed_with_the_apply_answers_its_question(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        row = await select(app, OVER_TRIGGER)
        burst(app, "ay")  # y arrives while the plan is still being made
        await until(lambda: app.last_fork(row.key) is not None and not app.publishing.busy, pilot)
        assert not any(isinstance(screen, ConfirmScreen) for screen in app.screen_stack)
