"""The detail pane's facts, rendered as text."""

from __future__ import annotations

from rich.console import Console
from rich.style import Style

from gobtui.core.board import BoardPolicy, build_row
from gobtui.widgets.detail import facts
from gobtui.widgets.palette import BandStyles
from tests.core.test_board import NOW, summary

PLAIN = BandStyles(*(Style() for _ in range(6)))


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
