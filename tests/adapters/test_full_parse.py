"""adapters.full_parse: a parse split between this process (the head's items) and a Helper (the
state, and the tail's items: Codex) equals one pass over every line, wherever the split falls.

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

from adapters import full_parse, processes
from adapters.claude import parse_transcript as parse_claude
from adapters.codex import parse_transcript as parse_codex
from core.model import Transcript

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

    def __init__(self, func: Any, fd: int, size: int, path: str, split: int) -> None:
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


def test_a_claude_helper_asked_for_a_tail_fails_and_the_parse_is_whole(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude's Helper builds no items (its share is the whole file); asked to, it fails, and
    the parse falls back to one pass here."""
    path = fixtures_dir / "claude/marot__spotter__tool_heavy.jsonl"
    alone = dump(parse_claude(str(path)))
    failed: list[Exception] = []

    class Failing(InProcess):
        def __init__(self, *args: Any) -> None:
            try:
                super().__init__(*args)
            except ValueError as error:
                failed.append(error)
                self.answer = None

    monkeypatch.setattr(processes, "HELPER_MIN_BYTES", 0)
    monkeypatch.setattr(processes.Helper, "start", classmethod(lambda cls, *a: Failing(*a)))
    monkeypatch.setattr(full_parse, "split_point", lambda fd, size, share: size // 2)
    assert dump(parse_claude(str(path))) == alone
    assert len(failed) == 1


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
