"""Snapshot tests of every dashboard screen at 80x24 and 120x36, on the frozen demo home."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.pilot import Pilot

from gobtui.app import GobtuiApp
from tests.gobtui.pilot_helpers import workers_done

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 36), id="120x36")]


async def loaded(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, GobtuiApp)
    await asyncio.wait_for(app.first_paint.wait(), timeout=30)
    await asyncio.wait_for(app.history_complete.wait(), timeout=30)
    await settled(pilot)


async def settled(pilot: Pilot[None]) -> None:
    """The workers done (the detail pane's Fills line is read in one) and their news shown."""
    await workers_done(pilot.app)
    await pilot.pause()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_sessions_screen(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=loaded)


@pytest.mark.parametrize("size", SIZES)
def test_sessions_sorted_by_occupancy_second_row(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await loaded(pilot)
        await pilot.press("s", "down")
        await settled(pilot)

    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_codex_only_with_text_filter(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await loaded(pilot)
        await pilot.press("f", "f", "slash")
        await pilot.press(*"gpt")
        await pilot.press("enter")
        await settled(pilot)

    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_help_screen(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_help_status_legend(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    """`?` scrolled to its end: the board's legend, every status mark with its meaning."""

    async def run_before(pilot: Pilot[None]) -> None:
        await loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        pilot.app.screen.query_one(VerticalScroll).scroll_end(animate=False)
        await pilot.pause()

    assert snap_compare(demo_app_factory(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_empty_home(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
    frozen_home: Path,
) -> None:
    empty = frozen_home / "empty"  # under HOME: the message names ~/empty/..., the same each run
    empty.mkdir()
    (empty / "claude").mkdir()
    (empty / "codex").mkdir()
    app = demo_app_factory(
        demo=False, claude_home=str(empty / "claude"), codex_home=str(empty / "codex")
    )
    assert snap_compare(app, terminal_size=size, run_before=loaded)
