"""Apply (`a`) and the vault screens (`v`) under Pilot, on the demo home and a real vault.

Everything is checked on disk or against the services called directly: the fork file and
its receipt, the untouched source, the vault's index, search and read_record pages. The
vault lives under the GOBTUI_DATA_DIR the autouse fixture points at a temporary folder.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList, ProgressBar, Static

from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.vault.recovery import read_record, recall, search
from gobtui.adapters.vault.vault import Vault
from gobtui.app import GobtuiApp
from gobtui.core.board import BoardRow
from gobtui.core.edits import CompactionPlan
from gobtui.core.model import Provider
from gobtui.core.receipt import OperationKind, Receipt
from gobtui.core.status import Status
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import SnapshotDiff
from gobtui.dialogs.confirm import ConfirmScreen
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens import vault_records
from gobtui.screens.plan_preview import PlanPreviewScreen
from gobtui.screens.vault import VaultScreen
from gobtui.screens.vault_diff import ChangedList, DiffSummaryScreen
from gobtui.screens.vault_recall import RecallScreen
from gobtui.screens.vault_records import RecordList, VaultRecordsScreen
from gobtui.screens.vault_viewer import UNTRUSTED, RecordViewerScreen
from gobtui.services.planning_state import ignoring_trigger, policy_for
from gobtui.view_models import format as fmt
from gobtui.view_models.vault_rows import diff_order, entry_matches, type_counts
from gobtui.widgets.publish_bar import PublishBar, PublishState
from tests.gobtui.conftest import FROZEN_NOW
from tests.gobtui.pilot_helpers import Toasts, detail_text, on_top, plain, select, until

OVER_TRIGGER = "ledgerly"  # the demo session the default policy plans (auto, a file plan)
BELOW_TRIGGER = "spotlight-api"  # live, so auto asks the API to drop results (a control plan)
IDLE_BELOW_TRIGGER = "pg-migrate"  # idle: auto plans a file plan with a state card
BIG_RECORDS = "codex/jazzyalex__agent-sessions__small.jsonl"  # a 25 KB record: two pages


def fork_of(app: GobtuiApp, row: BoardRow) -> Receipt | None:
    return app.last_fork(row.key)


async def apply_and_confirm(app: GobtuiApp, pilot: Pilot[None], row: BoardRow) -> Receipt:
    await pilot.press("a")
    await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
    await pilot.press("y")
    await until(lambda: fork_of(app, row) is not None and not app.publishing.busy, pilot)
    receipt = fork_of(app, row)
    assert receipt is not None
    await until(lambda: receipt.path in app.sessions_screen.rows, pilot)
    return receipt


def confirm_text(app: GobtuiApp) -> str:
    assert isinstance(app.screen, ConfirmScreen)
    return str(app.screen.query_one("#confirm-question", Static).render())


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def open_vault(app: GobtuiApp, pilot: Pilot[None]) -> VaultScreen:
    await pilot.press("v")
    screen = app.screen
    assert isinstance(screen, VaultScreen)
    await until(lambda: screen.loaded, pilot)
    await pilot.pause()
    return screen


def snapshot_file(path: Path, provider: Provider, session_id: str, label: str, ts: float) -> str:
    return Vault().snapshot(path, provider, session_id, label, ts).sha256


# --- apply -------------------------------------------------------------------------------------


async def test_a_confirms_then_publishes_the_fork(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        row = await select(app, OVER_TRIGGER)
        source = Path(row.summary.path)
        before = source.read_bytes()
        session_id = row.summary.session_id
        progress: list[tuple[int, int]] = []
        shown = app.publishing._progress

        def record(what: str, done: int, total: int) -> None:
            progress.append((done, total))
            shown(what, done, total)

        app.publishing._progress = record  # type: ignore[method-assign]
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        # The board's `a` again while this one waits: refused with a notice, not queued.
        assert app.publishing.busy
        app.sessions_screen.action_apply()
        await pilot.pause()
        assert toasts.has("already running")
        assert len(app.screen_stack) == 2
        question = confirm_text(app)
        assert (
            f"Publish an auto (middle) fork of {OVER_TRIGGER} ({session_id[:8]}) — 311k → 161k tokens"
            in (question)
        )
        assert "new file beside ~/demo/claude/projects/-home-dev-src-ledgerly;" in question
        assert "snapshotted into the vault first and never modified" in question
        await pilot.press("enter")
        await until(lambda: fork_of(app, row) is not None and not app.publishing.busy, pilot)
        receipt = fork_of(app, row)
        assert receipt is not None and receipt.kind is OperationKind.APPLY
        fork = Path(receipt.path)
        # On disk: the fork beside the source, smaller; the source byte-identical.
        assert fork.is_file() and fork.parent == source.parent and fork != source
        assert sha256_of(fork) == receipt.output_sha256
        assert fork.stat().st_size == receipt.bytes_after < len(before)
        assert source.read_bytes() == before
        entries = Vault().entries()
        # newest first: the fork as published (its card is what recall finds), the source
        assert [(e.session_id, e.strategy) for e in entries] == [
            (receipt.session_id, "published"),
            (session_id, "auto"),
        ]
        assert entries[1].sha256 == receipt.snapshot_manifest_sha256
        assert entries[1].source_sha256 == hashlib.sha256(before).hexdigest()
        assert entries[0].source_sha256 == receipt.output_sha256
        # The 1.6 MB source streamed into the vault in 1 MiB chunks, the bar following it.
        assert progress == [(1024 * 1024, len(before)), (len(before), len(before))]
        assert not app.sessions_screen.query_one(PublishBar).display
        # On screen: the toast, the fork as a board row, "last fork" in the detail pane.
        # Resumed from the session's folder, as `c` copies it.
        resume = f"cd {row.summary.cwd} && claude --resume {receipt.session_id}"
        assert toasts.has(f"Fork published — resume: {resume}")
        await until(lambda: receipt.path in app.sessions_screen.rows, pilot)
        forked = app.sessions_screen.rows[receipt.path].summary
        assert forked.session_id == receipt.session_id
        # Told apart from its source, by what auto chose (what it cut).
        assert receipt.strategy == "auto" and receipt.selected_strategy is not None
        assert forked.title == f"{receipt.selected_strategy} fork · {row.summary.title}"
        assert not app.sessions_screen.rows[receipt.path].live  # nobody writes it
        selected = app.sessions_screen.selected_row()
        assert selected is not None and selected.key == row.key
        await pilot.pause()
        assert f"last fork: claude --resume {receipt.session_id}" in detail_text(app)
        # `a` again on the unchanged source: the same plan was published, nothing is asked.
        listing = sorted(source.parent.iterdir())
        await pilot.press("a")
        await until(lambda: toasts.has("Already published from these bytes"), pilot)
        assert toasts.has(f"&& claude --resume {receipt.session_id}")
        assert not isinstance(app.screen, ConfirmScreen) and not app.publishing.busy
        assert sorted(source.parent.iterdir()) == listing and len(Vault().entries()) == 2
        # Once the fork is gone, the same plan is asked about and published again.
        fork.unlink()
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        await pilot.press("escape")
        await until(lambda: not app.publishing.busy, pilot)


async def test_the_preview_of_a_fresh_fork_starts_from_its_projected_context(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """A fork's latest usage says its projected context: its row, its parse and its preview
    start from it (a copied usage once put a fork cut to 232k at its source's 311k)."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        await pilot.press("p")  # elide: no state card, so the fork's last record is the source's
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        preview.set_strategy("elide")
        await until(lambda: preview.preview is not None and preview.strategy == "elide", pilot)
        await until(
            lambda: preview.preview is not None and preview.preview.figures.strategy == "elide",
            pilot,
        )
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        await pilot.press("y")
        await until(lambda: fork_of(app, row) is not None and not app.publishing.busy, pilot)
        receipt = fork_of(app, row)
        assert receipt is not None and receipt.strategy == "elide"
        await pilot.press("escape")
        await until(lambda: receipt.path in app.sessions_screen.rows, pilot)
        fork_row = app.sessions_screen.rows[receipt.path]
        # Dated as its source, but nobody works in it yet: not live, not waiting, not over
        # the trigger, and listed after its source.
        title = fork_row.summary.title
        assert (
            fork_row.summary.fork_as_published and title is not None and title.startswith("elide")
        )
        assert not fork_row.live and fork_row.status is Status.IDLE and not fork_row.over_trigger
        order = [r.key for r in app.sessions_screen.visible_rows()]
        assert order.index(row.key) < order.index(receipt.path)
        assert receipt.projection is not None
        projected = receipt.projection.context_tokens_after
        tail = receipt.projection.calibration.tail_tokens  # elide: no card after the usage
        assert fork_row.summary.context_tokens == projected - tail
        fork_tokens, source_tokens = fork_row.summary.context_tokens, row.summary.context_tokens
        assert fork_tokens is not None and source_tokens is not None and fork_tokens < source_tokens
        parsed = parse_transcript(Provider.CLAUDE, receipt.path)
        assert parsed.summary is not None
        assert parsed.summary.context_tokens == fork_row.summary.context_tokens
        assert app.sessions_screen.select_session(receipt.path)
        await pilot.press("p")
        screen = app.screen
        assert isinstance(screen, PlanPreviewScreen)
        await until(lambda: screen.preview is not None, pilot)
        assert screen.preview is not None
        assert screen.preview.figures.context_before == fork_row.summary.context_tokens
        assert receipt.context_tokens_after < receipt.context_tokens_before


async def test_cancel_writes_nothing(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(80, 24), message_hook=toasts) as pilot:
        row = await select(app, OVER_TRIGGER)
        folder = Path(row.summary.path).parent
        listing = sorted(folder.iterdir())
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        await pilot.press("n")
        await until(lambda: not app.publishing.busy, pilot)
        assert app.screen is app.sessions_screen
        assert toasts.has("Cancelled; nothing was written.")
        assert sorted(folder.iterdir()) == listing
        assert not Vault().root.exists()
        assert fork_of(app, row) is None
        # escape cancels as well, and a later apply is not refused as "running"
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        await pilot.press("escape")
        await until(lambda: not app.publishing.busy, pilot)
        assert sorted(folder.iterdir()) == listing
        assert not toasts.has("already running")
        # enter presses the focused button: tab (or an arrow) to Cancel, then enter, cancels
        for keys in (("tab", "enter"), ("right", "enter")):
            await pilot.press("a")
            await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
            assert app.screen.focused is not None and app.screen.focused.id == "confirm-yes"
            await pilot.press(*keys)
            await until(lambda: not app.publishing.busy, pilot)
            assert app.screen is app.sessions_screen
            assert sorted(folder.iterdir()) == listing and fork_of(app, row) is None


async def test_a_session_without_a_plan_says_why(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        row = await select(app, BELOW_TRIGGER)
        listing = sorted(Path(row.summary.path).parent.iterdir())
        await pilot.press("a")
        await until(lambda: toasts.has("Nothing to apply"), pilot)
        assert toasts.has(f"No fork for {BELOW_TRIGGER} ({row.summary.session_id[:8]}): below")
        assert not isinstance(app.screen, ConfirmScreen)
        assert not app.publishing.busy
        assert sorted(Path(row.summary.path).parent.iterdir()) == listing
        assert not Vault().root.exists()


async def preview_ignoring_trigger(
    app: GobtuiApp, pilot: Pilot[None], project: str
) -> tuple[BoardRow, PlanPreviewScreen]:
    row = await select(app, project)
    await pilot.press("p")
    screen = app.screen
    assert isinstance(screen, PlanPreviewScreen)
    await until(lambda: screen.preview is not None, pilot)
    first = screen.preview
    await pilot.press("t")  # below the trigger: plan anyway
    await until(lambda: screen.preview is not first and screen.preview is not None, pilot)
    return row, screen


async def test_a_in_the_preview_publishes_the_previewed_plan(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row, screen = await preview_ignoring_trigger(app, pilot, IDLE_BELOW_TRIGGER)
        assert screen.preview is not None
        figures = screen.preview.figures
        assert figures.context_after is not None and figures.control is None
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        assert f"{IDLE_BELOW_TRIGGER} ({row.summary.session_id[:8]})" in confirm_text(app)
        await pilot.press("y")
        await until(lambda: fork_of(app, row) is not None and not app.publishing.busy, pilot)
        receipt = fork_of(app, row)
        assert receipt is not None
        assert app.screen is screen
        assert receipt.strategy == screen.strategy
        assert receipt.context_tokens_before == figures.context_before
        assert receipt.context_tokens_after == figures.context_after
        assert Path(receipt.path).is_file()


async def test_a_control_plan_in_the_preview_is_not_published(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        _, screen = await preview_ignoring_trigger(app, pilot, BELOW_TRIGGER)  # live: cache_edits
        assert screen.preview is not None and screen.preview.figures.control is not None
        await pilot.press("a")
        await until(lambda: toasts.has("Nothing to apply"), pilot)
        assert toasts.has("control plan") and toasts.has("no file to publish")
        assert app.screen is screen and not app.publishing.busy
        assert not Vault().root.exists()


async def test_a_publish_error_opens_the_error_modal(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        with Path(row.summary.path).open("ab") as handle:  # the session moves on meanwhile
            handle.write(b'{"type":"mode","mode":"normal"}\n')
        await pilot.press("y")
        await until(lambda: isinstance(app.screen, ErrorScreen), pilot)
        error = app.screen
        assert isinstance(error, ErrorScreen)
        assert error.title_text == "Apply failed"
        assert error.code == "source_changed"
        assert "changed since planning" in error.message and "Traceback" not in error.message
        assert fork_of(app, row) is None and not app.publishing.busy
        await pilot.press("escape")
        assert app.screen is app.sessions_screen


# --- vault -------------------------------------------------------------------------------------


async def test_undo_from_the_vault_creates_another_fork(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        row = await select(app, OVER_TRIGGER)
        source = Path(row.summary.path)
        original = source.read_bytes()
        applied = await apply_and_confirm(app, pilot, row)
        vault = await open_vault(app, pilot)
        published, taken = vault.entries  # newest first: the fork as published, the source
        assert (published.session_id, published.strategy) == (applied.session_id, "published")
        assert taken.sha256 == applied.snapshot_manifest_sha256
        table = vault.query_one(DataTable)
        assert table.row_count == 2
        assert OVER_TRIGGER in str(table.get_row_at(1)[2])
        await pilot.press("down")  # to the source's snapshot
        await pilot.press("u")
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        assert f"Restore snapshot {applied.snapshot_manifest_sha256[:12]}" in confirm_text(app)
        await pilot.press("y")
        await until(lambda: fork_of(app, row) is not applied and not app.publishing.busy, pilot)
        restored = fork_of(app, row)
        assert restored is not None and restored.kind is OperationKind.UNDO
        assert restored.path != applied.path and restored.session_id != applied.session_id
        fork = Path(restored.path)
        assert fork.is_file() and sha256_of(fork) == restored.output_sha256
        # The restored fork is the original transcript under a new identity: same size.
        assert fork.stat().st_size == len(original)
        assert source.read_bytes() == original and Path(applied.path).is_file()
        assert toasts.has(f"resume: cd {row.summary.cwd} && claude --resume {restored.session_id}")
        await until(lambda: restored.path in app.sessions_screen.rows, pilot)
        assert app.screen is vault
        title = app.sessions_screen.rows[restored.path].summary.title
        assert title == f"restore · {row.summary.title}"
    later = demo_app_factory()  # a new run names them from their receipts
    async with later.run_test(size=(120, 36)) as pilot:
        await later.first_paint.wait()
        rows = later.sessions_screen.rows
        chosen = applied.selected_strategy
        assert chosen is not None and chosen != "auto"
        assert rows[applied.path].summary.title == f"{chosen} fork · {row.summary.title}"
        assert rows[restored.path].summary.title == f"restore · {row.summary.title}"


async def test_a_damaged_chunk_shows_the_error_modal_and_no_rows(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        sha = snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "manual", FROZEN_NOW
        )
        chunk = next(iter(sorted(Vault().chunks_dir.iterdir())))
        data = bytearray(chunk.read_bytes())
        data[100] ^= 0x01
        chunk.write_bytes(bytes(data))
        vault = await open_vault(app, pilot)
        assert [e.sha256 for e in vault.entries] == [sha]  # the index itself is intact
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, ErrorScreen), pilot)
        error = app.screen
        assert isinstance(error, ErrorScreen)
        assert f"chunk {chunk.name} fails its hash check" in error.message
        assert error.code == "damaged_chunk"
        assert "Traceback" not in error.message
        await pilot.press("escape")
        records = app.screen
        assert isinstance(records, VaultRecordsScreen)
        assert records.rows is None and records.query_one(RecordList).row_count() == 0
        assert "cannot read" in str(records.query_one("#records-title", Static).render())
        await pilot.press("escape")
        assert app.screen is vault
        await pilot.press("u")  # undo refuses a snapshot that does not verify
        await until(lambda: isinstance(app.screen, ConfirmScreen), pilot)
        await pilot.press("y")
        await until(lambda: isinstance(app.screen, ErrorScreen), pilot)
        assert isinstance(app.screen, ErrorScreen)
        assert app.screen.title_text == "Undo failed"
        assert chunk.name in app.screen.message
        assert fork_of(app, row) is None


async def test_the_record_browser_pages_a_record(
    demo_app_factory: Callable[..., GobtuiApp],
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy(BIG_RECORDS)
    sha = snapshot_file(path, Provider.CODEX, "fixture-session", "manual", FROZEN_NOW - 90)
    lines = path.read_bytes().split(b"\n")
    big = max(range(len(lines)), key=lambda i: len(lines[i]))
    assert len(lines[big]) > 16 * 1024
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=30)
        await open_vault(app, pilot)
        await pilot.press("enter")
        browser = app.screen
        assert isinstance(browser, VaultRecordsScreen)
        await until(lambda: browser.rows is not None, pilot)
        assert browser.rows is not None
        assert [r.index for r in browser.rows] == list(range(len(browser.rows)))
        assert [r.size for r in browser.rows] == [len(line) for line in lines[: len(browser.rows)]]
        assert browser.rows[big].sha256_prefix == hashlib.sha256(lines[big]).hexdigest()[:12]
        browser.query_one(RecordList).move_cursor(big)
        await pilot.press("enter")
        viewer = app.screen
        assert isinstance(viewer, RecordViewerScreen)
        await until(lambda: viewer.page is not None, pilot)
        assert "page 1/" in str(viewer.query_one("#viewer-title", Static).render())  # read form
        await pilot.press("r")  # the raw JSON, 16 KiB a page
        first = read_record(Vault(), sha, big, 0, 16 * 1024)
        assert viewer.raw and viewer.page == first and first.next_offset is not None
        title = str(viewer.query_one("#viewer-title", Static).render())
        assert (
            UNTRUSTED in title and f"bytes 0–{first.next_offset:,} of {len(lines[big]):,}" in title
        )
        shown = str(viewer.query_one("#viewer-content", Static).render())
        assert shown.replace("\n", "")[:200] == first.content[:200]
        await pilot.press("n")
        await until(lambda: viewer.page is not None and viewer.page.offset > 0, pilot)
        second = read_record(Vault(), sha, big, first.next_offset, 16 * 1024)
        assert viewer.page == second
        await pilot.press("pageup")
        await until(lambda: viewer.page is not None and viewer.page.offset == 0, pilot)
        assert viewer.page == first


async def test_search_marks_the_matching_records(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        sha = snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "manual", FROZEN_NOW
        )
        await open_vault(app, pilot)
        await pilot.press("enter")
        browser = app.screen
        assert isinstance(browser, VaultRecordsScreen)
        await until(lambda: browser.rows is not None, pilot)
        await pilot.press("slash", *"Bash", "enter")
        await until(lambda: browser.result is not None, pilot)
        direct = search(Vault(), sha, "Bash", 50)
        records = browser.query_one(RecordList)
        assert records.matches == {m.record_index: m.match_count for m in direct.matches}
        assert records.matches and records.rows[records.cursor].index == min(records.matches)
        title = str(browser.query_one("#records-title", Static).render())
        assert f"“Bash”: {direct.matched_records:,} records" in title
        ordered = sorted(records.matches)
        await pilot.press("n")
        assert records.rows[records.cursor].index == ordered[1]
        drawn = records.render_row(records.cursor, 100, False).text
        assert drawn.startswith("● ") and f"×{records.matches[ordered[1]]}" in drawn
        await pilot.press("enter")  # the record opens with the query's hits marked
        viewer = app.screen
        assert isinstance(viewer, RecordViewerScreen)
        await until(lambda: viewer.page is not None, pilot)
        assert viewer.page is not None
        expected = viewer.page.content.count("Bash")
        assert expected > 0 and viewer.page_hits == expected
        shown = viewer.query_one("#viewer-content", Static).render()
        assert isinstance(shown, Content)
        # The hits (reversed), not the field labels (muted) nor the headings.
        marked = {
            shown.plain[span.start : span.end]
            for span in shown.spans
            if getattr(span.style, "reverse", False) or "reverse" in str(span.style)
        }
        assert marked == {"Bash"}
        title = str(viewer.query_one("#viewer-title", Static).render())
        assert f"{fmt.plural(expected, 'hit')} of “Bash” on this page" in title
        await pilot.press("escape", "slash", "ctrl+a", "ctrl+k", "enter")  # search cleared
        await until(lambda: browser.query_text is None, pilot)
        await pilot.press("enter")
        plain = app.screen
        assert isinstance(plain, RecordViewerScreen) and plain.query_text is None
        await until(lambda: plain.page is not None, pilot)
        assert "on this page" not in str(plain.query_one("#viewer-title", Static).render())


async def test_search_hits_are_counted_as_search_counts_them(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query with a quote: search matches decoded strings, the page shows raw JSON (the
    quote escaped), and the viewer marks it there. Over the result limit, the header says
    its hit count covers the records shown."""
    monkeypatch.setattr(vault_records, "VAULT_VIEW_SEARCH_RESULTS", 3)
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        sha = snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "manual", FROZEN_NOW
        )
        query = 'f"no invoice'
        direct = search(Vault(), sha, query, 50)
        assert direct.matched_records > 3  # enough to go over the limit set above
        await open_vault(app, pilot)
        await pilot.press("enter")
        browser = app.screen
        assert isinstance(browser, VaultRecordsScreen)
        await until(lambda: browser.rows is not None, pilot)
        await pilot.press("slash", *query, "enter")
        await until(lambda: browser.result is not None, pilot)
        title = str(browser.query_one("#records-title", Static).render())
        shown_hits = sum(m.match_count for m in direct.matches[:3])
        assert f": {direct.matched_records} records, first 3 shown ({shown_hits} hits)" in title
        await pilot.press("enter")
        viewer = app.screen
        assert isinstance(viewer, RecordViewerScreen)
        await until(lambda: viewer.page is not None, pilot)
        assert viewer.page is not None
        first = direct.matches[0]
        assert viewer.row.index == first.record_index
        assert viewer.page_hits == first.match_count == viewer.page.content.count('f\\"no invoice')


async def test_two_marked_snapshots_diff_and_history_filters(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    toasts = Toasts()
    app = demo_app_factory()
    async with app.run_test(size=(120, 36), message_hook=toasts) as pilot:
        row = await select(app, OVER_TRIGGER)
        other = next(r for r in app.sessions_screen.rows.values() if r.project == BELOW_TRIGGER)
        source = Path(row.summary.path)
        sid = row.summary.session_id
        a = snapshot_file(source, Provider.CLAUDE, sid, "manual", FROZEN_NOW - 3600)
        snapshot_file(
            Path(other.summary.path),
            Provider.CLAUDE,
            other.summary.session_id,
            "manual",
            FROZEN_NOW - 1800,
        )
        with source.open("ab") as handle:
            handle.write(b'{"type":"mode","mode":"normal"}\n')
        b = snapshot_file(source, Provider.CLAUDE, sid, "auto", FROZEN_NOW - 60)
        vault = await open_vault(app, pilot)
        assert len(vault.entries) == 3
        entry = vault.selected_entry()
        assert entry is not None and entry.sha256 == b
        await pilot.press("h")  # this session's history only
        table = vault.query_one(DataTable)
        assert table.row_count == 2
        await pilot.press("m", "down", "m")
        assert len(vault.marks) == 2
        await pilot.press("h", "up")  # every snapshot again; the other session's
        assert table.row_count == 3
        cursor = table.cursor_row
        await pilot.press("end")  # (DataTable's own end would move between columns)
        assert table.cursor_row == 2
        await pilot.press("home")
        assert table.cursor_row == 0
        table.move_cursor(row=cursor)
        await pilot.pause()
        entry = vault.selected_entry()
        assert entry is not None and entry.session_id == other.summary.session_id
        await pilot.press("m")  # a third mark is refused
        assert len(vault.marks) == 2 and toasts.has("Two snapshots are marked already")
        marked = str(vault.query_one("#vault-title", Static).render())
        assert f"{a[:8]} → {b[:8]} marked: d diffs them" in marked
        await pilot.press("d")
        await until(lambda: isinstance(app.screen, DiffSummaryScreen), pilot)
        diff_screen = app.screen
        assert isinstance(diff_screen, DiffSummaryScreen)
        direct = Vault().diff(a, b)
        assert diff_screen.diff == direct
        assert (diff_screen.older.sha256, diff_screen.newer.sha256) == (a, b)
        assert len(direct.added) == 1 and not direct.removed
        summary = str(diff_screen.query_one("#vdiff-summary", Static).render())
        assert f"records {direct.records_a:,} → {direct.records_b:,}" in summary
        assert "1 added" in summary and "0 removed" in summary
        assert "two sessions" not in summary
        types = [
            line.split()
            for line in plain(diff_screen.query_one("#vdiff-types", Static)).splitlines()
        ]
        assert [
            "mode",
            f"{direct.types_a.get('mode', 0):,}",
            f"{direct.types_b['mode']:,}",
            "+1",
        ] in types
        await pilot.press("escape")
        await pilot.press("slash", *"spotlight")
        await pilot.pause()
        assert table.row_count == 1
        entry = vault.selected_entry()
        assert entry is not None and entry.session_id == other.summary.session_id
        # A filter matching nothing says so; esc clears a filter (submitted or not) before
        # it leaves, as on the board.
        await pilot.press(*"zzz", "enter")
        assert table.row_count == 0
        title = str(vault.query_one("#vault-title", Static).render())
        assert "No snapshot matches the filter: esc clears it." in title
        toasts.seen.clear()
        await pilot.press("enter")  # on no row at all
        await pilot.pause()
        assert toasts.has("No snapshot selected.") and app.screen is vault
        await pilot.press("escape")
        assert app.screen is vault and table.row_count == 3 and not vault.filter_text
        await pilot.press("escape")
        assert on_top(app) is app.sessions_screen


async def test_a_diff_of_a_fork_and_its_source_sets_the_session_ids_aside(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """d on a source's snapshot and its fork's: the records the fork changed, each with its
    mark (~ stubbed, ≠ rewritten, − removed, + appended); enter reads one."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        receipt = await apply_and_confirm(app, pilot, row)
        await open_vault(app, pilot)
        vault = app.screen
        assert isinstance(vault, VaultScreen)
        await until(lambda: vault.loaded, pilot)
        await pilot.press("home", "m", "down", "m", "d")
        await until(lambda: isinstance(app.screen, DiffSummaryScreen), pilot)
        screen = app.screen
        assert isinstance(screen, DiffSummaryScreen)
        await until(lambda: screen.fork is not None, pilot)
        await pilot.pause()
        fork = screen.fork
        assert fork is not None and fork.unpaired is None and fork.kept > len(fork.changes) > 0
        shown = screen.query_one(ChangedList).rows
        assert len(shown) == len(fork.changes)
        assert {mark for mark, _, _ in shown} <= {"~", "≠", "−", "+"} and "~" in {
            m for m, _, _ in shown
        }
        summary = plain(screen.query_one("#vdiff-summary", Static))
        assert "what B changed, session ids set aside: " in summary
        assert receipt.session_id  # (the fork published, above)


async def test_a_diff_across_two_sessions_says_why_every_record_differs(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """A restore holds its source's records under a new session id, which every record
    carries: by hash all of them are added and removed, and the summary says why."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        source = Path(row.summary.path)
        sid = row.summary.session_id
        a = snapshot_file(source, Provider.CLAUDE, sid, "manual", FROZEN_NOW - 120)
        other = "00000000" + sid[8:]
        copy = source.with_name(f"{other}.jsonl")
        copy.write_bytes(source.read_bytes().replace(sid.encode(), other.encode()))
        b = snapshot_file(copy, Provider.CLAUDE, other, "restore", FROZEN_NOW - 60)
        await open_vault(app, pilot)
        await pilot.press("home", "m", "down", "m", "d")
        await until(lambda: isinstance(app.screen, DiffSummaryScreen), pilot)
        screen = app.screen
        assert isinstance(screen, DiffSummaryScreen)
        direct = Vault().diff(a, b)
        # (file-history-snapshot records carry no session id: those stay unchanged)
        assert direct.records_added == direct.records_removed > 10 * direct.unchanged > 0
        # ... and with the session ids set aside, the copy changed nothing: it says so.
        await until(lambda: screen.fork is not None, pilot)
        await pilot.pause()
        summary = plain(screen.query_one("#vdiff-summary", Static))
        assert (
            f"what B changed, session ids set aside: {direct.records_b:,} kept · nothing else"
            in summary
        )
        assert screen.query_one(ChangedList).rows == []


async def test_recall_lists_the_cards_of_a_fork_snapshot(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        receipt = await apply_and_confirm(app, pilot, row)
        snapshot_file(Path(receipt.path), Provider.CLAUDE, receipt.session_id, "fork", FROZEN_NOW)
        await open_vault(app, pilot)
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        await until(lambda: screen.result is not None, pilot)
        direct = recall(Vault(), None, 50)
        assert screen.result == direct and direct.results
        card = direct.results[0].card
        goal = card.goal.split()[0]
        await pilot.press(*goal, "enter")
        await until(lambda: screen.result is not None and screen.query_text == goal, pilot)
        assert screen.result is not None and screen.result.results
        assert all(hit.hits > 0 for hit in screen.result.results)
        # On the results, the title says how to get back to the query; `/` goes there.
        await until(
            lambda: "/ new query" in plain(screen.query_one("#recall-title", Static)), pilot
        )
        await pilot.press("slash", *goal[:3])  # the old words are selected: typing replaces them
        assert screen.query_one("#recall-query", Input).value == goal[:3]
        await pilot.press(*goal[3:], "enter")
        await until(lambda: screen.result is not None and screen.query_text == goal, pilot)
        await until(lambda: isinstance(app.focused, OptionList), pilot)
        await pilot.press("enter")  # the first card: its snapshot's records, at the card
        browser = app.screen
        assert isinstance(browser, VaultRecordsScreen)
        await until(lambda: browser.rows is not None, pilot)
        records = browser.query_one(RecordList)
        wanted = screen.result.results[0].record_index
        await until(lambda: records.rows[records.cursor].index == wanted, pilot)
        await pilot.pause()
        top = int(records.scroll_offset.y)  # and the card's row is on screen
        assert wanted > records.page_rows and top <= records.cursor < top + records.page_rows


def test_prepare_apply_matches_the_planner(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    """The apply request is the policy's admitted plan, and the question names it exactly."""
    from gobtui.adapters.planning.load import candidate_bytes, load_session, plan_session
    from gobtui.services.apply_flow import NothingToApply, apply_question, prepare_apply

    app = demo_app_factory()
    store = app.store
    summaries = {s.path: s for s in store.scan(FROZEN_NOW)}
    ledgerly = next(s for s in summaries.values() if s.cwd and s.cwd.endswith(OVER_TRIGGER))
    session = load_session(Path(ledgerly.path), ledgerly.provider)
    policy, strategy = policy_for(ledgerly)
    request = prepare_apply(ledgerly, session, strategy, policy, live=False)
    plan = plan_session(session, strategy, policy).plan
    assert isinstance(plan, CompactionPlan) and request.plan == plan
    assert request.candidate_bytes == len(candidate_bytes(session, plan))
    assert "1.6 MB → ~1.2 MB" in apply_question(request)
    spotlight = next(s for s in summaries.values() if s.cwd and s.cwd.endswith(BELOW_TRIGGER))
    below = load_session(Path(spotlight.path), spotlight.provider)
    with pytest.raises(NothingToApply, match="below its trigger"):
        prepare_apply(spotlight, below, strategy, policy, live=False)
    lowered = ignoring_trigger(policy, below.transcript.context_tokens())
    idle = prepare_apply(spotlight, below, strategy, lowered, live=False)
    assert idle.plan.rewrites_file and "live" not in apply_question(idle)
    # A live session's confirm says so before anything happens.
    live = prepare_apply(spotlight, below, "elide", lowered, live=True)
    assert live.live and "The session is live: its agent is still writing" in apply_question(live)


async def test_the_publish_bar_shows_the_snapshot_progress(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=30)
        bar = app.sessions_screen.query_one(PublishBar)
        assert not bar.display
        app.publishing._set_state(PublishState("snapshotting the source…", 0, 2048))
        app.publishing._progress("snapshotting the source…", 1024, 2048)
        await pilot.pause()
        assert bar.display
        progress = bar.query_one(ProgressBar)
        assert (progress.total, progress.progress) == (2048, 1024)
        assert "snapshotting" in str(bar.query_one("#publish-what", Static).render())
        app.publishing._set_state(None)
        await pilot.pause()
        assert not bar.display


async def test_the_palette_opens_the_vault_and_its_actions(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "manual", FROZEN_NOW
        )
        await pilot.press("ctrl+p", *"Snapshot vault")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, VaultScreen), pilot)
        vault = app.screen
        assert isinstance(vault, VaultScreen)
        await until(lambda: vault.loaded, pilot)
        await pilot.press("ctrl+p", *"Toggle session history")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(lambda: vault.history_of == row.summary.session_id, pilot)


async def test_vault_keys_can_be_remapped_by_binding_id(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory(keymap={"sessions.vault": "V", "vault.mark": "x"})
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "manual", FROZEN_NOW
        )
        await pilot.press("V")
        vault = app.screen
        assert isinstance(vault, VaultScreen)
        await until(lambda: vault.loaded, pilot)
        await pilot.press("x")
        assert vault.marks == [0]


# --- the vault screens' pure helpers -----------------------------------------------------------


def entry(serial: int, session: str = "s1", label: str = "auto") -> IndexEntry:
    return IndexEntry(
        ts=FROZEN_NOW - 100 + serial,  # a larger serial is a newer snapshot
        sha256=f"{serial:064x}",
        path=f"/home/dev/.claude/projects/p/{session}.jsonl",
        session_id=session,
        provider=Provider.CLAUDE,
        bytes=10,
        record_count=1,
        source_sha256="b" * 64,
        strategy=label,
    )


def test_entry_matches_every_shown_field_case_insensitively() -> None:
    item = entry(1, session="32e873de-71ac", label="cache_aware")
    for text in ("", "LEDGER", "32E873", "Cache_", "claude", "/p/", f"{1:064x}"[-6:]):
        assert entry_matches(item, text, "ledgerly"), text
    assert not entry_matches(item, "pg-migrate", "ledgerly")
    assert not entry_matches(item, "ledger", None)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=2, max_size=2, unique=True), st.integers(10, 14))
def test_diff_order_is_older_then_newer(marked: list[int], size: int) -> None:
    entries = [entry(size - position) for position in range(size)]  # newest first
    older, newer = diff_order(marked, entries)
    assert older.ts < newer.ts
    assert {entries.index(older), entries.index(newer)} == set(marked)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["user", "assistant", "mode", "x:y"]), st.integers(1, 9)),
    st.dictionaries(st.sampled_from(["user", "assistant", "mode", "x:y"]), st.integers(1, 9)),
)
def test_type_counts_cover_both_sides_changes_first(a: dict[str, int], b: dict[str, int]) -> None:
    diff = SnapshotDiff(
        a="a" * 64,
        b="b" * 64,
        records_a=sum(a.values()),
        records_b=sum(b.values()),
        added=[],
        removed=[],
        unchanged=0,
        types_a=a,
        types_b=b,
    )
    rows = type_counts(diff)
    assert {r.kind for r in rows} == set(a) | set(b)
    assert sum(r.a for r in rows) == diff.records_a and sum(r.b for r in rows) == diff.records_b
    changed = [r.delta != 0 for r in rows]
    assert changed == sorted(changed, reverse=True)


async def test_a_damaged_index_shows_no_list_at_all(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        row = await select(app, OVER_TRIGGER)
        snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "manual", FROZEN_NOW
        )
        with Vault().index_path.open("ab") as handle:
            handle.write(b'{"ts": "not a number"}\n')
        await pilot.press("v")
        await until(lambda: isinstance(app.screen, ErrorScreen), pilot)
        error = app.screen
        assert isinstance(error, ErrorScreen)
        assert error.code == "damaged_index" and "index line 2 is invalid" in error.message
        await pilot.press("escape")
        vault = app.screen
        assert isinstance(vault, VaultScreen)
        assert vault.entries == [] and vault.query_one(DataTable).row_count == 0
        assert "cannot read the vault" in str(vault.query_one("#vault-title", Static).render())


async def test_the_vault_ages_move_on_while_it_is_open(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An open vault screen redraws the Taken column: "2m ago" does not stay for an hour."""
    import gobtui.screens.vault as vault_screen

    monkeypatch.setattr(vault_screen, "AGE_REFRESH_SECS", 0.05)
    now = [FROZEN_NOW]
    app = demo_app_factory(clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, OVER_TRIGGER)
        snapshot_file(
            Path(row.summary.path), Provider.CLAUDE, row.summary.session_id, "x", now[0] - 120
        )
        screen = await open_vault(app, pilot)
        table = screen.query_one(DataTable)

        def taken() -> str:
            return str(table.get_row_at(0)[table.get_column_index("taken")])

        assert taken() == "2m ago"
        selected = screen.selected_serial()
        now[0] += 3 * 3600
        await until(lambda: taken() == "3h ago", pilot)
        assert screen.selected_serial() == selected is not None
