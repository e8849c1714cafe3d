"""`verify` (reference §7): structural checks of transcript bytes, before a fork is published.

Pure: bytes in, a report out. The generic line checks live here; the provider checks are in
core/verify_claude.py and core/verify_codex.py. Findings never quote transcript content.

Lines are split like the reference (on b"\\n"; a final newline ends the last line, it does not
start an empty one). Duplicate JSON keys are found without a slow parse of every line: orjson
keeps the last of duplicate keys, so a line whose orjson round trip gives back its exact bytes
cannot have had any (the round trip of a parse that dropped a key would lack that key). Only
the other lines (pretty-printed, ASCII-escaped, hand-written) pay for `json.loads` with an
object_pairs_hook. Real Claude Code and Codex lines round-trip.

What orjson refuses is not JSON (it reads an integer beyond 64 bits as a float, like the
reference's serde_json). Beyond the reference: a final line cut in the middle of a UTF-8
sequence is a torn tail (partial_tail) rather than an invalid_utf8 transcript.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import orjson
from pydantic import BaseModel, computed_field

from core.limits import VERIFY_MAX_BYTES, VERIFY_MAX_RECORDS
from core.model import Provider
from core.verify_claude import ClaudeChecker
from core.verify_codex import CodexChecker
from core.verify_findings import (
    Finding,
    FindingCode,
    FindingSink,
    LimitKind,
    Severity,
)

__all__ = [
    "Finding",
    "FindingCode",
    "LimitKind",
    "Severity",
    "VerifyReport",
    "oversize_report",
    "verify",
]

Record = dict[str, Any]


class VerifyReport(BaseModel):
    """The findings of one transcript, sorted by line with whole-file findings (line None) last.

    `records` counts the lines that hold a JSON value (blank, invalid and ambiguous lines
    excluded); it is 0 when a whole-file finding stopped the checks before any line was read.
    """

    provider: Provider
    findings: list[Finding]
    errors: int
    warnings: int
    records: int
    bytes: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """No error: a restore may proceed."""
        return self.errors == 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def clean(self) -> bool:
        """No finding at all: what publishing a compacted copy requires."""
        return not self.findings


def _report(provider: Provider, sink: FindingSink, records: int, size: int) -> VerifyReport:
    findings = sink.findings()
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    return VerifyReport(
        provider=provider,
        findings=findings,
        errors=errors,
        warnings=len(findings) - errors,
        records=records,
        bytes=size,
    )


def oversize_report(size: int, provider: Provider) -> VerifyReport:
    """The report of a transcript over the byte limit, for a caller that did not read it."""
    sink = FindingSink()
    sink.add(FindingCode.TRANSCRIPT_LIMIT, None, LimitKind.BYTES, size, VERIFY_MAX_BYTES)
    return _report(provider, sink, 0, size)


class RecordChecker(Protocol):
    """A provider's checks: fed every object record in file order, then finished."""

    def feed(self, line: int, record: Record) -> None: ...

    def finish(self) -> None: ...


def _checker(provider: Provider, sink: FindingSink) -> RecordChecker:
    if provider is Provider.CLAUDE:
        return ClaudeChecker(sink)
    return CodexChecker(sink)


def verify(data: bytes, provider: Provider) -> VerifyReport:
    """Every structural finding of one transcript's bytes."""
    size = len(data)
    if size > VERIFY_MAX_BYTES:
        return oversize_report(size, provider)
    sink = FindingSink()
    n_lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    if n_lines > VERIFY_MAX_RECORDS:
        # The reference reports bad UTF-8 before the record limit.
        bad_at = _utf8_error_offset(data)
        if bad_at is not None:
            sink.add(FindingCode.INVALID_UTF8, None, bad_at)
        else:
            sink.add(
                FindingCode.TRANSCRIPT_LIMIT, None, LimitKind.RECORDS, n_lines, VERIFY_MAX_RECORDS
            )
        return _report(provider, sink, 0, size)
    if not n_lines:
        sink.add(FindingCode.EMPTY, None)
        return _report(provider, sink, 0, size)
    checker = _checker(provider, sink)
    try:
        count = _read_lines(data, n_lines, sink, checker)
    except _NotUtf8 as error:  # nothing else is worth saying
        sink = FindingSink()
        sink.add(FindingCode.INVALID_UTF8, None, error.offset)
        return _report(provider, sink, 0, size)
    checker.finish()
    return _report(provider, sink, count, size)


class _DuplicateKey(Exception):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


def _strict_loads(line: bytes) -> Any:
    """json.loads refusing duplicate keys (_DuplicateKey)."""
    return json.loads(line, object_pairs_hook=_unique_object)


class _NotUtf8(Exception):
    def __init__(self, offset: int) -> None:
        self.offset = offset


def _read_lines(data: bytes, n_lines: int, sink: FindingSink, checker: RecordChecker) -> int:
    """Feed each line's object record to the checker, note the generic findings; the count of
    JSON values read. Raises _NotUtf8 (with the offset in `data`) at bad UTF-8."""
    loads, dumps = orjson.loads, orjson.dumps
    decode_error = orjson.JSONDecodeError
    find, starts = data.find, data.startswith
    feed = checker.feed
    view = memoryview(data)  # lines are zero-copy slices
    bad: list[int] = []
    count = 0
    start = 0
    for index in range(n_lines):
        end = find(b"\n", start)
        if end < 0:
            end = len(data)
        line = view[start:end]
        line_start, start = start, end + 1
        try:
            value = loads(line)
        except decode_error:
            try:
                blank = _blank(bytes(line), open_tail=end == len(data))
            except _NotUtf8 as error:
                raise _NotUtf8(line_start + error.offset) from None
            if blank:
                sink.add(FindingCode.BLANK_LINE, index)
            else:
                bad.append(index)
            continue
        try:
            encoded = dumps(value)
            same = len(encoded) == end - line_start and starts(encoded, line_start)
        except orjson.JSONEncodeError:  # orjson writes less deep a nesting than it reads
            same = False
        if not same:  # the slow, exact look for duplicate keys
            try:
                _strict_loads(bytes(line))
            except _DuplicateKey:
                sink.add(FindingCode.AMBIGUOUS_JSON, index)
                continue
            except (ValueError, RecursionError):
                pass  # orjson read it: valid JSON
        count += 1
        if type(value) is dict:
            if type(value.get("type")) is not str:
                sink.add(FindingCode.INVALID_RECORD, index)
            feed(index, value)
        else:
            sink.add(FindingCode.INVALID_RECORD, index)
    if len(bad) == 1 and bad[0] == n_lines - 1:
        # One bad line, the last: almost always a write torn by a live session.
        sink.add(FindingCode.PARTIAL_TAIL, bad[0])
    else:
        for index in bad:
            sink.add(FindingCode.INVALID_JSON, index)
    return count


def _blank(line: bytes, *, open_tail: bool) -> bool:
    """A line orjson refused: blank (True) or not JSON (False). Raises _NotUtf8 unless the
    bad UTF-8 is a tail torn inside a character (`open_tail`: the last line, no newline)."""
    if not line.strip():
        return True
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        if open_tail and error.reason == "unexpected end of data":
            return False
        raise _NotUtf8(error.start) from None
    return not text.strip()  # Unicode whitespace only


def _utf8_error_offset(data: bytes) -> int | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start
    return None
