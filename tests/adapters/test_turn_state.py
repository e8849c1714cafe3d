"""Who is up at the end of a real transcript file (SessionSummary.turn), for each state a
session can end in, through both the board's tail reader and the full parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.providers.reader import open_cursor
from gobtui.adapters.providers.registry import parse_transcript, state_class
from gobtui.core.model import Provider, TurnState
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession
from tests.builders.common import stable_uuid


def _claude(end: str) -> ClaudeSession:
    session = ClaudeSession(stable_uuid("turn", end))
    session.prompt("fix the totals")
    session.tool("Read", {"file_path": "/src/a.py"}, "x = 1\n")
    if end == "answered":
        session.say("Fixed: the totals round per line.", final=True)
    elif end == "pending":
        session.call("Bash", {"command": "rm -rf build"})
    elif end == "prompt":
        session.say("Done.", final=True)
        session.prompt("now the coupons")
    return session


def _codex(end: str) -> CodexSession:
    session = CodexSession(stable_uuid("turn", "codex", end))
    session.meta()
    session.turn("fix the totals")
    session.shell("sed -n 1,20p a.py", "x = 1\n")
    if end == "answered":
        session.answer("Fixed.")
    elif end == "pending":
        session._add(  # a call the user has not approved yet: no output follows
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c9"},
        )
    elif end == "prompt":
        session.answer("Done.")
        session.turn("now the coupons")
    return session  # "output": the shell call's output is the newest word


CASES = [
    ("claude", "answered", TurnState.TURN_ENDED),
    ("claude", "pending", TurnState.TOOL_PENDING),
    ("claude", "prompt", TurnState.RESPONDING),
    ("codex", "answered", TurnState.TURN_ENDED),
    ("codex", "pending", TurnState.TOOL_PENDING),
    ("codex", "prompt", TurnState.RESPONDING),
    ("codex", "output", TurnState.RESPONDING),
]


@pytest.mark.parametrize(("provider", "end", "turn"), CASES, ids=lambda v: str(v))
def test_the_turn_at_the_end_of_the_file(
    provider: str, end: str, turn: TurnState, tmp_path: Path
) -> None:
    if provider == "claude":
        path = _claude(end).write(tmp_path / "projects")
        kind = Provider.CLAUDE
    else:
        path = _codex(end).write(tmp_path / "sessions")
        kind = Provider.CODEX
    parsed = parse_transcript(kind, str(path)).summary
    assert parsed is not None and parsed.turn is turn
    cursor = open_cursor(str(path), kind, state_class(kind))
    assert cursor.summary().turn is turn
