"""The conversation screen under Pilot, in the real app on the demo home: it reads a Claude
and a Codex session in a worker, folds what should be folded, opens and folds again on
enter/space, moves with j/k/g/G/pgup/pgdn, searches (counts checked against core's search of
the same entries), closes on escape and q, and never draws a transcript's escapes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static

from gobtui.app import GobtuiApp
from gobtui.core.conversation import EntryKind, Part, counts, search
from gobtui.core.model import Provider, SessionSummary
from gobtui.screens.conversation import ConversationScreen, read_conversation
from gobtui.widgets.conversation_view import ConversationView
from tests.builders.hostile import FORBIDDEN, claude_hostile
from tests.gobtui.pilot_helpers import on_top, until, workers_done

CLAUDE = "dotfiles"
CODEX = "notebooks"


async def open_conversation(
    app: GobtuiApp,
    pilot: Pilot[None],
    project: str | None = None,
    summary: SessionSummary | None = None,
) -> ConversationScreen:
    await asyncio.wait_for(app.first_paint.wait(), timeout=30)
    if summary is None:
        row = next(r for r in app.sessions_screen.rows.values() if r.project == project)
        summary = row.summary
    screen = ConversationScreen(summary)
    await app.push_screen(screen)
    await until(lambda: screen.entries is not None or screen.error is not None, pilot)
    await workers_done(app)
    await pilot.pause()
    return screen


def title(screen: ConversationScreen) -> str:
    return str(screen.query_one("#conversation-title", Static).render())


def rows(view: ConversationView) -> list[str]:
    width = view.scrollable_content_region.width
    return [view.render_row(i, width, False).text for i in range(view.row_count())]


async def search_for(pilot: Pilot[None], screen: ConversationScreen, query: str) -> None:
    await pilot.press("slash")
    assert screen.query_one("#conversation-search", Input).has_focus
    await pilot.press(*query, "enter")
    await until(lambda: screen.searching is None and screen.result is not None, pilot)
    await pilot.pause()


async def test_a_claude_session_opens_folded(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, CLAUDE)
        entries = screen.entries
        assert entries is not None and screen.error is None
        assert entries == read_conversation(screen.summary)
        figures = counts(entries)
        assert f"CONVERSATION  {CLAUDE} · {figures.messages} messages" in title(screen)
        view = screen.query_one(ConversationView)
        assert view.has_focus and view.cursor_entry == 0
        # every fold is one row; prompts and answers are drawn whole
        folds = [e for e in entries if e.foldable]
        assert folds and not view.opened
        assert {e.kind for e in folds} >= {EntryKind.TOOL_CALL, EntryKind.TOOL_RESULT}
        assert view.row_count() == sum(
            len(view._body_rows(i)) if e.is_message else 1 for i, e in enumerate(entries)
        )
        drawn = rows(view)
        assert drawn[0].startswith("user    ") and entries[0].body.split("\n")[0][:20] in drawn[0]
        call = next(i for i, e in enumerate(entries) if e.kind is EntryKind.TOOL_CALL)
        assert drawn[view._starts[call]].strip().startswith(f"▸  {entries[call].header[:20]}")


async def test_enter_and_space_open_and_fold_the_focused_item(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, CLAUDE)
        view = screen.query_one(ConversationView)
        entries = screen.entries
        assert entries is not None
        await pilot.press("enter")  # a prompt: nothing to fold
        assert not view.opened
        target = next(i for i, e in enumerate(entries) if e.kind is EntryKind.TOOL_CALL)
        await pilot.press(*["j"] * target)
        assert view.cursor_entry == target
        before = view.row_count()
        await pilot.press("enter")
        body = view._body_rows(target)
        assert view.opened == {target} and view.row_count() == before + len(body)
        drawn = rows(view)
        top = view._starts[target]
        assert drawn[top].strip().startswith("▾")
        first = entries[target].body.split("\n")[0]
        assert drawn[top + 1].strip() == f"│  {first}"[: len(drawn[top + 1].strip())]
        await pilot.press("space")
        assert not view.opened and view.row_count() == before
        await pilot.press("space")
        assert view.opened == {target}


async def test_movement_keys(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, CLAUDE)
        view = screen.query_one(ConversationView)
        last = len(screen.entries or []) - 1
        await pilot.press("j", "j", "k")
        assert view.cursor_entry == 1
        await pilot.press("G")
        await pilot.pause()
        assert view.cursor_entry == last
        assert view.scroll_offset.y == view.row_count() - view.page_rows
        await pilot.press("g")
        await pilot.pause()
        assert view.cursor_entry == 0 and view.scroll_offset.y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        top = int(view.scroll_offset.y)
        assert top == view.page_rows
        # the cursor is on the first entry that starts in the new page
        assert view._starts[view.cursor_entry] >= top
        assert view._starts[view.cursor_entry] < top + view.page_rows
        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_offset.y == 0 and view.cursor_entry == 0
        # j past the page's end scrolls the cursor's entry into view
        for _ in range(40):
            await pilot.press("j")
        await pilot.pause()
        start = view._starts[view.cursor_entry]
        assert view.scroll_offset.y <= start < view.scroll_offset.y + view.page_rows


async def test_search_counts_highlights_and_moves(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, CLAUDE)
        view = screen.query_one(ConversationView)
        entries = screen.entries
        assert entries is not None
        expected = search(entries, "keymap").matches
        assert len(expected) > 3
        await search_for(pilot, screen, "keymap")
        assert not screen.query_one("#conversation-search", Input).display
        assert view.has_focus
        assert f"“keymap”: match 1 of {len(expected)}" in title(screen)
        await pilot.press("n", "n")
        assert f"match 3 of {len(expected)}" in title(screen)
        third = expected[2]
        assert view.cursor_entry == third.entry
        if third.part is Part.BODY and entries[third.entry].foldable:
            assert third.entry in view.opened  # a match in a fold opens it
        row = view.row_of(third)
        assert view.scroll_offset.y <= row < view.scroll_offset.y + view.page_rows
        # the current match is drawn in its own style, the others in theirs
        strip = view.render_row(row, view.scrollable_content_region.width, False)
        current = view.get_component_rich_style("conversation-view--match-current", partial=True)
        marked = "".join(s.text for s in strip if s.style and s.style.reverse == current.reverse)
        assert "keymap" in marked.lower()
        await pilot.press("N")
        assert f"match 2 of {len(expected)}" in title(screen)
        await pilot.press("N", "N")  # from the first, back round to the last
        assert f"match {len(expected)} of {len(expected)}" in title(screen)
        assert view.cursor_entry == expected[-1].entry
        assert search(entries, "KeyMap").matches == []
        await search_for(pilot, screen, "KeyMap")  # a capital letter: case matters
        assert "“KeyMap”: no match" in title(screen)
        await pilot.press("n")  # no matches: nothing moves
        assert "no match" in title(screen)


async def test_a_fold_a_match_opened_folds_again_unless_the_reader_took_it(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, CLAUDE)
        view = screen.query_one(ConversationView)
        entries = screen.entries
        assert entries is not None
        matches = search(entries, "install.sh").matches
        in_folds = {m.entry for m in matches if m.part is Part.BODY and entries[m.entry].foldable}
        assert len(in_folds) >= 3
        await search_for(pilot, screen, "install.sh")
        for step in range(len(matches)):
            match = matches[step]
            assert view.cursor_entry == match.entry
            # only the fold holding the current match is open
            assert view.opened == ({match.entry} if match.entry in in_folds else set())
            await pilot.press("n")
        assert screen.current == 0  # round to the first again
        first_fold = matches[next(i for i, m in enumerate(matches) if m.entry in in_folds)]
        while matches[screen.current or 0].entry != first_fold.entry:
            await pilot.press("n")
        await pilot.press("space", "space")  # folded, then opened by the reader: it stays
        assert view.opened == {first_fold.entry}
        while matches[screen.current or 0].entry == first_fold.entry:
            await pilot.press("n")
        assert first_fold.entry in view.opened


async def test_escape_closes_the_search_box_then_the_screen_and_q_closes(
    demo_app_factory: Callable[..., GobtuiApp],
) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, CLAUDE)
        await pilot.press("slash", "q")  # typed into the box, not a close
        box = screen.query_one("#conversation-search", Input)
        assert app.screen is screen and box.value == "q"
        await pilot.press("escape")
        assert app.screen is screen and not box.display
        await pilot.press("escape")
        await pilot.pause()
        assert on_top(app) is app.sessions_screen
        screen = await open_conversation(app, pilot, CLAUDE)
        await pilot.press("q")
        await pilot.pause()
        assert on_top(app) is app.sessions_screen and app.is_running


async def test_a_codex_session(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_conversation(app, pilot, CODEX)
        entries = screen.entries
        assert entries is not None
        kinds = {e.kind for e in entries}
        assert {EntryKind.USER, EntryKind.ASSISTANT, EntryKind.TOOL_CALL} <= kinds
        assert EntryKind.THINKING in kinds and EntryKind.CONTEXT in kinds
        assert "Codex" in title(screen)
        view = screen.query_one(ConversationView)
        answer = next(i for i, e in enumerate(entries) if e.kind is EntryKind.ASSISTANT)
        assert rows(view)[view._starts[answer]].startswith("codex   ")


async def test_a_hostile_transcript_draws_no_escape(
    demo_app_factory: Callable[..., GobtuiApp], tmp_path: Path
) -> None:
    path = claude_hostile(tmp_path / "hostile" / "projects")
    summary = SessionSummary(
        provider=Provider.CLAUDE,
        session_id=path.stem,
        path=str(path),
        cwd="/home/dev/\x1b]0;PWNED\x07x",
        title="\x1b[2Jtitle",
        bytes=path.stat().st_size,
    )
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_conversation(app, pilot, summary=summary)
        assert screen.entries
        view = screen.query_one(ConversationView)
        view.opened = {i for i, e in enumerate(screen.entries) if e.foldable}
        view._layout()  # everything open: every body drawn
        drawn = "\n".join([title(screen), *rows(view)])
        assert not [n for n in FORBIDDEN if n in drawn.encode("utf-8")]
        assert "␛[2J" in drawn and "␛]0;PWNED-TITLE␇" in drawn


async def test_an_unreadable_file_says_so(demo_app_factory: Callable[..., GobtuiApp]) -> None:
    summary = SessionSummary(provider=Provider.CODEX, session_id="gone", path="/nonexistent.jsonl")
    app = demo_app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation(app, pilot, summary=summary)
        assert screen.entries is None and screen.error is not None
        assert "cannot show: cannot read the transcript" in title(screen)
        assert rows(screen.query_one(ConversationView))[0].startswith("cannot show")
