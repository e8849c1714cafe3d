"""A compacted fork's context: unknown ("reset") from its state card on, until the resumed
session reports usage. Its usage records are the source's, from before the compaction, so
showing them would put the fork at the source's old occupancy (and over its trigger)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from adapters.planning import candidate_bytes, load_session, plan_session
from adapters.providers import parse_transcript, state_class
from adapters.reader import advance, open_cursor
from core.model import ContextState, Provider, SessionSummary
from core.policy import PolicyConfig
from gobtui.demo import build_demo_home

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
    cursor = open_cursor(str(path), provider, state_class(provider), full=True)  # type: ignore[arg-type]
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
def test_a_fork_reads_as_reset_until_the_resumed_session_reports_usage(
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

    cursor = open_cursor(str(fork), provider, state_class(provider), full=True)  # type: ignore[arg-type]
    for summary in (cursor.summary(), parse_transcript(provider, str(fork)).summary):
        assert summary is not None
        assert summary.context_state is ContextState.RESET
        assert summary.context_tokens is None

    records = [orjson.loads(line) for line in fork.read_bytes().splitlines()]
    with fork.open("ab") as out:
        out.write(_resumed(records, provider))
    cursor, changed = advance(cursor)
    assert changed
    for summary in (cursor.summary(), _summary(fork, provider)):
        assert summary is not None
        assert summary.context_state is ContextState.REPORTED
        assert summary.context_tokens == 1015


def test_a_card_quoted_later_in_a_prompt_is_not_a_fork() -> None:
    """Only a record whose text starts with the marker is a card."""
    from adapters.claude import _is_state_card

    quoted = {"type": "user", "message": {"content": "see [gobtui state card] above"}}
    listed = {
        "type": "user",
        "message": {"content": [{"type": "text", "text": "[gobtui state card]\ngoal: x"}]},
    }
    assert not _is_state_card(quoted)
    assert _is_state_card(listed)
