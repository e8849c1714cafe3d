"""The vault screens as a newcomer meets them at 80x24, on the frozen demo home: records
with a preview, a record read as text (r: raw JSON), a diff's changed records opening, a
two-session diff headed with both names, the footer's / and h, the viewer's position line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
from rich.cells import cell_len
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from gobtui.adapters.vault.recovery import read_record
from gobtui.adapters.vault.vault import Vault
from gobtui.app import GobtuiApp
from gobtui.core.model import Provider
from gobtui.screens.vault_diff import ChangedList, DiffSummaryScreen
from gobtui.screens.vault_records import RecordList, VaultRecordsScreen
from gobtui.screens.vault_viewer import RecordViewerScreen
from tests.gobtui.conftest import FROZEN_NOW
from tests.gobtui.pilot_helpers import until
from tests.gobtui.test_snapshots_vault import LEDGERLY, in_records, in_vault, settle, two_snapshots

SID = Path(LEDGERLY).stem
HOSTILE = "\x1b[2J\x1b]0;pwned\x07 [bold red]not markup[/]"
LONG_WORDS = " ".join(f"alpha{i:05d}" for i in range(3000))  # 32,999 characters: three pages


def screen_lines(pilot: Pilot[None]) -> list[str]:
    """The screen as the terminal gets it, one string per row."""
    return [strip.text for strip in pilot.app.screen._compositor.render_strips()]


def append(source: Path, message: object) -> None:
    record = {
        "type": "user",
        "message": {"role": "user", "content": message},
        "uuid": "00000000-0000-4000-8000-0000000000aa",
        "parentUuid": None,
        "sessionId": SID,
        "timestamp": "2026-11-18T06:12:00Z",
    }
    with source.open("ab") as handle:
        handle.write(orjson.dumps(record) + b"\n")


async def open_viewer(pilot: Pilot[None], record: int) -> RecordViewerScreen:
    records = await in_records(pilot)
    records.query_one(RecordList).move_cursor(record)
    await pilot.press("enter")
    viewer = pilot.app.screen
    assert isinstance(viewer, RecordViewerScreen)
    await until(lambda: not viewer.reading and viewer.page is not None, pilot)
    await settle(pilot)
    return viewer


def shown(viewer: RecordViewerScreen) -> str:
    return str(viewer.query_one("#viewer-content", Static).render())


# --- 1. the records list previews every record --------------------------------------------


async def test_each_record_has_a_one_line_preview(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    source = two_snapshots(frozen_home / "demo")
    append(source, HOSTILE)
    Vault().snapshot(source, Provider.CLAUDE, SID, "hostile", FROZEN_NOW - 60)
    async with app.run_test(size=(80, 24)) as pilot:
        browser = await in_records(pilot)
        assert isinstance(browser, VaultRecordsScreen) and browser.rows is not None
        rows = browser.rows
        assert rows[2].preview.startswith("user: migrate the invoice export")
        assert rows[913].preview == "user: ship the migration"
        assert rows[4].preview.startswith("tool Bash: command: ")
        hostile = rows[914].preview
        assert "\x1b" not in hostile and "\x07" not in hostile and "␛[2J" in hostile
        assert "[bold red]not markup[/]" in hostile
        drawn = browser.query_one(RecordList).render_row(2, 78, False).text
        assert "  user  " in drawn and "user: migrate the inv" in drawn
        assert drawn.rstrip().endswith("581 B")  # type, preview, then the size
        on_screen = "\n".join(screen_lines(pilot))
        assert "preview" in on_screen and "user: migrate the inv" in on_screen


# --- 2. the viewer reads a record as text --------------------------------------------------


async def test_the_viewer_shows_text_as_lines_and_raw_json_on_r(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    source = two_snapshots(frozen_home / "demo")
    append(source, f"first line\nsecond line\n{HOSTILE}")
    sha = Vault().snapshot(source, Provider.CLAUDE, SID, "text", FROZEN_NOW - 60).sha256
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = await open_viewer(pilot, 914)
        text = shown(viewer)
        assert "user\nfirst line\nsecond line\n" in text  # heading, then the text's lines
        assert "\\n" not in text.split("fields")[0]  # no JSON escapes in the text
        assert "\x1b" not in text and "␛[2J" in text and "[bold red]not markup[/]" in text
        assert "sessionId: " + SID in text  # the other fields, one per line
        lines = screen_lines(pilot)
        assert any(line.strip() == "second line" for line in lines)
        await pilot.press("r")
        assert viewer.raw
        raw = shown(viewer)
        assert viewer.page == read_record(Vault(), sha, 914, 0, 16 * 1024)
        assert raw.replace("\n", "").startswith('{"type":"user","message":')
        assert "\\n" in raw and "\x1b" not in raw
        title = str(viewer.query_one("#viewer-title", Static).render())
        assert "raw JSON page 1/1" in title and "bytes 0–" in title
        await pilot.press("r")
        assert not viewer.raw and "second line" in shown(viewer)


async def test_long_text_wraps_and_pages_between_words(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    source = two_snapshots(frozen_home / "demo")
    append(source, LONG_WORDS)
    Vault().snapshot(source, Provider.CLAUDE, SID, "long", FROZEN_NOW - 60)
    words = set(LONG_WORDS.split())
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = await open_viewer(pilot, 914)
        assert viewer.read_pages is not None and len(viewer.read_pages) == 3
        seen: list[str] = []
        for number in range(3):
            title = str(viewer.query_one("#viewer-title", Static).render())
            assert f"page {number + 1}/3" in title
            body = shown(viewer).split("\nfields\n")[0].split("\n", 1)[1]
            seen.append(body)
            for row in screen_lines(pilot)[3:-1]:  # every word whole on its row
                assert all(word in words for word in row.split() if word.startswith("alpha"))
            await pilot.press("n")
            await pilot.pause()
        assert " ".join(" ".join(seen).split()) == LONG_WORDS  # nothing lost, nothing cut
        assert "(continued)" in shown(viewer)
        await pilot.press("p")
        await pilot.pause()
        assert viewer.read_index == 1


# --- 3. a diff's changed records open ------------------------------------------------------


async def diff_of_marked(pilot: Pilot[None], *keys: str) -> DiffSummaryScreen:
    await in_vault(pilot)
    await pilot.press(*keys, "m", "down", "m", "d")
    await until(lambda: isinstance(pilot.app.screen, DiffSummaryScreen), pilot)
    screen = pilot.app.screen
    assert isinstance(screen, DiffSummaryScreen)
    await until(lambda: screen.changed is not None, pilot)
    await settle(pilot)
    return screen


async def test_enter_on_an_added_record_opens_it(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await diff_of_marked(pilot)
        records = screen.query_one(ChangedList)
        assert [(mark, of_b, row.index) for mark, of_b, row in records.rows] == [("+", True, 913)]
        assert "+ 914  user" in "\n".join(screen_lines(pilot))  # shown 1-based
        await pilot.press("enter")
        viewer = pilot.app.screen
        assert isinstance(viewer, RecordViewerScreen)
        assert viewer.entry == screen.newer and viewer.row.index == 913
        await until(lambda: viewer.page is not None, pilot)
        assert "ship the migration" in shown(viewer)
        await pilot.press("escape")
        assert pilot.app.screen is screen


async def test_enter_on_a_removed_record_opens_it_in_the_older_snapshot(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    source = two_snapshots(frozen_home / "demo")
    data = source.read_bytes()
    source.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])  # the last record gone
    Vault().snapshot(source, Provider.CLAUDE, SID, "shorter", FROZEN_NOW - 60)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await diff_of_marked(pilot)  # the newest two: A has the record, B not
        records = screen.query_one(ChangedList)
        assert [(mark, of_b, row.index) for mark, of_b, row in records.rows] == [("−", False, 913)]
        await pilot.press("enter")
        viewer = pilot.app.screen
        assert isinstance(viewer, RecordViewerScreen) and viewer.entry == screen.older
        await until(lambda: viewer.page is not None, pilot)
        assert "ship the migration" in shown(viewer)


# --- 4. a two-session diff names both sides ------------------------------------------------


async def test_a_two_session_diff_is_headed_with_both_names(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    demo = frozen_home / "demo"
    app = demo_app_factory()
    two_snapshots(demo)
    other = next((demo / "claude/projects").glob("*spotlight*/*.jsonl"))
    Vault().snapshot(other, Provider.CLAUDE, other.stem, "manual", FROZEN_NOW - 60)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await diff_of_marked(pilot, "home")
        head = screen_lines(pilot)[0]
        expected = f"A ledgerly {SID[:8]} → B spotlight-api {other.stem[:8]}"
        assert expected in head and "two sessions" in head
        assert len(screen.query_one(ChangedList).rows) > 0


async def test_a_session_the_board_does_not_know_is_named_by_its_id(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    source = two_snapshots(frozen_home / "demo")
    elsewhere = frozen_home / "restored"  # outside the provider homes: not on the board
    elsewhere.mkdir()
    copy = elsewhere / ("0000aaaa" + SID[8:] + ".jsonl")
    copy.write_bytes(source.read_bytes().replace(SID.encode(), copy.stem.encode()))
    Vault().snapshot(copy, Provider.CLAUDE, copy.stem, "restore", FROZEN_NOW - 60)
    async with app.run_test(size=(80, 24)) as pilot:
        await diff_of_marked(pilot, "home")
        head = screen_lines(pilot)[0]
        assert f"A ledgerly {SID[:8]} → B session 0000aaaa" in head


# --- 5. / and h are in the vault's footer --------------------------------------------------


async def test_the_vault_footer_shows_filter_and_history_at_80_columns(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")
    async with app.run_test(size=(80, 24)) as pilot:
        vault = await in_vault(pilot)
        await pilot.pause()
        keys = {key.key: key for key in vault.query(FooterKey)}
        for key in ("enter", "escape", "slash", "h", "m", "d", "u", "r"):
            assert key in keys, key
            region = keys[key].region
            assert region.width > 0 and region.right <= 80, key
        footer = screen_lines(pilot)[-1]
        assert "/ Filter" in footer and "h History" in footer and "r Recall" in footer
        await pilot.press("h")
        assert vault.history_of == SID
        await pilot.press("slash")
        assert vault.query_one("#vault-filter").has_focus


# --- 6. the viewer's position line ---------------------------------------------------------


async def test_the_viewer_position_line_is_whole_at_80_columns(
    demo_app_factory: Callable[..., GobtuiApp], frozen_home: Path
) -> None:
    app = demo_app_factory()
    two_snapshots(frozen_home / "demo")
    async with app.run_test(size=(80, 24)) as pilot:
        records = await in_records(pilot)
        await pilot.press("slash", *"Bash", "enter")  # hits make the line longer still
        await until(lambda: records.result is not None, pilot)
        await pilot.press("enter")
        viewer = pilot.app.screen
        assert isinstance(viewer, RecordViewerScreen)
        await until(lambda: not viewer.reading and viewer.page is not None, pilot)
        await settle(pilot)
        line = screen_lines(pilot)[1]
        position = f"record {viewer.row.index + 1} of 914 · page 1/1"
        assert position in line
        full = str(viewer.query_one("#viewer-title", Static).render()).split("\n")[1]
        assert cell_len(full) > 78 and line.rstrip().endswith("…")  # cut, and says so
        await pilot.press("r")
        line = screen_lines(pilot)[1]
        assert f"record {viewer.row.index + 1} of 914 · raw JSON page 1/1" in line
        assert line.rstrip().endswith("…")
