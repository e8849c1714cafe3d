"""Snapshots of the plan preview, the record diff (split and unified) and the eval table, at
80x24 and 120x36, on the frozen demo home. Each waits for its worker's answer first, and the
eval hides timings in the demo, so the pictures do not depend on the machine."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from textual.pilot import Pilot

from gobtui.app import GobtuiApp
from gobtui.screens.eval_screen import EvalScreen
from gobtui.screens.plan_preview import PlanPreviewScreen
from tests.gobtui.pilot_helpers import until, workers_done

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 36), id="120x36")]
OVER_TRIGGER = "ledgerly"
BELOW_TRIGGER = "pg-migrate"  # idle, so auto picks a file plan with a state card


async def on_session(pilot: Pilot[None], project: str) -> GobtuiApp:
    app = pilot.app
    assert isinstance(app, GobtuiApp)
    await asyncio.wait_for(app.first_paint.wait(), timeout=30)
    await asyncio.wait_for(app.history_complete.wait(), timeout=30)
    row = next(r for r in app.sessions_screen.rows.values() if r.project == project)
    app.sessions_screen.select_session(row.key)
    await pilot.pause()
    return app


async def planned(pilot: Pilot[None]) -> PlanPreviewScreen:
    screen = pilot.app.screen
    assert isinstance(screen, PlanPreviewScreen)
    await until(lambda: screen.preview is not None, pilot)
    await workers_done(pilot.app)
    await pilot.pause()
    return screen


async def replanned(pilot: Pilot[None], screen: PlanPreviewScreen, key: str) -> None:
    """Press a key that plans again, and wait for the new plan, not the one shown."""
    before = screen.preview
    await pilot.press(key)
    await until(lambda: screen.preview is not before, pilot)
    await planned(pilot)


def preview_then(
    *keys: str, project: str = OVER_TRIGGER
) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def run_before(pilot: Pilot[None]) -> None:
        await on_session(pilot, project)
        await pilot.press("p")
        await planned(pilot)
        for key in keys:
            screen = pilot.app.screen
            if key == "t" and isinstance(screen, PlanPreviewScreen):
                await replanned(pilot, screen, key)
            else:
                await pilot.press(key)
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_plan_preview(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=preview_then())


@pytest.mark.parametrize("size", SIZES)
def test_plan_preview_ignoring_the_trigger(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    run_before = preview_then("t", "end", project=BELOW_TRIGGER)
    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_record_diff_split(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    # Row 1 of the ledgerly preview is its first stubbed tool result.
    run_before = preview_then("down", "enter")
    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_record_diff_unified(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    run_before = preview_then("down", "enter", "s")
    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_eval_table(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await on_session(pilot, OVER_TRIGGER)
        await pilot.press("e")
        screen = pilot.app.screen
        assert isinstance(screen, EvalScreen)
        await until(lambda: bool(screen.rows) and not screen.running, pilot)
        await workers_done(pilot.app)
        await pilot.pause()

    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)
