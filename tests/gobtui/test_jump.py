"""`t` on the board jumps to the tmux pane of the selected session's client: a private tmux
server runs a real process holding the demo session's transcript open, and the app (told it
runs in that server through its environment) selects that pane, or says why it cannot."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gobtui.app import GobtuiApp
from tests.gobtui.pilot_helpers import Toasts, select, until
from tests.tmux_server import Server, tmux_server, wait_for  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


async def test_t_selects_the_pane_whose_process_holds_the_transcript(
    demo_app_factory: Callable[..., GobtuiApp], server: Server
) -> None:
    app = demo_app_factory(environ=server.env)
    toasts = Toasts()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        row = await select(app, "ledgerly")
        command, ready = server.holder(Path(row.summary.path))
        server.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", *command)
        target = server.tmux("display-message", "-p", "-t", "t:0", "#{pane_id}")
        server.tmux("new-window", "-t", "t:", "sleep", "60")
        wait_for(ready.exists, "the holder opening the transcript")
        assert server.active() != f"0 {target}"

        await pilot.press("t")
        await until(lambda: toasts.has("jumped to pane t:0.0"), pilot)

        assert server.active() == f"0 {target}"


async def test_t_outside_tmux_says_why_there_is_no_pane(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory(environ={})
    toasts = Toasts()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        await select(app, "ledgerly")
        await pilot.press("t")
        await until(lambda: toasts.has("No pane to jump to:"), pilot)
        assert toasts.has("No pane to jump to: gobtui is not running inside tmux.")
