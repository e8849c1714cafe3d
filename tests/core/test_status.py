"""A session's status from who is up at the end of its transcript and how long ago it was
written (core.status), and the board's attention order."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from gobtui.core.board import BoardPolicy, SortKey, build_board, sort_rows
from gobtui.core.limits import (
    STATUS_ENDED_SECS,
    STATUS_QUIET_SECS,
    STATUS_STALL_SECS,
    STATUS_WAITING_SECS,
)
from gobtui.core.model import TurnState
from gobtui.core.status import Status, started_waiting, status_of
from tests.core.test_board import NOW, summary

ENDED, PENDING, UP = TurnState.TURN_ENDED, TurnState.TOOL_PENDING, TurnState.RESPONDING


@pytest.mark.parametrize(
    ("turn", "age", "live", "expected"),
    [
        (ENDED, 5, True, Status.WAITING),
        (ENDED, STATUS_WAITING_SECS + 1, False, Status.IDLE),
        (PENDING, 2, True, Status.WORKING),
        (PENDING, STATUS_QUIET_SECS + 1, True, Status.APPROVAL),
        (PENDING, STATUS_WAITING_SECS + 1, False, Status.IDLE),
        (UP, 2, True, Status.WORKING),
        (UP, STATUS_STALL_SECS + 1, False, Status.IDLE),
        (UP, 9 * 60, False, Status.IDLE),  # quiet past the live window: working is live
        (UP, 9 * 60, True, Status.WORKING),  # (a longer live window, --live-secs)
        (PENDING, 2, False, Status.APPROVAL),  # a call left pending, seen after the window
        (None, 2, True, Status.WORKING),
        (None, 400, False, Status.IDLE),
        (ENDED, STATUS_ENDED_SECS, False, Status.ENDED),
        (UP, STATUS_ENDED_SECS + 5, False, Status.ENDED),
    ],
)
def test_status_of(turn: TurnState | None, age: float, live: bool, expected: Status) -> None:
    assert status_of(turn, age, live) is expected


def test_starting_to_wait_is_told_once() -> None:
    assert started_waiting(Status.WORKING, Status.WAITING)
    assert started_waiting(Status.WORKING, Status.APPROVAL)
    assert not started_waiting(Status.WAITING, Status.WAITING)
    assert not started_waiting(Status.APPROVAL, Status.WAITING)
    assert not started_waiting(None, Status.WAITING)  # a session seen for the first time
    assert not started_waiting(Status.WAITING, Status.IDLE)


def test_attention_puts_waiting_first_then_the_newest() -> None:
    rows = build_board(
        [
            replace(summary("/h/idle.jsonl", mtime=NOW - 3 * 3600), turn=UP),
            replace(summary("/h/work.jsonl", mtime=NOW - 2), turn=UP),
            replace(summary("/h/old-wait.jsonl", mtime=NOW - 600), turn=ENDED),
            replace(summary("/h/wait.jsonl", mtime=NOW - 60), turn=ENDED),
            replace(summary("/h/ask.jsonl", mtime=NOW - 90), turn=PENDING),
            replace(summary("/h/gone.jsonl", mtime=NOW - 3 * 86400), turn=ENDED),
        ],
        BoardPolicy(),
        NOW,
    )
    assert [r.key for r in sort_rows(rows, SortKey.ATTENTION)] == [
        "/h/wait.jsonl",
        "/h/old-wait.jsonl",
        "/h/ask.jsonl",
        "/h/work.jsonl",
        "/h/idle.jsonl",
        "/h/gone.jsonl",
    ]


def test_between_two_limits_a_status_holds() -> None:
    """The board looks at a row again only when its age crosses a limit: between two of
    them, status_of and the live flag give the same answer at every age."""
    from gobtui.core.limits import HOT_SECS
    from gobtui.core.status import status_limits

    limits = [0.0, *status_limits(HOT_SECS), 2 * STATUS_ENDED_SECS]
    for turn in (ENDED, PENDING, UP, None):
        for low, high in itertools.pairwise(limits):
            ages = [low + 0.6, (low + high) / 2, high - 0.01]
            seen = {(status_of(turn, a, a <= HOT_SECS), a <= HOT_SECS) for a in ages if a > low}
            assert len(seen) == 1, (turn, low, high, seen)
