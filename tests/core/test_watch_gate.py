"""The watch gate: which sessions over their trigger are planned, and why the others are not."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from gobtui.core.policy import PolicyConfig
from gobtui.core.watch import Gate, SessionState, gate

NOW = 1_000_000.0
POLICY = PolicyConfig(min_interval_secs=300, apply_hold_secs=1_800)


_DUE = SessionState(
    over_trigger=True, live=False, unresumed_fork=False, last_published_ts=None, last_failed_ts=None
)


def state(**changes: Any) -> SessionState:  # (fields of several types)
    return replace(_DUE, **changes)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, Gate.PLAN),
        ({"over_trigger": False, "live": True}, Gate.BELOW_TRIGGER),
        ({"live": True, "last_published_ts": NOW - 10}, Gate.PROVIDER_COMPACT),
        ({"unresumed_fork": True}, Gate.UNRESUMED_FORK),
        ({"last_published_ts": NOW - 1_799}, Gate.HELD),
        ({"last_published_ts": NOW - 1_800}, Gate.PLAN),
        ({"last_failed_ts": NOW - 299}, Gate.RETRY_WAIT),
        ({"last_failed_ts": NOW - 300}, Gate.PLAN),
    ],
)
def test_the_gate(changes: dict[str, Any], expected: Gate) -> None:
    assert gate(state(**changes), POLICY, NOW) is expected
