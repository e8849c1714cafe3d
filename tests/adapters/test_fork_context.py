"""A compacted fork's context: its own projected one from the start. Its latest usage is
restated to what the plan projected (a copied one would put the fork at the source's old
occupancy, over its trigger, and the real clients compact it again on resume); once the
resumed session reports usage, that takes over."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.planning.load import candidate_bytes, load_session, plan_session
from gobtui.adapters.providers.reader import advance, open_cursor
from gobtui.adapters.providers.registry import parse_transcript, state_class
from gobtui.core.model import ContextState, Provider, SessionSummary
from gobtui.core.policy import PolicyConfig
from gobtui.demo.home import build_demo_home

LOW = PolicyConfig(
    trigger_tokens=1, floor_tokens=0, min_savings_tokens=0, keep_recent_tool_outputs=0
)
DEMO_NOW = 1_790_000_000.0


def _source(provider: Provider, fixture_copy: Callable[[str], Path], tmp_path: Path) -> Path:
    """A session with outputs to elide: a real Claude one; for Codex (no shared fixture has
    elidable outputs) an idle session of the demo home."""
    if provider is Provider.CLAUDE:
        return fixture_copy("claude/marot__spotter__tool_heavy.jsonl")
    home = build_demo_home(tmp_path / "demo", now=DEMO_NOW)
    return next(
        p for p in home.sessions if p.is_relative_to(home.codex_home) and p not in home.live_paths
    )


def _summary(path: Path, provider: Provider) -> SessionSummary:
    cursor = open_cursor(str(path), provider, state_class(provider), full=True)
    return cursor.summary()


def _resumed(records: list[dict[str, object]], provider: Provider) -> bytes:
    """What the provider writes when the fork is resumed: a request reporting 1,015 tokens."""
    if provider is Provider.CLAUDE:
        card = next(r for r in reversed(records) if r.get("type") == "user")
        answer = {
            "parentUuid": card["uuid"],
            "type": "assistant",
            "uuid": "5e0c9b1e-0000-4000-8000-00000000f0f0",
            "sessionId": card.get("sessionId"),
            "timestamp": "2026-11-30T03:00:00.000Z",
            "message": {
                "id": "msg_resumed",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": "Picking up from the card."}],
                "usage": {
                    "input_tokens": 10,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 1000,
                    "output_tokens": 5,
                },
            },
        }
        return orjson.dumps(answer) + b"\n"
    usage = {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 15}
    event = {
        "timestamp": "2026-11-30T03:00:00.000Z",
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {"last_token_usage": usage, "total_token_usage": usage},
        },
    }
    return orjson.dumps(event) + b"\n"


@pytest.mark.parametrize("provider", [Provider.CLAUDE, Provider.CODEX])
def test_a_fork_reads_as_its_projected_context_until_the_resumed_session_reports_usage(
    provider: Provider, fixture_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    source = _source(provider, fixture_copy, tmp_path)
    before = _summary(source, provider)
    assert before.context_state is ContextState.REPORTED and before.context_tokens

    session = load_session(source, provider)
    plan = plan_session(session, "compacted", LOW).plan
    assert plan is not None and plan.digest is not None
    fork = tmp_path / "fork.jsonl"
    fork.write_bytes(candidate_bytes(session, plan))

    assert plan.projection is not None
    projected = plan.projection.context_tokens_after
    card = session.transcript.calibration.tokens(plan.digest.estimate_overhead())
    tail = session.transcript.calibration.tail_tokens
    # Claude's restated usage sits on the newest response: the card (and what followed that
    # response) come after it, and the client estimates those; Codex's comes after them all.
    expected = projected if provider is Provider.CODEX else projected - card - tail
    cursor = open_cursor(str(fork), provider, state_class(provider), full=True)
    for summary in (cursor.summary(), parse_transcript(provider, str(fork)).summary):
        assert summary is not None
        assert summary.context_state is ContextState.REPORTED
        assert summary.context_tokens == expected < before.context_tokens

    records = [orjson.loads(line) for line in fork.read_bytes().splitlines()]
    with fork.open("ab") as out:
        out.write(_resumed(records, provider))
    cursor, changed = advance(cursor)
    assert changed
    for summary in (cursor.summary(), _summary(fork, provider)):
        assert summary is not None
        assert summary.context_state is ContextState.REPORTED
        assert summary.context_tokens == 1015
