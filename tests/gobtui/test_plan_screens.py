"""The plan preview (`p`), record diff and eval (`e`) screens under Pilot, on the demo home.

Every figure the screens show is checked against the planning service called directly on
the same file, so a screen that drew stale or invented numbers would fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Select, Static

from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.app import GobtuiApp
from gobtui.controllers.messages import SessionsChanged
from gobtui.core.board import BoardRow
from gobtui.core.edits import DEFAULT_STUB, CompactionPlan, NoPlan
from gobtui.core.model import Provider
from gobtui.core.strategies import STRATEGIES
from gobtui.screens.eval_screen import EvalScreen
from gobtui.screens.plan_preview import CHANGED_NOTICE, LIVE_NOTICE, PlanPreviewScreen
from gobtui.screens.record_diff import RecordDiffScreen
from gobtui.services.planning_state import ignoring_trigger, next_strategy, policy_for
from gobtui.view_models import format as fmt
from gobtui.view_models.preview_rows import RowChange
from gobtui.widgets.diff_view import DiffView
from gobtui.widgets.record_pairs import RecordPairs
from tests.gobtui.pilot_helpers import select, until

OVER_TRIGGER = "ledgerly"  # the demo session over the default 250k trigger
BELOW_TRIGGER = "spotlight-api"
STUB_HEAD = DEFAULT_STUB.split("{")[0]  # "[output elided by gobtui: "


async def open_preview(app: GobtuiApp, pilot: Pilot[None], project: str) -> PlanPreviewScreen:
    await select(app, project)
    await pilot.press("p")
    screen = app.screen
    assert isinstance(screen, PlanPreviewScreen)
    await until(lambda: screen.preview is not None or screen.error is not None, pilot)
    await pilot.pause()
    return screen


async def open_eval(app: GobtuiApp, pilot: Pilot[None], project: str) -> EvalScreen:
    """`e` on the session of `project`, once every strategy's row is in."""
    await select(app, project)
    await pilot.press("e")
    screen = app.screen
    assert isinstance(screen, EvalScreen)
    await until(lambda: bool(screen.rows) and not screen.running, pilot)
    return screen


def static_text(screen: PlanPreviewScreen | EvalScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def rendered_rows(widget: RecordPairs | DiffView) -> list[str]:
    width = widget.scrollable_content_region.width
    return [widget.render_row(i, width, False).text for i in range(widget.row_count())]


def direct_plan(row: BoardRow, strategy: str, ignore: bool = False) -> CompactionPlan | NoPlan:
    session = load_session(Path(row.summary.path), row.summary.provider)
    policy, _ = policy_for(row.summary)
    if ignore:
        policy = ignoring_trigger(policy, session.transcript.context_tokens())
    return plan_session(session, strategy, policy, row.live).result


async def test_p_opens_the_preview_with_the_services_figures(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        row = next(r for r in app.sessions_screen.rows.values() if r.project == OVER_TRIGGER)
        plan = direct_plan(row, "auto")
        assert isinstance(plan, CompactionPlan)
        assert screen.preview is not None
        figures = screen.preview.figures
        assert (figures.context_before, figures.context_after) == (
            plan.context_tokens_before,
            plan.context_tokens_after,
        )
        assert figures.elided == len(plan.elided_lines)
        header = static_text(screen, "#plan-figures")
        before, after = (
            fmt.tokens(plan.context_tokens_before),
            fmt.tokens(plan.context_tokens_after),
        )
        assert f"{before} → {after} tokens" in header
        assert f"−{fmt.tokens(plan.est_savings)}" in header
        assert "admitted" in header and "verify ok" in header
        left = screen.preview.figures.left_out
        assert (
            left and f"{len(plan.elided_lines) - left} stubbed · {left} thinking left out" in header
        )
        # Every stubbed record of the plan is a stubbed row; folds cover the rest once.
        rows = screen.preview.rows
        stubbed = [
            r.before.line
            for r in rows
            if r.change in (RowChange.STUBBED, RowChange.LEFT_OUT) and r.before
        ]
        assert stubbed == sorted(plan.elided_lines)
        assert any(r.change is RowChange.LEFT_OUT for r in rows)  # the demo's thinking
        covered = sum(r.count for r in rows if r.before is not None)
        assert covered == len(screen.preview.source_lines)
        drawn = rendered_rows(screen.query_one(RecordPairs))
        assert any("unchanged records" in line for line in drawn)
        assert any("stub, frees" in line for line in drawn)
        # The card is drawn whole, its lines as wide as the list, not in the after column.
        assert plan.digest is not None
        card = [line for line in drawn if line.lstrip().startswith("card ")]
        goal = next(line for line in card if "goal:" in line)
        assert f"goal: {plan.digest.goal}" in goal
        assert goal.index("goal:") < len(goal) // 4


async def test_strategy_switch_replans(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        first = screen.preview
        await pilot.press("right_square_bracket")
        target = next_strategy("auto", 1)
        await until(lambda: screen.preview is not first and screen.preview is not None, pilot)
        assert screen.strategy == target
        assert screen.preview is not None and screen.preview.figures.strategy == target
        row = next(r for r in app.sessions_screen.rows.values() if r.project == OVER_TRIGGER)
        plan = direct_plan(row, target)
        assert isinstance(plan, CompactionPlan)
        assert screen.preview.figures.context_after == plan.context_tokens_after
        assert fmt.tokens(plan.context_tokens_after) in static_text(screen, "#plan-figures")
        second = screen.preview
        await pilot.press("left")  # back to auto
        await until(lambda: screen.preview is not second and screen.preview is not None, pilot)
        assert screen.strategy == "auto"


async def test_the_strategy_list_hands_the_keys_back_to_the_records(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """Picked from the dropdown (a new strategy, the same one, or none: escape), the records
    have the focus again, so the next down moves through them instead of reopening the list."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        records = screen.query_one(RecordPairs)
        strategy = screen.query_one("#plan-strategy", Select)

        async def pick(*keys: str) -> None:
            strategy.focus()
            await pilot.press("enter")  # opens the list
            await until(lambda: strategy.expanded, pilot)
            picked = next_strategy(screen.strategy, 1) if "down" in keys else screen.strategy
            await pilot.press(*keys)
            await until(lambda: not strategy.expanded and screen.strategy == picked, pilot)
            await until(
                lambda: (
                    not records.loading
                    and screen.preview is not None
                    and screen.preview.figures.strategy == picked
                ),
                pilot,
            )
            await pilot.pause()
            assert screen.focused is records, keys

        await pick("enter")  # the same strategy
        await pick("escape")  # none
        await pick("down", "enter")  # the next one: its records load first


async def test_enter_on_a_fold_shows_its_unchanged_records(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        records = screen.query_one(RecordPairs)
        fold = records.rows[0]
        assert fold.change is RowChange.FOLD and fold.before is not None and fold.count > 2
        total = len(records.rows)
        await pilot.press("enter")
        assert len(records.rows) == total + fold.count - 1
        opened = records.rows[: fold.count]
        assert [r.change for r in opened] == [RowChange.SAME] * fold.count
        assert [r.before.line for r in opened if r.before] == list(range(fold.count))
        assert screen.preview is not None
        assert records.rows[fold.count :] == screen.preview.rows[1:]
        assert records.cursor == 0 and isinstance(app.screen, PlanPreviewScreen)
        drawn = rendered_rows(records)
        assert not any("unchanged records" in line for line in drawn[:3])
        await pilot.press("down", "enter")  # an unchanged record's own diff: nothing changed
        assert isinstance(app.screen, RecordDiffScreen)


async def test_enter_opens_the_record_diff_with_the_stub(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        assert screen.preview is not None
        records = screen.query_one(RecordPairs)
        index = next(i for i, r in enumerate(screen.preview.rows) if r.change is RowChange.STUBBED)
        records.cursor = index
        await pilot.press("enter")
        await pilot.pause()
        diff_screen = app.screen
        assert isinstance(diff_screen, RecordDiffScreen)
        view = diff_screen.query_one(DiffView)
        assert view.split
        split_lines = rendered_rows(view)
        assert any(STUB_HEAD.strip() in line for line in split_lines)
        assert any("│" in line for line in split_lines)
        await pilot.press("s")
        await pilot.pause()
        assert not view.split
        unified = rendered_rows(view)
        removed = [line for line in unified if " - " in line[:16]]
        added = [line for line in unified if " + " in line[:16]]
        assert removed and any(STUB_HEAD.strip() in line for line in added)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        assert not screen.split  # the mode chosen in the diff sticks
        assert "unified diffs" in static_text(screen, "#plan-figures")


@pytest.mark.parametrize("theme", ["ansi-dark", "ansi-light", "textual-dark"])
async def test_diff_lines_are_readable_in_every_theme(
    demo_app_factory: Callable[..., GobtuiApp], theme: str
) -> None:
    """A removed or added line's colour never sits on a background of that same colour (an
    ANSI theme cannot tint: its 15% would be the full colour)."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        app.theme = theme
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        assert screen.preview is not None
        records = screen.query_one(RecordPairs)
        records.cursor = next(
            i for i, r in enumerate(screen.preview.rows) if r.change is RowChange.STUBBED
        )
        await pilot.press("enter")
        await pilot.pause()
        view = app.screen.query_one(DiffView)
        for component in ("diff-view--delete", "diff-view--insert"):
            style = view.get_component_rich_style(component)
            assert style.color is not None and style.color != style.bgcolor


async def test_fold_rows_open_no_diff(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        assert screen.preview is not None
        index = next(i for i, r in enumerate(screen.preview.rows) if r.change is RowChange.FOLD)
        screen.query_one(RecordPairs).cursor = index
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen


async def test_ignore_trigger_plans_a_session_below_it(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, BELOW_TRIGGER)
        assert screen.preview is not None
        assert screen.preview.figures.no_plan_reason == "below_trigger"
        figures = static_text(screen, "#plan-figures")
        assert "no plan: below the trigger" in figures and "press t to plan anyway" in figures
        assert screen.apply_refusal() == "no plan: below the trigger (t plans anyway)"
        first = screen.preview
        await pilot.press("t")
        await until(lambda: screen.preview is not first and screen.preview is not None, pilot)
        row = next(r for r in app.sessions_screen.rows.values() if r.project == BELOW_TRIGGER)
        plan = direct_plan(row, "auto", ignore=True)
        assert isinstance(plan, CompactionPlan)
        assert screen.preview is not None
        assert screen.preview.figures.context_after == plan.context_tokens_after
        header = static_text(screen, "#plan-figures")
        assert "trigger ignored" in header
        assert fmt.tokens(plan.context_tokens_after) in header


async def test_sessions_changed_for_the_previewed_path_shows_the_notice(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        notice = screen.query_one("#plan-notice", Static)
        assert not notice.display
        other = next(r for r in app.sessions_screen.rows.values() if r.project == BELOW_TRIGGER)
        summary = screen.summary
        # Another session changing, or this one re-read from the same bytes, says nothing.
        app.post_message(SessionsChanged([other.summary, summary]))
        await pilot.pause()
        assert not notice.display
        path = Path(summary.path)
        with path.open("ab") as handle:
            handle.write(b'{"type":"mode","mode":"normal"}\n')
        grown = replace(summary, bytes=path.stat().st_size)
        app.post_message(SessionsChanged([grown]))
        await until(lambda: bool(notice.display), pilot)
        assert str(notice.render()) == CHANGED_NOTICE
        before = screen.preview
        assert before is not None
        await pilot.press("r")
        await until(lambda: screen.preview is not before and screen.preview is not None, pilot)
        assert not notice.display
        assert screen.preview is not None
        assert len(screen.preview.source_lines) == len(before.source_lines) + 1
        app.post_message(SessionsChanged([grown]))  # what was re-planned is no change
        await pilot.pause()
        assert not notice.display


async def test_a_live_session_that_moves_on_says_to_wait_until_it_is_idle(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """Re-planning a session that is being written never lets `a` through: say so."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await select(app, BELOW_TRIGGER)
        row = next(r for r in app.sessions_screen.rows.values() if r.project == BELOW_TRIGGER)
        assert row.live  # the demo's live Claude session
        screen = await open_preview(app, pilot, BELOW_TRIGGER)
        assert screen.live
        path = Path(screen.summary.path)
        with path.open("ab") as handle:
            handle.write(b'{"type":"mode","mode":"normal"}\n')
        grown = replace(screen.summary, bytes=path.stat().st_size)
        app.post_message(SessionsChanged([grown]))
        notice = screen.query_one("#plan-notice", Static)
        await until(lambda: bool(notice.display), pilot)
        assert str(notice.render()) == LIVE_NOTICE
        assert screen.apply_refusal() == LIVE_NOTICE


async def test_a_control_plan_shows_no_recall_as_the_eval_does(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """The provider's own summary decides what a control plan keeps: no probe can tell."""
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_preview(app, pilot, BELOW_TRIGGER)  # live: auto asks the provider
        await pilot.press("t")  # plan at the current context
        await until(
            lambda: screen.preview is not None and screen.preview.figures.control is not None,
            pilot,
        )
        await pilot.pause()
        figures = static_text(screen, "#plan-figures")
        assert "recall —" in figures and "recall 0/" not in figures


async def test_a_removed_session_shows_the_notice_on_the_eval(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_eval(app, pilot, BELOW_TRIGGER)
        row = app.sessions_screen.selected_row()
        assert row is not None and row.project == BELOW_TRIGGER
        notice = screen.query_one("#eval-notice", Static)
        assert not notice.display
        app.post_message(SessionsChanged([], [row.key]))
        await until(lambda: bool(notice.display), pilot)
        assert "press r to re-run" in str(notice.render())


async def test_a_vanished_file_is_a_one_line_error(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        row = await select(app, BELOW_TRIGGER)
        Path(row.summary.path).unlink()
        await pilot.press("p")
        screen = app.screen
        assert isinstance(screen, PlanPreviewScreen)
        await until(lambda: screen.error is not None, pilot)
        await pilot.pause()
        header = static_text(screen, "#plan-figures")
        assert header.startswith("cannot plan: ")
        assert "Traceback" not in header


async def test_e_opens_the_eval_table_with_the_best_marked(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_eval(app, pilot, OVER_TRIGGER)
        row = app.sessions_screen.selected_row()
        assert row is not None and row.project == OVER_TRIGGER
        await pilot.pause()
        table = screen.query_one(DataTable)
        assert table.row_count == len(STRATEGIES)
        names = [str(k.value) for k in table.rows]
        assert names == list(STRATEGIES)
        session = load_session(Path(row.summary.path), row.summary.provider)
        direct = evaluate_session(session, policy_for(row.summary)[0], live=row.live)
        best = [r.strategy for r in direct if r.best]
        assert len(best) == 1
        starred = [
            str(table.get_row(k)[0]).strip() for k in table.rows if "★" in str(table.get_row(k)[0])
        ]
        assert starred == [f"★ {best[0]}"]
        assert f"best: ★ {best[0]}" in static_text(screen, "#eval-title")
        # s cycles the sort column: by savings the largest comes first.
        await pilot.press("s")
        await pilot.pause()
        first = str(next(iter(table.rows)).value)
        assert first == max(direct, key=lambda r: r.est_reclaimed).strategy


async def test_enter_on_an_eval_row_opens_its_preview(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_eval(app, pilot, OVER_TRIGGER)
        table = screen.query_one(DataTable)
        table.move_cursor(row=table.get_row_index("elide"))
        await pilot.pause()
        assert "elide:" in static_text(screen, "#eval-detail")
        await pilot.press("enter")
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        assert preview.strategy == "elide"
        await until(lambda: preview.preview is not None, pilot)
        assert preview.preview is not None and preview.preview.figures.strategy == "elide"
        await pilot.press("escape")
        assert app.screen is screen


async def test_home_and_end_reach_the_first_and_last_eval_rows(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """As on the board: DataTable's own home and end move between columns, not rows."""
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_eval(app, pilot, OVER_TRIGGER)
        table = screen.query_one(DataTable)
        await pilot.press("down", "down", "end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.press("down", "enter")
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        assert preview.strategy == str(list(table.rows)[1].value)


async def test_eval_progress_bar_hides_once_done(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_eval(app, pilot, BELOW_TRIGGER)
        await pilot.pause()
        assert not screen.query_one("#eval-progress-bar").display
        assert static_text(screen, "#eval-what").strip() == "done"
        screen.rerun()  # r: the last run's "done" is not shown while this one reads
        assert screen.query_one("#eval-progress-bar").display
        assert static_text(screen, "#eval-what").strip() == "reading the session"
        await until(lambda: not screen.running, pilot)
        # Below the trigger every strategy declines: no ★, and the title says so.
        assert not any(r.best for r in screen.rows)
        assert "no strategy qualifies" in static_text(screen, "#eval-title")


async def test_palette_switches_strategy_and_opens_the_preview(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await select(app, OVER_TRIGGER)
        await pilot.press("ctrl+p")
        await pilot.press(*"Preview the compaction plan")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, PlanPreviewScreen), pilot)
        screen = app.screen
        assert isinstance(screen, PlanPreviewScreen)
        await until(lambda: screen.preview is not None, pilot)
        first = screen.preview
        await pilot.press("ctrl+p")
        await pilot.press(*"Strategy: cliff")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(lambda: screen.preview is not first and screen.preview is not None, pilot)
        assert screen.strategy == "cliff"
        assert screen.preview is not None and screen.preview.figures.strategy == "cliff"


async def test_plan_keys_can_be_remapped_by_binding_id(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory(keymap={"sessions.plan": "o", "plan.toggle_split": "u"})
    async with app.run_test(size=(120, 36)) as pilot:
        await select(app, OVER_TRIGGER)
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, PlanPreviewScreen)
        assert screen.split
        await pilot.press("u")
        assert not screen.split


async def test_g_and_shift_g_go_to_the_first_and_the_very_last_row(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    """`G` reaches the plan's last row (what the fork appends), on screen; `g` comes back."""
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_preview(app, pilot, OVER_TRIGGER)
        records = screen.query_one(RecordPairs)
        assert screen.preview is not None and records.rows == screen.preview.rows
        assert len(records.rows) > records.page_rows  # more than one page
        await pilot.press("G")
        await pilot.pause()
        assert records.cursor == len(records.rows) - 1
        top = int(records.scroll_offset.y)
        assert top <= records.cursor < top + records.page_rows
        await pilot.press("g")
        await pilot.pause()
        assert records.cursor == 0 and int(records.scroll_offset.y) == 0


async def test_the_preview_numbers_records_as_the_file_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a session with compactions, the title says where the live part starts, and each
    row's number is the file's record number of the very line it shows."""
    from gobtui.app import make_app
    from gobtui.services.run_settings import AppConfig
    from tests.adapters.test_live_part import _claude

    monkeypatch.setenv("GOBTUI_DATA_DIR", str(tmp_path / "data"))
    home = tmp_path / "claude"
    path, _start = _claude(home)
    (tmp_path / "codex").mkdir()
    session = load_session(path, Provider.CLAUDE)
    first = session.live_first_record
    assert first > 1
    app = make_app(
        AppConfig(
            claude_home=str(home),
            codex_home=str(tmp_path / "codex"),
            watch=False,
            use_cache=False,
            max_age_secs=None,
        )
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await until(lambda: app.sessions_screen.loaded, pilot)
        await pilot.press("p")
        screen = app.screen
        assert isinstance(screen, PlanPreviewScreen)
        await until(lambda: screen.preview is not None or screen.error is not None, pilot)
        await pilot.pause()
        assert screen.preview is not None
        assert f"live from rec {first:,}" in static_text(screen, "#plan-title")
        await pilot.press("t")  # below the default trigger: plan it anyway
        await until(lambda: screen.preview is not None and screen.preview.ignore_trigger, pilot)
        await pilot.pause()
        assert screen.preview is not None
        records = screen.query_one(RecordPairs)
        lines = path.read_bytes().splitlines()
        shown = [
            row
            for row in screen.preview.rows
            if row.before is not None and row.change is not RowChange.FOLD
        ]
        assert shown
        for row in shown:
            assert row.before is not None
            number = records.number(row.before.line)
            assert number >= first or row.before.line == 0
            assert lines[number - 1] == screen.preview.source_lines[row.before.line]
        top = shown[0].before
        assert top is not None
        assert (
            f"{records.number(top.line)} "
            in rendered_rows(records)[screen.preview.rows.index(shown[0])]
        )
