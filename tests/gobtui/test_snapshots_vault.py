"""Snapshots of the apply confirm modal and the vault screens at 80x24 and 120x36, on the
frozen demo home (the record viewer as text and as raw JSON, one- and two-session diffs). The vault's two snapshots are taken with fixed timestamps before the app
runs, and every picture waits for its worker's answer, so nothing depends on the machine."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson
import pytest
from textual.pilot import Pilot

from gobtui.adapters.vault.vault import Vault
from gobtui.app import GobtuiApp
from gobtui.core.edits import DigestBlock
from gobtui.core.model import Provider
from gobtui.dialogs.confirm import ConfirmScreen
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.vault import VaultScreen
from gobtui.screens.vault_diff import DiffSummaryScreen
from gobtui.screens.vault_recall import RecallScreen
from gobtui.screens.vault_records import VaultRecordsScreen
from gobtui.screens.vault_viewer import RecordViewerScreen
from tests.gobtui.conftest import FROZEN_NOW
from tests.gobtui.pilot_helpers import until, workers_done

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 36), id="120x36")]
PROJECT = "ledgerly"
LEDGERLY = "claude/projects/-home-dev-src-ledgerly/32e873de-71ac-4c96-909c-232b38c8723e.jsonl"
APPENDED = (
    b'{"type":"user","message":{"role":"user","content":"ship the migration"},'
    b'"uuid":"00000000-0000-4000-8000-000000000001","parentUuid":null,'
    b'"sessionId":"32e873de-71ac-4c96-909c-232b38c8723e","timestamp":"2026-11-18T06:11:00Z"}\n'
)

RunBefore = Callable[[Pilot[None]], Awaitable[None]]


def two_snapshots(demo_root: Path) -> Path:
    """ledgerly an hour ago, then again two minutes ago with one more record."""
    source = demo_root / LEDGERLY
    session = source.stem
    vault = Vault()
    vault.snapshot(source, Provider.CLAUDE, session, "manual", FROZEN_NOW - 3600)
    with source.open("ab") as handle:
        handle.write(APPENDED)
    vault.snapshot(source, Provider.CLAUDE, session, "auto", FROZEN_NOW - 120)
    return source


async def settle(pilot: Pilot[None]) -> None:
    await workers_done(pilot.app)
    await pilot.pause()


async def on_ledgerly(pilot: Pilot[None]) -> GobtuiApp:
    app = pilot.app
    assert isinstance(app, GobtuiApp)
    await asyncio.wait_for(app.first_paint.wait(), timeout=30)
    await asyncio.wait_for(app.history_complete.wait(), timeout=30)
    row = next(r for r in app.sessions_screen.rows.values() if r.project == PROJECT)
    app.sessions_screen.select_session(row.key)
    await pilot.pause()
    return app


async def in_vault(pilot: Pilot[None]) -> VaultScreen:
    app = await on_ledgerly(pilot)
    await pilot.press("v")
    screen = app.screen
    assert isinstance(screen, VaultScreen)
    await until(lambda: screen.loaded, pilot)
    await settle(pilot)
    return screen


async def in_records(pilot: Pilot[None]) -> VaultRecordsScreen:
    await in_vault(pilot)
    await pilot.press("enter")
    screen = pilot.app.screen
    assert isinstance(screen, VaultRecordsScreen)
    await until(lambda: screen.rows is not None or screen.error is not None, pilot)
    await settle(pilot)
    return screen


def snap(
    snap_compare: Callable[..., bool], app: GobtuiApp, size: tuple[int, int], run: RunBefore
) -> bool:
    return snap_compare(app, terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES)
def test_apply_confirm_modal(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    size: tuple[int, int],
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        app = await on_ledgerly(pilot)
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        await settle(pilot)

    assert snap(snap_compare, demo_app_factory(), size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_two_snapshots_marked(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")

    async def run_before(pilot: Pilot[None]) -> None:
        await in_vault(pilot)
        await pilot.press("m", "down", "m")
        await pilot.pause()

    assert snap(snap_compare, app, size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_diff_summary(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")

    async def run_before(pilot: Pilot[None]) -> None:
        await in_vault(pilot)
        await pilot.press("m", "down", "m", "d")
        await until(lambda: isinstance(pilot.app.screen, DiffSummaryScreen), pilot)
        screen = pilot.app.screen
        assert isinstance(screen, DiffSummaryScreen)
        await until(lambda: screen.changed is not None, pilot)
        await settle(pilot)

    assert snap(snap_compare, app, size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_record_browser_with_search(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await in_records(pilot)
        await pilot.press("slash", *"Bash", "enter")
        await until(lambda: screen.result is not None, pilot)
        await settle(pilot)

    assert snap(snap_compare, app, size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_record_viewer(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")

    async def run_before(pilot: Pilot[None]) -> None:
        await in_viewer(pilot, 3)

    assert snap(snap_compare, app, size, run_before)


async def in_viewer(pilot: Pilot[None], downs: int) -> RecordViewerScreen:
    await in_records(pilot)
    await pilot.press(*["down"] * downs, "enter")
    screen = pilot.app.screen
    assert isinstance(screen, RecordViewerScreen)
    await until(lambda: not screen.reading and screen.page is not None, pilot)
    await settle(pilot)
    return screen


@pytest.mark.parametrize("size", SIZES)
def test_vault_record_viewer_text_of_a_tool_result(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    """A tool result read as text: its output's lines, under what it is."""
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")

    async def run_before(pilot: Pilot[None]) -> None:
        await in_viewer(pilot, 9)

    assert snap(snap_compare, app, size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_record_viewer_raw_json(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await in_viewer(pilot, 3)
        await pilot.press("r")
        await until(lambda: screen.raw, pilot)
        await settle(pilot)

    assert snap(snap_compare, app, size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_diff_of_two_sessions(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    """Snapshots of ledgerly and spotlight-api: both named, their records listed."""
    app = demo_app_factory()
    demo = frozen_home / "demo"
    two_snapshots(demo)
    other = next((demo / "claude/projects").glob("*spotlight*/*.jsonl"))
    Vault().snapshot(other, Provider.CLAUDE, other.stem, "manual", FROZEN_NOW - 60)

    async def run_before(pilot: Pilot[None]) -> None:
        await in_vault(pilot)
        await pilot.press("home", "m", "down", "m", "d")
        await until(lambda: isinstance(pilot.app.screen, DiffSummaryScreen), pilot)
        screen = pilot.app.screen
        assert isinstance(screen, DiffSummaryScreen)
        await until(lambda: screen.changed is not None, pilot)
        await settle(pilot)

    assert snap(snap_compare, app, size, run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vault_damaged_chunk_error_modal(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")
    vault = Vault()
    manifest = orjson.loads((vault.manifests_dir / vault.entries()[0].sha256).read_bytes())
    chunk = vault.chunks_dir / manifest["chunks"][0]  # the first piece of the newest snapshot
    data = bytearray(chunk.read_bytes())
    data[10] ^= 0x01
    chunk.write_bytes(bytes(data))

    async def run_before(pilot: Pilot[None]) -> None:
        await in_vault(pilot)
        await pilot.press("enter")
        await until(lambda: isinstance(pilot.app.screen, ErrorScreen), pilot)
        await settle(pilot)

    assert snap(snap_compare, app, size, run_before)


CARD = DigestBlock(
    goal="move the ledger to the new scheduler without losing retries",
    summary="move the ledger to the new scheduler",
    concepts=["bash", "read"],
    files_touched=["src/ledger/scheduler.py"],
    decisions=["do not retry a failed settlement without the idempotency key"],
    errors=["FAILED tests/test_scheduler.py::test_retry - duplicate settlement"],
    open_tasks=["TODO: backfill the retry table"],
    current_work="rerun the scheduler tests",
    context="provider: claude",
    covers_items=42,
)


@pytest.mark.parametrize("size", SIZES)
def test_vault_recall_of_a_state_card(
    snap_compare: Callable[..., bool],
    demo_app_factory: Callable[..., GobtuiApp],
    frozen_home: Path,
    size: tuple[int, int],
) -> None:
    app = demo_app_factory()
    source = frozen_home / "demo" / LEDGERLY
    record = {
        "type": "user",
        "message": {"role": "user", "content": CARD.render()},
        "uuid": "00000000-0000-4000-8000-00000000ca4d",
        "parentUuid": None,
        "sessionId": source.stem,
        "timestamp": "2026-11-18T06:12:00Z",
    }
    with source.open("ab") as handle:
        handle.write(orjson.dumps(record) + b"\n")
    Vault().snapshot(source, Provider.CLAUDE, source.stem, "compacted", FROZEN_NOW - 600)

    async def run_before(pilot: Pilot[None]) -> None:
        await in_vault(pilot)
        await pilot.press("r")
        screen = pilot.app.screen
        assert isinstance(screen, RecallScreen)
        await until(lambda: screen.result is not None, pilot)
        await settle(pilot)

    assert snap(snap_compare, app, size, run_before)
