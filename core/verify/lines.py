"""The line half of `verify`: what each physical line says (a LineFact), and the pass over them.

A line's fact is a pure function of its bytes: how it parses (a record, another JSON value,
blank, not JSON, ambiguous, not UTF-8) and what the provider's checks read from its record
(RecordChecks.fact: its package's verify module, adapters/providers/<name>/verify.py). The
file's findings come from a pass over the facts in order, so a transcript that shares most lines with one already
verified (a compacted candidate and its source) is checked by reading only its new lines;
`LinePass.clone` lets the pass resume from the source's state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from typing import Any, NamedTuple, Protocol

import orjson

from ..model import Provider
from .findings import FindingCode, FindingSink

Record = dict[str, Any]


class LineKind(Enum):
    RECORD = "record"
    """A JSON object with a string `type`."""
    UNTYPED_RECORD = "untyped_record"
    """A JSON object without a string `type` (invalid_record, still checked)."""
    NOT_OBJECT = "not_object"
    """Another JSON value (invalid_record)."""
    BLANK = "blank"
    BAD = "bad"
    """Not JSON (invalid_json, or partial_tail when it is the file's only bad line, last)."""
    AMBIGUOUS = "ambiguous"
    """A key repeated inside one object."""
    NOT_UTF8 = "not_utf8"


class LineFact(NamedTuple):
    kind: LineKind
    record: Any = None
    """The provider fact of a record (RECORD, UNTYPED_RECORD)."""
    offset: int = 0
    """NOT_UTF8: the first bad byte's offset in the line."""


_BLANK = LineFact(LineKind.BLANK)
_BAD = LineFact(LineKind.BAD)
_AMBIGUOUS = LineFact(LineKind.AMBIGUOUS)
_NOT_OBJECT = LineFact(LineKind.NOT_OBJECT)


class _DuplicateKey(Exception):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


def _has_duplicate_key(line: bytes) -> bool:
    """json.loads refusing duplicate keys: True when it finds one. A line orjson read is JSON:
    anything else json.loads raises (a deeper nesting) is not a duplicate."""
    try:
        json.loads(line, object_pairs_hook=_unique_object)
    except _DuplicateKey:
        return True
    except (ValueError, RecursionError):
        pass
    return False


def _refused(line: bytes, open_tail: bool) -> LineFact:
    """A line orjson refused: blank, not JSON, or not UTF-8 (with the offset of its first bad
    byte). A tail torn inside a character (`open_tail`: the file's last line, no newline) is
    not JSON rather than bad UTF-8."""
    if not line.strip():
        return _BLANK
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        if open_tail and error.reason == "unexpected end of data":
            return _BAD
        return LineFact(LineKind.NOT_UTF8, None, error.start)
    return _BAD if text.strip() else _BLANK  # Unicode whitespace only is blank


class RecordFacts(Protocol):
    def __call__(self, record: Record) -> Any: ...


class Checker(Protocol):
    """A provider's checks of one file's records, fed their facts in file order."""

    def feed_fact(self, line: int, fact: Any) -> None: ...

    def finish(self) -> None: ...

    def clone(self, sink: FindingSink) -> Checker: ...


class RecordChecks(NamedTuple):
    """A provider's checks of its records, as its package hands them out
    (ProviderPackage.verify_checks): the line checks here are everyone's, these read the
    records."""

    provider: Provider
    fact: RecordFacts
    """What the checks read from one record, a pure function of it (a record seen before
    is not read again)."""
    checker: Callable[[FindingSink], Checker]
    """A fresh checker of one file, reporting to the sink."""
    kind_key: str = "type"
    """The field naming a record's kind: an object without a string there is no record."""


def read_line(line: bytes, checks: RecordChecks) -> LineFact:
    """The fact of one physical line with its terminator (only the file's last line has none:
    an open tail)."""
    end = len(line) - 1 if line.endswith(b"\n") else len(line)
    return read_value(line, 0, end, end == len(line), checks)[0]


def read_value(
    data: bytes, start: int, end: int, open_tail: bool, checks: RecordChecks
) -> tuple[LineFact, Any]:
    """The fact of the line data[start:end] (its "\n" excluded, a "\r" kept) and the JSON value
    orjson read from it (None when it read none); `open_tail` when it is the file's last line
    and has no newline.

    Duplicate keys are found without a slow parse of every line: orjson keeps the last of
    duplicate keys, so a line whose orjson round trip gives back its exact bytes cannot have
    had any. Only the other lines pay for json.loads with an object_pairs_hook.
    """
    line = memoryview(data)[start:end]  # zero-copy
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _refused(bytes(line), open_tail), None
    try:
        encoded = orjson.dumps(value)
        same = len(encoded) == end - start and data.startswith(encoded, start)
    except orjson.JSONEncodeError:  # orjson writes less deep a nesting than it reads
        same = False
    if not same and _has_duplicate_key(bytes(line)):
        return _AMBIGUOUS, value
    if type(value) is dict:
        typed = type(value.get(checks.kind_key)) is str
        kind = LineKind.RECORD if typed else LineKind.UNTYPED_RECORD
        return LineFact(kind, checks.fact(value)), value
    return _NOT_OBJECT, value


class LinePass:
    """The checks over line facts fed in file order (lines holding no bad UTF-8). `finish`
    ends it; `clone` (before finishing) gives an independent pass in the same state."""

    __slots__ = ("bad", "checker", "count", "sink")

    def __init__(self, checks: RecordChecks | None, sink: FindingSink | None = None) -> None:
        self.sink = sink if sink is not None else FindingSink()
        self.checker: Checker | None = checks.checker(self.sink) if checks is not None else None
        self.bad: list[int] = []
        self.count = 0
        """JSON values read (blank, invalid and ambiguous lines excluded)."""

    def clone(self) -> LinePass:
        twin = LinePass(None, self.sink.copy())
        assert self.checker is not None
        twin.checker = self.checker.clone(twin.sink)
        twin.bad = list(self.bad)
        twin.count = self.count
        return twin

    def feed(self, index: int, fact: LineFact) -> None:
        kind = fact.kind
        if kind is LineKind.RECORD:
            self.count += 1
            assert self.checker is not None
            self.checker.feed_fact(index, fact.record)
        elif kind is LineKind.UNTYPED_RECORD:
            self.count += 1
            self.sink.add(FindingCode.INVALID_RECORD, index)
            assert self.checker is not None
            self.checker.feed_fact(index, fact.record)
        elif kind is LineKind.NOT_OBJECT:
            self.count += 1
            self.sink.add(FindingCode.INVALID_RECORD, index)
        elif kind is LineKind.BLANK:
            self.sink.add(FindingCode.BLANK_LINE, index)
        elif kind is LineKind.BAD:
            self.bad.append(index)
        elif kind is LineKind.AMBIGUOUS:
            self.sink.add(FindingCode.AMBIGUOUS_JSON, index)
        else:
            raise ValueError("a line of bad UTF-8 ends the checks; it is not fed")

    def finish(self, n_lines: int) -> None:
        assert self.checker is not None
        self.checker.finish()
        bad = self.bad
        if len(bad) == 1 and bad[0] == n_lines - 1:
            # One bad line, the last: almost always a write torn by a live session.
            self.sink.add(FindingCode.PARTIAL_TAIL, bad[0])
        else:
            for index in bad:
                self.sink.add(FindingCode.INVALID_JSON, index)


def read_facts(data: bytes, n_lines: int, checks: RecordChecks) -> tuple[list[LineFact], list[int]]:
    """Every line's fact, and where each line starts (plus len(data) at the end)."""
    find = data.find
    facts: list[LineFact] = []
    starts: list[int] = []
    size = len(data)
    start = 0
    for _ in range(n_lines):
        end = find(b"\n", start)
        if end < 0:
            end = size
        starts.append(start)
        facts.append(read_value(data, start, end, end == size, checks)[0])
        start = end + 1
    starts.append(min(start, size))
    return facts, starts
