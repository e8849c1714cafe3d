"""Snapshots of the conversation screen at 80x24 and 120x36 on the frozen demo home: a Claude
session as it opens (everything folded), the same with a search (a fold opened on its match,
the current match marked) and a Codex session. Every picture waits for the screen's workers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from gobtui.app import GobtuiApp
from gobtui.screens.conversation import ConversationScreen
from tests.gobtui.pilot_helpers import until, workers_done

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 36), id="120x36")]
CLAUDE = "dotfiles"
CODEX = "notebooks"


async def in_conversation(pilot: Pilot[None], project: str) -> ConversationScreen:
    app = pilot.app
    assert isinstance(app, GobtuiApp)
    await asyncio.wait_for(app.first_paint.wait(), timeout=30)
    await asyncio.wait_for(app.history_complete.wait(), timeout=30)
    row = next(r for r in app.sessions_screen.rows.values() if r.project == project)
    screen = ConversationScreen(row.summary)
    await app.push_screen(screen)
    await until(lambda: screen.entries is not None, pilot)
    await settle(pilot)
    return screen


async def settle(pilot: Pilot[None]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


def snap(
    snap_compare: Callable[..., bool],
    app: GobtuiApp,
    size: tuple[int, int],
    run: Callable[[Pilot[None]], object],
) -> bool:
    return snap_compare(app, terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES)
def test_conversation_claude_folded(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await in_conversation(pilot, CLAUDE)
        await pilot.press("j", "j", "j")  # the cursor on a tool call
        await settle(pilot)

    assert snap(snap_compare, demo_app_factory(), size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_conversation_claude_search(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        screen = await in_conversation(pilot, CLAUDE)
        await pilot.press("slash", *"install.sh", "enter")
        await until(lambda: screen.searching is None and screen.result is not None, pilot)
        await pilot.press("n", "n")
        await settle(pilot)

    assert snap(snap_compare, demo_app_factory(), size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_conversation_codex_opened_result(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        screen = await in_conversation(pilot, CODEX)
        entries = screen.entries or []
        result = next(i for i, e in enumerate(entries) if e.kind.value == "tool_result")
        await pilot.press(*["j"] * result, "enter")
        await settle(pilot)

    assert snap(snap_compare, demo_app_factory(), size, run_before)
