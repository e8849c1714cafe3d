"""The board left open: forks, restores and copies published from outside while it runs are
labelled from the moment they appear, read idle, never wait for the user, and give their
source a Fork line. The real app, the real watcher, a real home, the real CLI beside it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from textual.widgets import Static

from gobtui.app import GobtuiApp, make_app
from gobtui.cli.dispatch import main
from gobtui.core.status import Status
from gobtui.services.run_settings import AppConfig
from tests.builders.sessions import claude_work_session, codex_work_session
from tests.gobtui.pilot_helpers import Toasts, detail_text, plain, until

LOW = ["--trigger", "20000", "--floor", "5000"]
IDLE_SINCE = 1_700_000_000


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A Claude and a Codex home, each with one idle session over a low trigger."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude_path = claude_work_session(60_000, "board").write(claude / "projects")
    codex_path = codex_work_session(60_000, "board").write(codex / "sessions")
    for path in (claude_path, codex_path):
        os.utime(path, (IDLE_SINCE, IDLE_SINCE))
    return claude, codex, claude_path, codex_path


def app_on(claude: Path, codex: Path) -> GobtuiApp:
    return make_app(
        AppConfig(
            claude_home=str(claude),
            codex_home=str(codex),
            max_age_secs=None,
            use_cache=False,
            watch=True,
        )
    )


async def cli(*argv: str) -> None:
    """The CLI, run beside the app as another process would (off the app's loop)."""
    code = await asyncio.to_thread(main, list(argv))
    assert code == 0


def new_rows(app: GobtuiApp, known: set[str]) -> list[str]:
    return sorted(set(app.sessions_screen.rows) - known)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("provider", ["claude", "codex"])
async def test_forks_published_from_outside_are_labelled_idle_and_linked(
    homes: tuple[Path, Path, Path, Path], provider: str
) -> None:
    claude, codex, claude_path, codex_path = homes
    source = claude_path if provider == "claude" else codex_path
    home_args = ["--claude-home", str(claude), "--codex-home", str(codex), "--all"]
    app = app_on(claude, codex)
    async with app.run_test(size=(120, 36)) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=30)
        screen = app.sessions_screen
        known = set(screen.rows)
        session_id = screen.rows[str(source)].summary.session_id
        await asyncio.sleep(0.3)  # let the watcher start

        await cli("apply", session_id, "--strategy", "elide", *LOW, "--yes", *home_args)
        await until(lambda: len(new_rows(app, known)) == 1, pilot, timeout=30)
        (fork_path,) = new_rows(app, known)

        def labelled(path: str, label: str) -> bool:
            title = screen.rows[path].summary.title or ""
            return title.startswith(f"{label} · ")

        await until(lambda: labelled(fork_path, "elide fork"), pilot, timeout=10)
        fork = screen.rows[fork_path]
        assert fork.status is Status.IDLE and not fork.live and not fork.over_trigger
        assert screen.selected_row() is not None
        assert screen.select_session(str(source))
        await pilot.pause()
        shown = detail_text(app)
        assert "Fork" in shown and fork.summary.session_id in shown

        known.add(fork_path)
        await cli("fork", session_id, "--yes", *home_args)
        await until(lambda: len(new_rows(app, known)) == 1, pilot, timeout=30)
        (copy_path,) = new_rows(app, known)
        await until(lambda: labelled(copy_path, "fork"), pilot, timeout=10)
        assert screen.rows[copy_path].status is Status.IDLE

        known.add(copy_path)
        await cli("undo", session_id, "--yes", *home_args)
        await until(lambda: len(new_rows(app, known)) == 1, pilot, timeout=30)
        (restore_path,) = new_rows(app, known)
        await until(lambda: labelled(restore_path, "restore"), pilot, timeout=10)
        assert screen.rows[restore_path].status is Status.IDLE
        waiting = sum(1 for row in screen.rows.values() if row.status is Status.WAITING)
        assert waiting == 0
        assert "waiting" not in plain(screen.query_one("#status", Static))


@pytest.mark.timeout(60)
async def test_config_edited_while_the_board_runs_is_used_at_once(
    homes: tuple[Path, Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config.toml changed under a running board: its triggers mark the rows, its keymap
    moves the keys; a file that does not load is named and the board keeps what it had."""
    claude, codex, claude_path, _codex_path = homes
    config = tmp_path / "config.toml"
    config.write_text("[policy]\ntrigger_tokens = 100000\nfloor_tokens = 40000\n")
    monkeypatch.setenv("GOBTUI_CONFIG", str(config))
    from gobtui.core.board import BoardPolicy
    from gobtui.services import policies

    toasts = Toasts()
    app = make_app(
        AppConfig(
            claude_home=str(claude),
            codex_home=str(codex),
            max_age_secs=None,
            use_cache=False,
            watch=False,
            policy=BoardPolicy(session_trigger=policies.current().trigger),
            config_file=config,
        )
    )
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=30)
        screen = app.sessions_screen
        key = str(claude_path)
        assert screen.rows[key].trigger_tokens == 100_000 and not screen.rows[key].over_trigger

        config.write_text(
            "[policy]\ntrigger_tokens = 30000\nfloor_tokens = 5000\n\n"
            '[ui]\nkeymap = { "sessions.plan" = "P" }\n'
        )
        await until(lambda: screen.rows[key].trigger_tokens == 30_000, pilot, timeout=10)
        assert screen.rows[key].over_trigger
        await until(lambda: toasts.has("config.toml: Read again"), pilot, timeout=10)
        plan_keys = {
            k for k, v in screen.active_bindings.items() if v.binding.id == "sessions.plan"
        }
        assert plan_keys == {"P"}

        config.write_text("[policy]\ntrigger_tokens = 'lots'\n")
        await until(lambda: toasts.has("config.toml not used"), pilot, timeout=10)
        assert screen.rows[key].trigger_tokens == 30_000  # what it had


@pytest.mark.timeout(60)
async def test_a_copy_that_appears_is_known_by_its_content(
    homes: tuple[Path, Path, Path, Path],
) -> None:
    """A session copied under another id by something else (no receipt here, no card): the
    board calls it a copy of its source, reads it idle, and the source's pane names it."""
    claude, codex, claude_path, _ = homes
    app = app_on(claude, codex)
    async with app.run_test(size=(120, 36)) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=30)
        screen = app.sessions_screen
        source = screen.rows[str(claude_path)].summary
        await asyncio.sleep(0.3)  # let the watcher start
        copy_id = "0c0c0c0c-1111-4222-8333-444455556666"
        copy = claude_path.with_name(f"{copy_id}.jsonl")
        copy.write_bytes(
            claude_path.read_bytes().replace(source.session_id.encode(), copy_id.encode())
        )
        os.utime(copy, (IDLE_SINCE, IDLE_SINCE))
        await until(lambda: str(copy) in screen.rows, pilot, timeout=20)
        row = screen.rows[str(copy)]
        assert (row.summary.title or "").startswith("copy · ")
        assert row.status is Status.IDLE and not row.over_trigger
        assert screen.select_session(str(claude_path))
        await pilot.pause()
        assert f"last fork: claude --resume {copy_id}" in detail_text(app)
