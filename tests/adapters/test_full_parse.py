"""A parse split between this process and a Helper equals one pass over every line, wherever
the split falls: adapters.full_parse (Codex: the Helper feeds the state and builds the tail's
items) and adapters.claude_parse (the Helper parses the tail, which is joined to the head).

The Helper's side runs in this process here (its function called directly), so every line
start of a fixture can be the split point quickly; test_claude and test_codex run real
forked and spawned Helpers.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from adapters import claude_parse, full_parse, processes
from adapters.claude import parse_transcript as parse_claude
from adapters.codex import parse_transcript as parse_codex
from core.model import Transcript, TranscriptItem

CASES = [
    ("codex/kvsankar__agent-history__session_with_compaction.jsonl", parse_codex),
    ("codex/jazzyalex__agent-sessions__codex_050_legacy.jsonl", parse_codex),
    ("oracle/codex-window.jsonl", parse_codex),
]
MAX_SPLITS = 40
"""Line starts tried per fixture (spread evenly over the file), to bound the test's time."""


def dump(transcript: Transcript) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    assert transcript.summary is not None
    return [dataclasses.astuple(i) for i in transcript.items], transcript.summary.model_dump()


class InProcess:
    """A Helper whose function ran here, at once."""

    answers: list[Any] = []
    forked = False  # (as a spawned one: no work stealing)

    def __init__(
        self, func: Any, fd: int, size: int, path: str, split: int, forked: Any = None
    ) -> None:
        self.answer = func(fd, size, path, split)
        InProcess.answers.append(self.answer)

    def result(self) -> Any:
        return self.answer

    def close(self) -> None:
        pass


def line_starts(data: bytes) -> list[int]:
    starts = [i + 1 for i, byte in enumerate(data) if byte == 0x0A and i + 1 < len(data)]
    step = max(1, len(starts) // MAX_SPLITS)
    return starts[::step]


@pytest.mark.parametrize(("relative", "parse"), CASES, ids=[c[0] for c in CASES])
def test_a_split_anywhere_equals_one_pass(
    fixtures_dir: Path, relative: str, parse: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fixtures_dir / relative
    alone = dump(parse(str(path)))
    monkeypatch.setattr(processes, "HELPER_MIN_BYTES", 0)  # a Helper for a small file
    monkeypatch.setattr(processes.Helper, "start", classmethod(lambda cls, *a: InProcess(*a)))
    for split in line_starts(path.read_bytes()):
        monkeypatch.setattr(full_parse, "split_point", lambda fd, size, share, at=split: at)
        InProcess.answers.clear()
        assert dump(parse(str(path))) == alone, f"split at byte {split}"
        (answer,) = InProcess.answers
        assert answer[1] is not None  # the Helper built the tail's items


CLAUDE_CASES = [
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    "claude/marot__spotter__tool_heavy.jsonl",
    "claude/kvsankar__agent-history__session_with_compaction.jsonl",
    "claude/jazzyalex__agent-sessions__schema_drift.jsonl",
    "oracle/claude-branch.jsonl",
]
CLAUDE_REPEATS = [  # a uuid used twice: a split between the two cannot be joined
    "claude/daaain__claude-code-log__edge_cases.jsonl",
    "claude/jazzyalex__agent-sessions__small.jsonl",
]


def claude_splits(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[bool], list[TranscriptItem]]:
    """Parse `path` split at each line start (the tail in process): whether each split was
    joined, and the tool results rebuilt with the head's calls. Every parse equals one pass."""
    alone = dump(parse_claude(str(path)))
    monkeypatch.setattr(processes, "HELPER_MIN_BYTES", 0)  # a Helper for a small file
    monkeypatch.setattr(processes.Helper, "start", classmethod(lambda cls, *a: InProcess(*a)))
    joined: list[bool] = []
    rebuilt: list[TranscriptItem] = []
    join, rebuild = claude_parse._join, claude_parse._rebuilt

    def joining(*args: Any, **kwargs: Any) -> bool:
        joined.append(join(*args, **kwargs))
        return joined[-1]

    def rebuilding(*args: Any) -> TranscriptItem:
        rebuilt.append(rebuild(*args))
        return rebuilt[-1]

    monkeypatch.setattr(claude_parse, "_join", joining)
    monkeypatch.setattr(claude_parse, "_rebuilt", rebuilding)
    splits = line_starts(path.read_bytes())
    for split in splits:
        monkeypatch.setattr(claude_parse, "split_point", lambda fd, size, share, at=split: at)
        assert dump(parse_claude(str(path))) == alone, f"split at byte {split}"
    assert len(joined) == len(splits)
    return joined, rebuilt


@pytest.mark.parametrize("relative", CLAUDE_CASES)
def test_a_claude_split_anywhere_is_joined_and_equals_one_pass(
    fixtures_dir: Path, relative: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    joined, _ = claude_splits(fixtures_dir / relative, monkeypatch)
    assert all(joined)


def test_a_claude_tool_result_answering_the_head_is_rebuilt(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rebuilt = claude_splits(
        fixtures_dir / "claude/marot__spotter__tool_heavy.jsonl", monkeypatch
    )
    assert rebuilt and all(item.label != "tool" for item in rebuilt)  # named by the head's call


@pytest.mark.parametrize("relative", CLAUDE_REPEATS)
def test_a_claude_split_between_a_repeated_uuid_is_read_on_here(
    fixtures_dir: Path, relative: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    joined, _ = claude_splits(fixtures_dir / relative, monkeypatch)
    assert not all(joined)


def test_split_point_is_a_line_start_or_the_end(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":3}')
    fd = os.open(path, os.O_RDONLY)
    try:
        assert full_parse.split_point(fd, 23, 0.2) == 8  # after the first newline past 4
        assert full_parse.split_point(fd, 23, 0.5) == 16
        assert full_parse.split_point(fd, 23, 0.9) == 23  # no newline after: no tail
        assert full_parse.split_point(fd, 23, 0.0) == 23
        assert full_parse.split_point(fd, 23, 1.0) == 23
    finally:
        os.close(fd)


def _assistant(uuid: str, msg_id: str) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": msg_id, "model": "claude-sonnet-4-5", "usage": usage, "content": []}
    return {"type": "assistant", "uuid": uuid, "message": message}


def test_a_claude_join_needs_each_response_s_records_together() -> None:
    """The usage history keeps one sample per response: a response whose records the tail has
    apart, or one the head has before its newest, cannot be joined exactly."""
    head = claude_parse.HalfState("s.jsonl")
    for n, msg_id in enumerate(["m1", "m2"]):
        record = _assistant(f"h{n}", msg_id)
        head.feed_parts(record, "assistant", record["uuid"], None)
    tail = head.starting_after()
    assert head.can_absorb(tail, ["m2", "m2", "m3"])  # the newest response straddles
    assert head.can_absorb(tail, ["m3", "m3", "m4"])
    assert not head.can_absorb(tail, ["m3", "m4", "m3"])  # apart in the tail
    assert not head.can_absorb(tail, ["m3", "m2"])  # the head's newest, after another
    assert not head.can_absorb(tail, ["m1"])  # an older response of the head's
    assert not head.can_absorb(tail, ["#x#1"])  # shaped like an anonymous response's key
