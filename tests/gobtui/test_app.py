"""The real app under Pilot: live updates, keys, palette, resume, alerts, narrow panes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Static

from gobtui.app import GobtuiApp, make_app
from gobtui.app.process import terminal_check
from gobtui.core.alerts import AlertChannel, AlertEvent, AlertSettings
from gobtui.core.board import SortKey
from gobtui.core.model import Coverage, Provider
from gobtui.core.status import Status
from gobtui.services.resume import Ran
from gobtui.services.run_settings import AppConfig
from gobtui.view_models import format as fmt
from gobtui.widgets.occupancy import TRIGGER, occupancy_bar
from gobtui.widgets.palette import band_styles
from gobtui.widgets.sessions_table import SessionsTable
from tests.gobtui.conftest import FROZEN_NOW
from tests.gobtui.pilot_helpers import Toasts, detail_text, plain, until

CLAUDE_FIXTURE = "claude/marot__spotter__short.jsonl"
CODEX_FIXTURE = "codex/kvsankar__agent-history__session-01.jsonl"


BRACKETED = (
    "madshn__localpush__rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
)


def claude_usage_line(session_id: str, parent: str, uuid: str, input_tokens: int) -> bytes:
    record = {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": session_id,
        "timestamp": "2026-11-29T10:00:00.000Z",
        "message": {
            "id": f"msg_{uuid}",
            "model": "claude-opus-4-6",
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 10,
            },
        },
    }
    return orjson.dumps(record) + b"\n"


def last_uuid(path: Path) -> str:
    uuid = ""
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("type") in {"user", "assistant"} and record.get("uuid"):
            uuid = record["uuid"]
    return uuid


@pytest.fixture
def real_home(tmp_path: Path, fixtures_dir: Path) -> tuple[Path, Path, Path]:
    """A Claude home and a Codex home holding copies of real transcripts."""
    claude = tmp_path / "claude"
    codex = tmp_path / "codex"
    session = (
        claude / "projects" / "-home-dev-spotter" / "55604662-cf2d-4b1d-9a30-9d1b5c1b7a11.jsonl"
    )
    session.parent.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / CLAUDE_FIXTURE, session)
    rollout = codex / "sessions" / "2026" / "02" / "23" / "rollout-2026-02-23T12-00-00-x.jsonl"
    rollout.parent.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / CODEX_FIXTURE, rollout)
    return claude, codex, session


def app_for(claude: Path, codex: Path, **overrides: object) -> GobtuiApp:
    settings: dict[str, object] = {
        "claude_home": str(claude),
        "codex_home": str(codex),
        "max_age_secs": None,
        "use_cache": False,
        "watch": False,
    }
    settings.update(overrides)
    return make_app(AppConfig(**settings))  # type: ignore[arg-type]


async def test_an_appended_record_changes_its_row(real_home: tuple[Path, Path, Path]) -> None:
    claude, codex, session = real_home
    app = app_for(claude, codex, watch=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        key = str(session)
        row = app.sessions_screen.rows[key]
        before = row.summary.context_tokens
        assert before is not None and before < 150_000
        table = app.query_one(SessionsTable)
        cell_before = table.get_cell(key, "used").plain
        await asyncio.sleep(0.3)  # let the watcher start
        with session.open("ab") as handle:
            handle.write(
                claude_usage_line(row.summary.session_id, last_uuid(session), "appended-1", 150_000)
            )
        await until(lambda: app.sessions_screen.rows[key].summary.context_tokens == 150_010, pilot)
        await pilot.pause()
        assert table.get_cell(key, "used").plain == "150k/200k"
        assert cell_before != "150k/200k"


async def test_a_big_file_that_appears_later_is_read_whole_too(
    real_home: tuple[Path, Path, Path], fixtures_dir: Path
) -> None:
    """A session (or a fork) over the head-and-tail size that appears after the first pass
    is read whole as well: its records and compactions are the whole file's."""
    claude, codex, _session = real_home
    app = app_for(claude, codex, watch=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        await asyncio.wait_for(app.history_complete.wait(), timeout=30)
        await asyncio.sleep(0.3)  # let the watcher start
        source = fixtures_dir / "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
        late = claude / "projects" / "-home-dev-spotter" / f"{source.name.split('__')[-1]}"
        shutil.copyfile(source, late)
        key = str(late)

        def whole() -> bool:
            row = app.sessions_screen.rows.get(key)
            return row is not None and row.summary.coverage is Coverage.FULL

        await until(whole, pilot, timeout=20)
        summary = app.sessions_screen.rows[key].summary
        assert len(summary.compactions) >= 1  # the boundary lies between the head and the tail
        await asyncio.wait_for(app.history_complete.wait(), timeout=20)


async def test_crossing_the_trigger_raises_a_toast(real_home: tuple[Path, Path, Path]) -> None:
    claude, codex, session = real_home
    app = app_for(claude, codex, watch=True)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await app.first_paint.wait()
        sid = app.sessions_screen.rows[str(session)].summary.session_id
        await asyncio.sleep(0.3)
        with session.open("ab") as handle:
            handle.write(claude_usage_line(sid, last_uuid(session), "appended-2", 190_000))
        await until(lambda: app.sessions_screen.rows[str(session)].over_trigger, pilot)
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("over its 150,300 trigger" in m for m in messages), messages


def claude_prompt_line(session_id: str, parent: str, uuid: str) -> bytes:
    record = {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": session_id,
        "timestamp": "2026-11-29T09:59:00.000Z",
        "message": {"role": "user", "content": "and the coupons?"},
    }
    return orjson.dumps(record) + b"\n"


async def ask_and_answer(app: GobtuiApp, session: Path, pilot: Any, toasts: Toasts) -> str:
    """The user asks (the session is working, no alert yet), the model answers (it waits for
    its user): the session's key, once its row says so."""
    await app.first_paint.wait()
    key = str(session)
    sid = app.sessions_screen.rows[key].summary.session_id
    await asyncio.sleep(0.3)  # let the watcher start
    with session.open("ab") as handle:
        handle.write(claude_prompt_line(sid, last_uuid(session), "asked-1"))
    await until(lambda: app.sessions_screen.rows[key].status is Status.WORKING, pilot)
    assert not toasts.has("Waiting for you")
    with session.open("ab") as handle:
        handle.write(claude_usage_line(sid, "asked-1", "answered-1", 20_000))
    await until(lambda: app.sessions_screen.rows[key].status is Status.WAITING, pilot)
    await pilot.pause()
    return key


async def test_a_session_that_starts_waiting_says_so(real_home: tuple[Path, Path, Path]) -> None:
    claude, codex, session = real_home
    app = app_for(claude, codex, watch=True)
    toasts = Toasts()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        key = await ask_and_answer(app, session, pilot, toasts)
        assert toasts.has("Waiting for you: spotter")
        table = app.query_one(SessionsTable)
        assert table.get_cell(key, "status").plain == "waiting"
        await pilot.press("s", "s", "s", "s", "s")  # activity -> ... -> attention
        assert app.sessions_screen.sort_key is SortKey.ATTENTION
        assert app.sessions_screen.visible_rows()[0].key == key


async def test_alerts_follow_the_config_a_bell_and_no_toast(
    real_home: tuple[Path, Path, Path],
) -> None:
    claude, codex, session = real_home
    alerts = AlertSettings().with_channels(AlertEvent.WAITING, [AlertChannel.BELL])
    app = app_for(claude, codex, watch=True, alerts=alerts)
    rings: list[int] = []
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    toasts = Toasts()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        await ask_and_answer(app, session, pilot, toasts)
        assert rings == [1]
        assert not toasts.has("Waiting for you")


async def test_a_click_on_a_column_header_sorts_by_it_and_again_reverses(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        screen = app.sessions_screen
        table = app.query_one(SessionsTable)

        def header_x(name: str) -> int:
            x = 0
            for key, column in table.columns.items():
                if key.value == name:
                    return x + 1
                x += column.get_render_width(table)
            raise AssertionError(name)

        await pilot.click(SessionsTable, offset=(header_x("used"), 0))
        assert (screen.sort_key, screen.sort_reverse) == (SortKey.TOKENS, False)
        used = [r.summary.context_tokens or 0 for r in screen.visible_rows()]
        assert used == sorted(used, reverse=True) and len(set(used)) > 2
        await pilot.click(SessionsTable, offset=(header_x("used"), 0))
        assert screen.sort_reverse
        assert [r.summary.context_tokens or 0 for r in screen.visible_rows()] == used[::-1]
        keys = [row.key.value for row in table.ordered_rows]
        assert keys == [r.key for r in screen.visible_rows()]
        status = str(screen.query_one("#status", Static).render())
        assert "sort tokens, reversed" in status
        await pilot.click(SessionsTable, offset=(header_x("title"), 0))  # no order of its own
        assert (screen.sort_key, screen.sort_reverse) == (SortKey.TOKENS, True)
        await pilot.press("s")  # the key's cycle starts the next order the usual way round
        assert not screen.sort_reverse and screen.sort_key is not SortKey.TOKENS


async def test_filters_sort_and_text_filter(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        screen = app.sessions_screen
        table = app.query_one(SessionsTable)
        total = table.row_count
        assert total == len(screen.rows) >= 8
        await pilot.press("f")  # Claude only
        assert {r.summary.provider for r in screen.visible_rows()} == {Provider.CLAUDE}
        assert table.row_count == len(screen.visible_rows()) < total
        await pilot.press("f")  # Codex only
        assert {r.summary.provider for r in screen.visible_rows()} == {Provider.CODEX}
        await pilot.press("f", "l")  # all providers, live only
        assert table.row_count == sum(1 for r in screen.rows.values() if r.live) == 2
        await pilot.press("l", "s")  # sort by occupancy
        shares = [r.occupancy or 0 for r in screen.visible_rows()]
        assert shares == sorted(shares, reverse=True)
        # ... and the table shows them in that order (it is sorted by our keys, not cells).
        await pilot.press("f")  # Claude only: a reorder among rows already there
        await pilot.press("f", "f")
        shown = [table.get_row_at(i) for i in range(table.row_count)]
        keys = [row.key.value for row in table.ordered_rows]
        assert keys == [r.key for r in screen.visible_rows()] and len(shown) == len(keys) > 2
        await pilot.press("slash", *"ledger", "enter")
        assert [r.project for r in screen.visible_rows()] == ["ledgerly"]
        status = str(screen.query_one("#status", Static).render())
        assert f"1 of {total} sessions" in status and "“ledger” · sort occupancy" in status
        # The counts are of what is listed: ledgerly is not live, its turn ended (waiting for
        # its user), and it is over its trigger.
        assert "· 0 live · ◆ 1 waiting · 1 over trigger" in status
        await pilot.press("slash", "escape")
        assert table.row_count == total
        status = str(screen.query_one("#status", Static).render())
        assert f" {total} sessions" in status and " of " not in status
        assert "· 2 live · ◆ 5 waiting · ● 1 working · 1 over trigger" in status
        await pilot.press("l")  # the live ones are under their triggers
        status = str(screen.query_one("#status", Static).render())
        assert "2 of" in status and "· 2 live ·" in status and "over" not in status


async def test_cursor_stays_on_its_session_across_updates(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        table = app.query_one(SessionsTable)
        await pilot.press("down", "down", "down")
        chosen = table.selected_key
        assert chosen is not None
        screen = app.sessions_screen
        # the newest session becomes the oldest: activity order changes, the cursor follows
        top = screen.visible_rows()[0].summary
        moved = replace(top, mtime=top.mtime - 10 * 86_400)
        screen.merge([moved], [], FROZEN_NOW)
        await pilot.pause()
        assert table.selected_key == chosen
        assert screen.visible_rows()[-1].key == top.path


async def test_copy_and_resume_the_selected_session(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = demo_app_factory()
    copied: list[str] = []
    ran: list[tuple[list[str], str | None]] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)

    @contextlib.contextmanager
    def no_suspend() -> Iterator[None]:
        yield

    monkeypatch.setattr(app, "suspend", no_suspend)

    def runner(argv: list[str], cwd: str | None) -> Ran:
        ran.append((argv, cwd))
        return Ran(0)

    app.runner = runner
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        row = app.sessions_screen.selected_row()
        assert row is not None and row.summary.cwd
        await pilot.press("c")  # from the session's own directory
        assert copied == [f"cd {row.summary.cwd} && {row.summary.resume_command()}"]
        await pilot.press("enter")
        assert ran and ran[0][0] == row.summary.resume_command().split()
        await pilot.press("R")
        assert len(ran) == 2


async def test_resume_runs_in_the_sessions_directory_and_reports_the_clients_error(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    ran: list[str | None] = []

    @contextlib.contextmanager
    def no_suspend() -> Iterator[None]:
        yield

    monkeypatch.setattr(app, "suspend", no_suspend)

    def failing(argv: list[str], cwd: str | None) -> Ran:
        ran.append(cwd)
        return Ran(1, "Error: No conversation found with session ID: 1234")

    app.runner = failing
    async with app.run_test(size=(80, 24), message_hook=toasts) as pilot:
        await app.first_paint.wait()
        row = app.sessions_screen.selected_row()
        assert row is not None
        here = tmp_path / "project"
        here.mkdir()
        app.resume_session(replace(row.summary, cwd=str(here)))
        await pilot.pause()
        assert ran == [str(here)]
        assert toasts.has("exited with 1: Error: No conversation found with session ID: 1234")
        gone = str(tmp_path / "deleted")
        app.resume_session(replace(row.summary, cwd=gone))
        await pilot.pause()
        assert ran[-1] is None  # not a directory that is gone
        assert toasts.has(f"The session's directory {gone} is gone; resuming from here.")


async def test_palette_finds_a_session_by_project(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        await app.first_paint.wait()
        target = next(r for r in app.sessions_screen.rows.values() if r.project == "pg-migrate")
        await pilot.press("l")  # pg-migrate is idle: hidden by the live-only filter
        assert target not in app.sessions_screen.visible_rows()
        toasts.seen.clear()
        await pilot.press("ctrl+p")
        await pilot.press(*"pg-migrate")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(SessionsTable).selected_key == target.key
        assert not app.sessions_screen.live_only  # cleared to show it, and it says so
        assert toasts.has("Filters cleared to show the session.")


async def test_the_palette_shows_a_title_with_brackets_as_it_is(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    """A Codex title such as "[REDACTED_MESSAGE len=115 sha=…]" is text, not markup."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    rollout = codex / "sessions" / "2026" / "02" / "23" / BRACKETED.split("__")[-1]
    rollout.parent.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / "codex" / BRACKETED, rollout)
    app = app_for(claude, codex)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        (row,) = app.sessions_screen.rows.values()
        assert row.summary.title is not None and row.summary.title.startswith("[REDACTED")
        await pilot.press("ctrl+p")
        await pilot.pause(0.5)
        assert app.is_running
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        shown = [str(option.prompt) for option in palette.query_one(CommandList).options]
        assert any(row.summary.title in text for text in shown)
        await pilot.press(*"REDACTED")
        await pilot.pause(0.5)
        shown = [str(option.prompt) for option in palette.query_one(CommandList).options]
        assert any(row.summary.title in text for text in shown)
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.query_one(SessionsTable).selected_key == row.key


async def test_narrow_pane_drops_columns_instead_of_wrapping(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        table = app.query_one(SessionsTable)
        wide = [str(k.value) for k in table.columns]
        assert "model" in wide and "burn" in wide
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        narrow = [str(k.value) for k in table.columns]
        assert "model" not in narrow and "burn" not in narrow
        assert {"project", "title", "used", "occupancy", "eta", "last"} <= set(narrow)
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= 80
        # A wide pane gives model and project names room to show whole.
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        widths = {str(k.value): c.width for k, c in table.columns.items()}
        assert widths["model"] == 26 and widths["project"] == 22 and widths["title"] > 60
        models = [table.get_cell(key, "model").plain for key in app.sessions_screen.rows]
        assert models and not any(model.endswith("…") for model in models)


async def test_help_opens_and_closes(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.press("question_mark")
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
        assert app.screen is app.sessions_screen


async def test_keys_can_be_remapped_by_binding_id(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory(keymap={"sessions.live": "o"})
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        await pilot.press("o")
        assert app.sessions_screen.live_only


@pytest.mark.parametrize("theme", ["ansi-dark", "ansi-light", "textual-light"])
async def test_themes_render(demo_app_factory: Callable[..., GobtuiApp], theme: str) -> None:
    app = demo_app_factory(theme=theme)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.pause()
        assert app.theme == theme
        assert app.query_one(SessionsTable).row_count > 0
        # The trigger's mark stands out from every bar colour (ansi-dark's accent is green).
        styles = band_styles(app)
        bands = {styles.ok.color, styles.warn.color, styles.alert.color}
        assert styles.marker.color not in bands
        row = next(r for r in app.sessions_screen.rows.values() if r.trigger_share is not None)
        bar = occupancy_bar(row, 20, styles)
        marks = [span.style for span in bar.spans if TRIGGER in bar.plain[span.start : span.end]]
        assert marks == [styles.marker]


async def test_demo_mode_moves_on_its_own(frozen_home: Path) -> None:
    clock = [FROZEN_NOW]
    app = make_app(
        AppConfig(
            demo=True,
            demo_root=frozen_home / "demo",
            clock=lambda: clock[0],
            use_cache=False,
            max_age_secs=None,
        )
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        assert app.demo_home is not None
        live = [str(p) for p in app.demo_home.live_paths]
        before = {p: app.sessions_screen.rows[p].summary.context_tokens for p in live}
        clock[0] += 5
        await until(
            lambda: all(
                app.sessions_screen.rows[p].summary.context_tokens != before[p] for p in live
            ),
            pilot,
            timeout=15,
        )
    assert os.path.exists(live[0])


async def test_a_hung_up_terminal_ends_the_app(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    """Its tmux pane closed and no SIGHUP came (started through make): the app exits
    instead of reading the dead terminal's end of file forever."""
    app = demo_app_factory()
    alive = [True]
    app.terminal_alive = lambda: alive[0]
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.pause(1.2)  # a check or more went by
        assert app.is_running
        alive[0] = False
        for _ in range(100):
            if not app.is_running:
                break
            await asyncio.sleep(0.05)
        assert not app.is_running


def test_the_terminal_check_sees_a_hangup(monkeypatch: pytest.MonkeyPatch) -> None:
    master, slave = pty.openpty()
    try:
        monkeypatch.setattr(sys, "__stdin__", SimpleNamespace(fileno=lambda: slave))
        alive = terminal_check()
        assert alive()
        os.close(master)  # the pane is gone
        master = -1
        assert not alive()
    finally:
        if master >= 0:
            os.close(master)
        os.close(slave)


async def test_the_table_redraws_only_the_ages_that_read_differently(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle, the board costs a cell update a second only while some age is in seconds."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        table = app.sessions_screen.query_one(SessionsTable)
        newest = max(row.summary.mtime for row in table._rows)
        now = newest + 3600 + 1  # every age in hours or days
        table.tick(now)
        updates: list[str] = []
        real_update = table.update_cell

        def counted(row_key: object, column_key: object, value: object, **kw: object) -> None:
            updates.append(str(column_key))
            real_update(row_key, column_key, value)  # type: ignore[arg-type]

        monkeypatch.setattr(table, "update_cell", counted)
        table.tick(now + 1)  # one second on: no age reads differently
        assert updates == []
        table.tick(now + 3600)  # an hour on: the newest session's age does
        assert updates and set(updates) == {"last"}
        assert len(updates) < len(table._rows)
        await pilot.pause()


async def test_ages_in_the_table_and_the_detail_pane_tick_together(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """One clock: 20 s on with no key pressed, the Last cell and the detail pane say the
    same age (the table once stayed at its first reading while the pane counted on)."""
    now = [FROZEN_NOW]
    app = demo_app_factory(clock=lambda: now[0], demo_ticks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        screen = app.sessions_screen
        table = screen.query_one(SessionsTable)
        row = min(screen.rows.values(), key=lambda r: r.age_secs)
        assert screen.select_session(row.key)
        for step in (8, 20):
            now[0] = FROZEN_NOW + step
            screen.tick(now[0])
            await pilot.pause()
            age = fmt.duration(now[0] - row.summary.mtime)
            assert table.get_cell(row.key, "last").plain == age
            assert f" {age} ago" in detail_text(app)


async def test_band_styles_follow_a_theme_change(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        app.theme = "nord"
        nord = band_styles(app)
        assert band_styles(app) is nord  # worked out once per theme
        app.theme = "gruvbox"
        await pilot.pause()
        gruvbox = band_styles(app)
        assert gruvbox.ok != nord.ok
        assert band_styles(app) is gruvbox
        app.theme = "ansi-dark"  # the terminal's own colours, not RGB stand-ins for them
        await pilot.pause()
        ansi = band_styles(app)
        assert ansi.warn.color is not None and ansi.warn.color.name == "yellow"
        assert ansi.alert.color is not None and ansi.alert.color.name == "red"


@pytest.mark.parametrize("size", [(80, 16), (80, 30)])
async def test_the_table_never_scrolls_sideways(
    demo_app_factory: Callable[..., GobtuiApp], size: tuple[int, int]
) -> None:
    """At 80 columns, with more rows than fit (a vertical scrollbar) or not, the columns fit
    beside the scrollbar's room: no horizontal scrollbar, the same columns either way."""
    app = demo_app_factory()
    async with app.run_test(size=size) as pilot:
        table = app.sessions_screen.query_one(SessionsTable)
        await until(lambda: table.row_count > 0, pilot)
        await pilot.pause()
        assert (table.max_scroll_y > 0) is (size[1] == 16)
        assert table.max_scroll_x == 0
        assert table.virtual_size.width <= table.scrollable_content_region.width
        await pilot.press("end")  # the last session, scrolled into view
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1 and table.max_scroll_x == 0
        assert table.scroll_y == table.max_scroll_y
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0 and table.scroll_y == 0


async def test_filling_the_board_draws_only_the_rows_on_screen(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows added are not drawn to be measured (the columns have set widths): only the rows
    on screen are drawn, and the table's size is its columns' widths by its rows."""
    drawn: set[int] = set()
    draw = SessionsTable._compute_row_renderables

    def spy(table: SessionsTable, row_index: int) -> Any:
        drawn.add(row_index)
        return draw(table, row_index)

    monkeypatch.setattr(SessionsTable, "_compute_row_renderables", spy)
    app = demo_app_factory()
    async with app.run_test(size=(80, 16)) as pilot:
        table = app.sessions_screen.query_one(SessionsTable)
        await until(lambda: table.row_count > 0, pilot)
        await pilot.pause()
        height = table.scrollable_content_region.height
        assert table.row_count > height  # some rows off screen
        assert drawn and max(drawn) < height  # (-1: the header)
        width = sum(column.get_render_width(table) for column in table.columns.values())
        assert table.virtual_size == (width, table.row_count + table.header_height)
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1 and table.scroll_y == table.max_scroll_y
        assert table.row_count - 1 in drawn


async def test_a_tick_while_the_board_is_taken_down_is_ignored(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """On exit Textual prunes the widgets concurrently while the one-second tick still runs:
    a tick that found the detail pane without its children raised NoMatches (seen in the
    first-paint bench). Here the pane loses its children first, as in that race."""
    from gobtui.widgets.detail import DetailPane

    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        pane = app.sessions_screen.query_one(DetailPane)
        assert pane.row is not None
        await pane.remove_children()
        app.sessions_screen.tick(FROZEN_NOW + 5)
        app._tick()
        await pilot.pause()
        assert app.is_running
    assert app.return_code in (0, None)


async def test_every_session_key_on_an_empty_board_says_none_is_selected(
    demo_app_factory: Callable[..., GobtuiApp], tmp_path: Path
) -> None:
    """Resume (R, enter) was silent where plan, eval, apply and copy said why."""
    for home in ("claude", "codex"):
        (tmp_path / home).mkdir()
    toasts = Toasts()
    app = demo_app_factory(
        demo=False, claude_home=str(tmp_path / "claude"), codex_home=str(tmp_path / "codex")
    )
    async with app.run_test(size=(80, 24), message_hook=toasts) as pilot:
        await app.first_paint.wait()
        for key in ("R", "enter", "p", "e", "a", "c"):
            toasts.seen.clear()
            await pilot.press(key)
            await pilot.pause()
            assert toasts.has("No session selected."), key
            assert app.screen is app.sessions_screen
        # The board says where it looked, and how to look elsewhere.
        empty = str(app.query_one("#empty", Static).render())
        assert "~/claude/projects, ~/codex/sessions and ~/codex/archived_sessions" in empty
        assert "--claude-home DIR" in empty


async def test_a_theme_picked_in_the_app_is_remembered_for_the_next_run(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gobtui.adapters.config.ui_state import saved_theme, state_path
    from gobtui.cli import dispatch as cli

    app = demo_app_factory(theme="ansi-dark", remember_theme=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.pause()
        assert not state_path().exists()  # the start's own theme is not a pick
        app.theme = "nord"  # as the palette's theme picker sets it
        await until(lambda: saved_theme() == "nord", pilot)
    assert cli._saved_theme() == "nord"
    state_path().write_text('{"theme": "gone-in-a-later-textual"}')
    assert cli._saved_theme() is None  # not an error at start: the default theme instead
    forgetful = demo_app_factory()
    async with forgetful.run_test(size=(80, 24)) as pilot:
        await forgetful.first_paint.wait()
        forgetful.theme = "dracula"
        await pilot.pause()
    assert saved_theme() == "gone-in-a-later-textual"  # tests and screenshots never save


async def test_statuses_decay_on_their_own_when_files_stop_changing(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """Nine quiet minutes later (one tick, no file written), nothing reads working or live
    any more, and the header's counts agree with the rows."""
    now = [FROZEN_NOW]
    app = demo_app_factory(clock=lambda: now[0], demo_ticks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        screen = app.sessions_screen
        assert any(row.status is Status.WORKING for row in screen.rows.values())
        assert any(row.live for row in screen.rows.values())
        now[0] = FROZEN_NOW + 9 * 60
        screen.tick(now[0])
        await pilot.pause()
        quiet = [r for r in screen.rows.values() if r.summary.mtime <= FROZEN_NOW]
        assert not any(row.live for row in quiet)
        assert not any(row.status is Status.WORKING for row in quiet)
        assert "· 0 live" in plain(screen.query_one("#status", Static))
        table = screen.query_one(SessionsTable)
        for row in quiet:  # the table shows what the rows say
            assert table.get_cell(row.key, "status").plain == row.status.value


async def test_the_header_keeps_the_sort_at_80_columns(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """However much the header has to say in an 80-column pane, the sort is never cut: the
    words give way to the marks first."""
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        screen = app.sessions_screen
        header = screen.query_one("#status", Static)
        assert plain(header).rstrip().endswith("sort activity")
        assert "◆ 5 waiting" in plain(header)  # the marks, with their words when they fit
        screen.sort_key = SortKey.ATTENTION
        screen.sort_reverse = True
        screen.filter_text = "a"
        await pilot.press("l")
        await pilot.pause()
        shown = plain(header).rstrip()
        assert shown.endswith("sort attention rev"), shown
        assert len(shown) <= 78


async def test_the_palette_is_built_from_the_bindings(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """Every binding of the board is a palette command, in its own words with its key; one
    runs as its key does."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.first_paint.wait()
        board = app.sessions_screen
        wanted = {
            b.binding.id: b.binding.tooltip
            for b in board.active_bindings.values()
            if b.binding.id and not b.binding.id.endswith((".first", ".last", ".down", ".up"))
        }
        for binding_id in ("sessions.read", "sessions.jump", "sessions.resume", "app.help"):
            assert binding_id in wanted
        assert "attention" in str(wanted["sessions.sort"])
        for binding_id, tooltip in wanted.items():
            await pilot.press("ctrl+p")
            await until(lambda: isinstance(app.screen, CommandPalette), pilot)
            await pilot.press(*str(tooltip)[:14])
            await pilot.pause(0.3)
            shown = [str(o.prompt) for o in app.screen.query_one(CommandList).options]
            assert any(str(tooltip) in text for text in shown), (binding_id, shown)
            await pilot.press("escape")
            await until(lambda: app.screen is board, pilot)
        await pilot.press("ctrl+p")
        await until(lambda: isinstance(app.screen, CommandPalette), pilot)
        await pilot.press(*"Only live sessions")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(lambda: board.live_only, pilot)


async def test_ctrl_c_says_which_key_quits_in_plain_words(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(80, 24), message_hook=toasts) as pilot:
        await app.first_paint.wait()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert toasts.has("Do you want to quit?: Press q to quit gobtui."), toasts.seen
        assert not any("[b]" in toast for toast in toasts.seen)
