"""Auto-prepare on the board, under Pilot on the demo home: off until the user turns it on (a
key or the palette); a pass then publishes a verified fork of the idle session over its
trigger, says so on the watcher line and in a toast, and never touches a source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static

from gobtui.adapters.config.paths import config_path
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.app import GobtuiApp
from gobtui.core.model import Provider
from tests.gobtui.pilot_helpers import Toasts, until


def files(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(root.rglob("*.jsonl"))}


def line(app: GobtuiApp) -> str:
    return str(app.sessions_screen.query_one("#watcher", Static).render())


async def test_auto_prepare_is_off_until_turned_on_then_prepares_a_fork(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        await app.first_paint.wait()
        before = files(frozen_home / "demo")
        assert line(app).startswith("auto-prepare off · A turns it on")
        await pilot.pause(0.3)
        assert files(frozen_home / "demo") == before  # off: nothing is ever written

        await pilot.press("A")
        await until(lambda: app.auto_prepare.state.last_pass is not None, pilot)
        state = app.auto_prepare.state
        assert (state.over, state.ready, state.prepared, state.live) == (1, 1, 1, 0)
        assert "auto-prepare ON" in line(app) and "1 prepared" in line(app)
        after = files(frozen_home / "demo")
        (fork,) = set(after) - set(before)
        assert all(after[path] == data for path, data in before.items())  # sources untouched
        fork_id = parse_transcript(Provider.CLAUDE, str(fork)).session_id
        assert toasts.has(f"Fork prepared: ledgerly: resume with claude --resume {fork_id}")

        app.auto_prepare.run_pass()  # a second pass: the fork is ready, nothing new
        await until(lambda: not app.auto_prepare.state.running, pilot)
        assert set(files(frozen_home / "demo")) == set(after)
        assert app.auto_prepare.state.prepared == 1

        await pilot.press("A")
        assert line(app).startswith("auto-prepare off")


async def test_the_palette_turns_it_on_and_a_failing_pass_says_why(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        assert line(app) == "auto-prepare off · A: on"  # the short words at 80 columns
        config_path().parent.mkdir(parents=True, exist_ok=True)
        config_path().write_text("[policy\n")  # broken after start: the pass cannot resolve
        await pilot.press("ctrl+p")
        await pilot.press(*"auto-prepare")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(lambda: bool(app.auto_prepare.state.error), pilot)
        assert "pass failed" in line(app)
        assert app.is_running


async def test_the_line_says_why_sessions_over_their_trigger_got_no_fork(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    """A pass that prepares nothing for a session over its trigger says why, in words (and
    in short at 80 columns)."""
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("[policy]\nmin_savings_tokens = 900000\n")
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        before = files(frozen_home / "demo")
        await pilot.press("A")
        await until(lambda: app.auto_prepare.state.last_pass is not None, pilot)
        state = app.auto_prepare.state
        assert (state.over, state.ready, state.prepared) == (1, 0, 0)
        assert "skipped: 1 nothing to cut" in line(app), line(app)
        assert files(frozen_home / "demo") == before
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "1 skipped" in line(app), line(app)
