"""The board's status marks and what each means: one legend for the table's marks, the
header's counts, `?` help and the README (tests/gobtui/test_readme.py holds it to this)."""

from __future__ import annotations

from gobtui.core.limits import (
    HOT_SECS,
    STATUS_ENDED_SECS,
    STATUS_QUIET_SECS,
    STATUS_WAITING_SECS,
)
from gobtui.core.status import Status

STATUS_GLYPHS = {
    Status.WAITING: "◆",
    Status.APPROVAL: "?",
    Status.WORKING: "●",
    Status.IDLE: "○",
    Status.ENDED: "·",
}

STATUS_MEANINGS = {
    Status.WAITING: f"waiting for you: its turn ended (under {STATUS_WAITING_SECS // 3600} hours ago)",
    Status.APPROVAL: f"maybe waiting for an approval: a tool call quiet for {STATUS_QUIET_SECS} s",
    Status.WORKING: f"working: its turn goes on, written in the last {HOT_SECS // 60} minutes",
    Status.IDLE: "idle: quiet, waiting for no one (so is a fork not yet resumed)",
    Status.ENDED: f"ended: no write for {STATUS_ENDED_SECS // 3600} hours",
}


def status_legend() -> list[tuple[str, str]]:
    """(mark, meaning) for each status, in attention order."""
    return [(STATUS_GLYPHS[status], STATUS_MEANINGS[status]) for status in Status]


def legend_line() -> str:
    """The legend on one line: `◆ waiting · ? approval? · ● working · ○ idle · · ended`."""
    return " · ".join(f"{STATUS_GLYPHS[status]} {status.value}" for status in Status)
