"""The detail pane's facts, rendered as text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.style import Style

from gobtui.app import GobtuiApp
from gobtui.core.board import BoardPolicy, build_row
from gobtui.core.composition import PartKind
from gobtui.view_models import format as fmt
from gobtui.widgets.detail import DetailPane, facts
from gobtui.widgets.palette import BandStyles
from tests.core.test_board import NOW, summary

PLAIN = BandStyles(*(Style() for _ in range(7)))


def text_of(table: object) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def test_a_live_session_over_its_trigger_says_now_as_the_board_does() -> None:
    row = build_row(summary(tokens=190_000, mtime=NOW - 5), BoardPolicy(), NOW)
    assert row.live and row.over_trigger
    assert "ETA now" in text_of(facts(row, PLAIN))
    below = build_row(summary(tokens=50_000, mtime=NOW - 5), BoardPolicy(), NOW)
    assert "ETA now" not in text_of(facts(below, PLAIN))


def test_at_80_columns_long_facts_end_in_an_ellipsis_and_the_warning_comes_first() -> None:
    from gobtui.core.model import CompactionEvent, Coverage, SubagentRef

    s = replace(
        summary(tokens=120_000, mtime=NOW - 600),
        bad_lines=3,
        torn_tail=True,
        records=123_456,
        bytes=98_765_432,
        coverage=Coverage.HEAD_TAIL,
        subagents=[
            SubagentRef(
                agent_id=f"agent-{n:04d}-abcdef",
                path=f"/h/sub{n}.jsonl",
                context_tokens=40_000 + n,
            )
            for n in range(5)
        ],
        compactions=[CompactionEvent(ts=NOW - 900, pre_tokens=190_000, trigger="auto")],
    )
    row = build_row(s, BoardPolicy(), NOW)
    console = Console(width=78, record=True, color_system=None)
    console.print(facts(row, PLAIN, width=78))
    lines = {line.split()[0]: line.rstrip() for line in console.export_text().splitlines()}
    activity, history = lines["Activity"], lines["History"]
    assert activity.startswith("Activity idle 10m ago · ⚠ 3 unreadable lines, the last one")
    assert activity.endswith("…") and len(activity) <= 78
    assert history.startswith("History  5 subagents: agent-0000") and history.endswith("…")
    # wide enough, nothing is cut
    wide = text_of(facts(row, PLAIN, width=120))
    assert "the last one unfinished · last burn" in wide and "compacted 1× (last auto" in wide


async def test_ages_tick_by_themselves_and_the_table_and_detail_agree(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    from gobtui.widgets.sessions_table import SessionsTable
    from tests.gobtui.conftest import FROZEN_NOW
    from tests.gobtui.pilot_helpers import select

    now = [FROZEN_NOW]
    app = demo_app_factory(clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, "pg-migrate")  # idle, written 6h ago
        await pilot.pause()
        table = app.query_one(SessionsTable)

        def shown() -> tuple[str, str]:
            pane = app.sessions_screen.query_one(DetailPane)  # what it shows, as text
            assert pane.row is not None and pane.row.key == row.key
            detail = text_of(facts(pane.row, PLAIN))
            activity = next(line for line in detail.splitlines() if "Activity" in line)
            return table.get_cell(row.key, "last").plain.strip(), activity

        last, activity = shown()
        assert f"idle {last} ago" in activity
        now[0] += 2 * 3600  # two hours on; nothing was written
        app._tick()
        await pilot.pause()
        later, activity = shown()
        assert later != last and f"idle {later} ago" in activity
        assert fmt.duration(now[0] - row.summary.mtime) == later


async def test_the_fills_line_says_what_fills_the_selected_context(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """Read whole in a worker, the selected session's context by kind: one bar and a legend
    whose figures are the composition's."""

    from gobtui.adapters.planning.load import load_session
    from tests.gobtui.pilot_helpers import select, workers_done

    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        row = await select(app, "ledgerly")
        for _ in range(3):
            await workers_done(app)
            await pilot.pause()
        screen = app.sessions_screen
        known = screen.fills[row.key]
        assert known[0] == row.summary.bytes and known[2] is not None
        comp = load_session(Path(row.summary.path), row.summary.provider).composition
        assert known[2] == comp
        pane = screen.query_one(DetailPane)
        console = Console(width=78, record=True, color_system=None)
        console.print(facts(row, PLAIN, width=78, fills=known[2]))
        line = next(x for x in console.export_text().splitlines() if x.startswith("Fills"))
        assert (
            "█" * 16 in line and f"think {fmt.tokens(comp.part(PartKind.REASONING).tokens)}" in line
        )
        assert pane.row is not None and pane.row.key == row.key
