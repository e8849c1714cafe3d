"""The plan preview remembers, between runs, its record-diff mode and the strategy last picked
there (ui-state.json beside config.toml): two apps, one after the other, over one config."""

from __future__ import annotations

from collections.abc import Callable

import orjson
from textual.pilot import Pilot
from textual.widgets import DataTable, Select, Static

from gobtui.adapters.config.paths import config_path
from gobtui.adapters.config.ui_state import UiState, read_state, save_theme, state_path
from gobtui.app import GobtuiApp
from gobtui.screens.eval_screen import EvalScreen
from gobtui.screens.plan_preview import PlanPreviewScreen
from gobtui.screens.record_diff import RecordDiffScreen
from gobtui.services.planning_state import STRATEGY_IDS, next_strategy
from gobtui.view_models.preview_rows import RowChange
from gobtui.widgets.record_pairs import RecordPairs
from tests.gobtui.pilot_helpers import select, until

OVER_TRIGGER = "ledgerly"
DEFAULT = "auto"  # what the demo's sessions are planned with when nothing is remembered


async def open_preview(app: GobtuiApp, pilot: Pilot[None]) -> PlanPreviewScreen:
    await select(app, OVER_TRIGGER)
    await pilot.press("p")
    screen = app.screen
    assert isinstance(screen, PlanPreviewScreen)
    await until(lambda: screen.preview is not None or screen.error is not None, pilot)
    await pilot.pause()
    return screen


async def open_stubbed_diff(
    app: GobtuiApp, pilot: Pilot[None], screen: PlanPreviewScreen
) -> RecordDiffScreen:
    """Enter on the first stubbed record: its diff."""
    assert screen.preview is not None
    screen.query_one(RecordPairs).cursor = next(
        i for i, r in enumerate(screen.preview.rows) if r.change is RowChange.STUBBED
    )
    await pilot.press("enter")
    await pilot.pause()
    diff = app.screen
    assert isinstance(diff, RecordDiffScreen)
    return diff


def figures(screen: PlanPreviewScreen) -> str:
    return str(screen.query_one("#plan-figures", Static).render())


def shows(screen: PlanPreviewScreen, strategy: str) -> bool:
    """The screen's strategy, its selector and the plan on show all agree on `strategy`."""
    return (
        screen.strategy == strategy
        and screen.query_one("#plan-strategy", Select).value == strategy
        and screen.preview is not None
        and screen.preview.figures.strategy == strategy
    )


def written() -> dict[str, object]:
    data = orjson.loads(state_path().read_bytes())
    assert isinstance(data, dict)
    return data


async def test_split_and_strategy_picked_in_one_run_open_the_next_runs_preview(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    picked = next_strategy(DEFAULT, 1)
    first = demo_app_factory()
    async with first.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(first, pilot)
        assert screen.split and shows(screen, DEFAULT)  # nothing remembered yet
        assert not state_path().exists()  # opening is not a choice
        await pilot.press("s")
        assert not screen.split
        await until(lambda: read_state().diff_split is False, pilot)
        assert written() == {"diff_split": False}
        await pilot.press("right_square_bracket")
        await until(lambda: shows(screen, picked), pilot)
        await until(lambda: read_state().strategy == picked, pilot)
    assert written() == {"diff_split": False, "strategy": picked}
    assert state_path().stat().st_mode & 0o077 == 0

    second = demo_app_factory()
    async with second.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(second, pilot)
        assert not screen.split
        assert shows(screen, picked)
        assert "unified diffs" in figures(screen)
        diff = await open_stubbed_diff(second, pilot, screen)
        assert not diff.split  # the record diff opens in the remembered mode too
        await pilot.press("escape")
        await pilot.pause()
        assert second.screen is screen
    assert written() == {"diff_split": False, "strategy": picked}  # nothing changed: unwritten


async def test_a_split_chosen_in_the_record_diff_is_remembered_and_the_theme_kept(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    save_theme("nord")  # as an earlier run's palette pick left it
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot)
        await open_stubbed_diff(app, pilot, screen)
        await pilot.press("s", "escape")
        await until(lambda: app.screen is screen and not screen.split, pilot)
        await until(lambda: read_state().diff_split is False, pilot)
        # Back on the preview, the same run: a second preview opens unified as well.
        await pilot.press("escape")
        again = await open_preview(app, pilot)
        assert again is not screen and not again.split
    assert written() == {"theme": "nord", "diff_split": False}


async def test_a_strategy_opened_from_eval_wins_and_is_not_a_pick(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    remembered = next_strategy(DEFAULT, 1)
    opened = next(s for s in STRATEGY_IDS if s not in (DEFAULT, remembered))
    state_path().parent.mkdir(parents=True, exist_ok=True)
    state_path().write_bytes(orjson.dumps({"strategy": remembered}))
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await select(app, OVER_TRIGGER)
        await pilot.press("e")
        evaluation = app.screen
        assert isinstance(evaluation, EvalScreen)
        await until(lambda: bool(evaluation.rows) and not evaluation.running, pilot)
        table = evaluation.query_one(DataTable)
        table.move_cursor(row=table.get_row_index(opened))
        await pilot.pause()
        await pilot.press("enter")
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        await until(lambda: shows(preview, opened), pilot)
        await pilot.press("escape", "escape")  # back to the board, then `p`: the remembered one
        fresh = await open_preview(app, pilot)
        await until(lambda: shows(fresh, remembered), pilot)
    assert written() == {"strategy": remembered}


async def test_a_bad_remembered_strategy_falls_back_and_keeps_the_split(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    state_path().parent.mkdir(parents=True, exist_ok=True)
    state_path().write_bytes(b'{"theme": "nord", "diff_split": false, "strategy": "gone"}')
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot)
        assert not screen.split and shows(screen, DEFAULT)
    assert app.remembered.state == UiState(theme="nord", diff_split=False, strategy=None)


async def test_a_strategy_config_toml_sets_for_the_session_wins_over_the_remembered_one(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    configured, remembered = [s for s in STRATEGY_IDS if s != DEFAULT][:2]
    state_path().parent.mkdir(parents=True, exist_ok=True)
    state_path().write_bytes(orjson.dumps({"strategy": remembered}))
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        session_id = (await select(app, OVER_TRIGGER)).summary.session_id
        config_path().write_text(f'[sessions."{session_id}"]\nstrategy = "{configured}"\n')
        screen = await open_preview(app, pilot)
        await until(lambda: shows(screen, configured), pilot)
    assert written() == {"strategy": remembered}  # not a pick: the remembered one stays
