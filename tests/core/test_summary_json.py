"""summary_from_json: what the summary cache wrote comes back equal, anything else is refused."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import orjson
import pytest

from gobtui.core.model import (
    CompactionEvent,
    ContextComponents,
    ContextState,
    Coverage,
    Provider,
    SessionSummary,
    SubagentRef,
    TurnState,
    UsageSample,
)
from gobtui.core.summary_json import summary_from_json, summary_to_json

FULL = SessionSummary(
    provider=Provider.CODEX,
    session_id="s-1",
    path="/h/s-1.jsonl",
    cwd="/work",
    model="gpt-5",
    title="fix the parser",
    context_tokens=120_000,
    context_window=272_000,
    context_state=ContextState.REPORTED,
    components=ContextComponents(1, 2, 3, 4),
    lifetime=ContextComponents(900, 800, None, 70),
    usage_history=[UsageSample(100, 1.5), UsageSample(200, None)],
    compactions=[CompactionEvent(ts=2.0, pre_tokens=150_000, trigger="auto")],
    records=12,
    bad_lines=1,
    bad_reasons={"not_json": 1},
    torn_tail=True,
    bytes=4096,
    mtime=1_700_000_000.25,
    coverage=Coverage.HEAD_TAIL,
    first_ts=1.0,
    last_ts=3.0,
    agent_id="a",
    parent_session_id="p",
    subagents=[SubagentRef("a", "/h/a.jsonl", 10, 2, 30, 4.0)],
    turn=TurnState.TOOL_PENDING,
    has_state_card=True,
    fork_as_published=True,
)


def as_json(summary: SessionSummary) -> Any:
    return orjson.loads(orjson.dumps(summary_to_json(summary)))


def test_every_field_comes_back() -> None:
    assert all(getattr(FULL, f.name) != f.default for f in fields(FULL) if f.name != "provider")
    assert summary_from_json(as_json(FULL)) == FULL
    bare = SessionSummary(provider=Provider.CLAUDE, session_id="x", path="/x.jsonl")
    assert summary_from_json(as_json(bare)) == bare


def test_a_whole_number_time_is_a_float() -> None:
    data = as_json(FULL) | {"mtime": 5, "first_ts": 7}
    back = summary_from_json(data)
    assert type(back.mtime) is float and back.mtime == 5.0 and back.first_ts == 7.0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("provider", "devin"),
        ("provider", 1),
        ("session_id", None),
        ("cwd", 3),
        ("context_tokens", "120k"),
        ("context_tokens", True),
        ("context_tokens", 1.5),
        ("context_state", "full"),
        ("components", [1, 2, 3, 4]),
        ("components", {"input_tokens": 1}),
        ("usage_history", {"ts": 1}),
        ("usage_history", [[1.0, 100]]),
        ("usage_history", [{"ts": "now", "context_tokens": 1}]),
        ("compactions", [{"ts": 1.0, "pre_tokens": "many", "trigger": None}]),
        ("records", -0.5),
        ("bad_reasons", {"not_json": "1"}),
        ("torn_tail", 1),
        ("mtime", "yesterday"),
        ("coverage", None),
        ("subagents", [{"agent_id": "a"}]),
        ("turn", "sleeping"),
        ("has_state_card", "yes"),
    ],
)
def test_a_malformed_field_is_refused(name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=name):
        summary_from_json(as_json(FULL) | {name: value})


def test_a_missing_field_or_not_an_object_is_refused() -> None:
    data = as_json(FULL)
    del data["turn"]
    with pytest.raises(ValueError, match="turn"):
        summary_from_json(data)
    not_summaries: tuple[object, ...] = (None, [], "summary", 3)
    for value in not_summaries:
        with pytest.raises(ValueError):
            summary_from_json(value)
