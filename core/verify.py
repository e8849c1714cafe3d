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

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, computed_field

from .limits import VERIFY_MAX_BYTES, VERIFY_MAX_RECORDS
from .model import Provider
from .verify_findings import (
    Finding,
    FindingCode,
    FindingSink,
    LimitKind,
    Severity,
)
from .verify_lines import (
    LineFact,
    LineKind,
    LinePass,
    fact_reader,
    read_facts,
    read_line,
)

__all__ = [
    "Finding",
    "FindingCode",
    "LimitKind",
    "Severity",
    "SourceChecks",
    "VerifyReport",
    "oversize_report",
    "verify",
]


class FindingGroup(BaseModel):
    """Findings of one severity, code and message: how many, on which lines (0-based)."""

    severity: Severity
    code: FindingCode
    message: str
    count: int
    first_line: int | None
    last_line: int | None


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
    def groups(self) -> list[FindingGroup]:
        """The findings grouped by severity, code and message: how many, first and last
        line (a 2 MB Codex file can hold hundreds of one warning)."""
        found: dict[tuple[str, str, str], FindingGroup] = {}
        for f in self.findings:
            key = (f.severity.value, f.code.value, f.message)
            group = found.get(key)
            if group is None:
                found[key] = FindingGroup(
                    severity=f.severity, code=f.code, message=f.message, count=1,
                    first_line=f.line_index, last_line=f.line_index,
                )  # fmt: skip
            else:
                group.count += 1
                if f.line_index is not None:
                    group.last_line = f.line_index
        return list(found.values())

    @computed_field  # type: ignore[prop-decorator]
    @property
    def resume_verdict(self) -> str:
        """One sentence: whether the file is safe to resume, and why."""
        if self.errors:
            codes = sorted({f.code.value for f in self.findings if f.severity is Severity.ERROR})
            return (
                f"not safe to resume: {self.errors} error(s) ({', '.join(codes)}) would break "
                "the resume or lose context"
            )
        if self.warnings:
            return (
                f"safe to resume: {self.warnings} warning(s), none of which stops the client "
                "from resuming it"
            )
        return "safe to resume: no finding"

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


def added_findings(report: VerifyReport, baseline: VerifyReport) -> list[str]:
    """Finding codes `report` holds beyond `baseline` (counted per code), sorted: what a
    compacted copy broke, as opposed to what its source already carried."""
    extra = Counter(f.code.value for f in report.findings) - Counter(
        f.code.value for f in baseline.findings
    )
    return sorted(extra)


def accepts(report: VerifyReport, baseline: VerifyReport) -> bool:
    """A compacted copy is valid when it adds no finding to its source's: what the source
    already carried (the client resumes it as it is) is reported, never held against it."""
    return not added_findings(report, baseline)


def verify(data: bytes, provider: Provider) -> VerifyReport:
    """Every structural finding of one transcript's bytes."""
    size = len(data)
    if size > VERIFY_MAX_BYTES:
        return oversize_report(size, provider)
    n_lines = _count_lines(data)
    early = _early_report(data, n_lines, provider)
    if early is not None:
        return early
    facts, starts = read_facts(data, n_lines, provider)
    return _report_of_facts(provider, facts, lambda index: starts[index], size)


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def _early_report(data: bytes, n_lines: int, provider: Provider) -> VerifyReport | None:
    """The report of a transcript whose lines are not read: too many of them, or none."""
    if n_lines > VERIFY_MAX_RECORDS:
        return _records_limit_report(provider, n_lines, len(data), _utf8_error_offset(data))
    if not n_lines:
        sink = FindingSink()
        sink.add(FindingCode.EMPTY, None)
        return _report(provider, sink, 0, len(data))
    return None


def _records_limit_report(
    provider: Provider, n_lines: int, size: int, bad_utf8_at: int | None
) -> VerifyReport:
    sink = FindingSink()
    if bad_utf8_at is not None:  # the reference reports bad UTF-8 before the record limit
        sink.add(FindingCode.INVALID_UTF8, None, bad_utf8_at)
    else:
        sink.add(FindingCode.TRANSCRIPT_LIMIT, None, LimitKind.RECORDS, n_lines, VERIFY_MAX_RECORDS)
    return _report(provider, sink, 0, size)


def _report_of_facts(
    provider: Provider, facts: Sequence[LineFact], line_start: Callable[[int], int], size: int
) -> VerifyReport:
    """The report of a transcript of `size` bytes whose lines have these facts."""
    for index, fact in enumerate(facts):
        if fact.kind is LineKind.NOT_UTF8:  # nothing else is worth saying
            sink = FindingSink()
            sink.add(FindingCode.INVALID_UTF8, None, line_start(index) + fact.offset)
            return _report(provider, sink, 0, size)
    checks = LinePass(provider)
    for index, fact in enumerate(facts):
        checks.feed(index, fact)
    checks.finish(len(facts))
    return _report(provider, checks.sink, checks.count, size)


def _utf8_error_offset(data: bytes) -> int | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start
    return None


class SourceChecks:
    """verify() of one transcript kept line by line, so that a candidate built from it (its
    lines, some replaced, maybe some appended) is verified by reading only the new lines.

    `candidate_report(replaced, appended)` is verify() of the candidate's bytes: the source's
    lines with replaced[i] in place of line i, then the appended lines (each piece one whole
    line: its own "\n" ending it, the candidate's last line excepted). When every replaced
    line says what the line it replaces said, the pass resumes from the source's state after
    its last line; otherwise it runs over the facts again (new lines read once, memoized).
    Anything else (a piece that is not one whole line, a limit crossed) is verified from the
    joined bytes. `facts` and `starts` may come from a reader that already went through the
    source (core.verify_lines.read_value, line by line): they must be what read_facts gives.
    """

    def __init__(
        self,
        data: bytes,
        provider: Provider,
        facts: list[LineFact] | None = None,
        starts: list[int] | None = None,
    ) -> None:
        self.data = data
        self.provider = provider
        self._memo: dict[bytes, LineFact] = {}
        self._record_fact = fact_reader(provider)
        self._base_pass: LinePass | None = None
        self._report: VerifyReport | None = None
        n_lines = _count_lines(data)
        self.readable = len(data) <= VERIFY_MAX_BYTES and 0 < n_lines <= VERIFY_MAX_RECORDS
        self._bad_utf8 = False
        self._utf8_ok: bool | None = None
        """Whether an unread source is all valid UTF-8 (worked out when first needed)."""
        if not self.readable:
            self.facts: list[LineFact] = []
            self.starts: list[int] = []
            return
        if facts is None or starts is None:
            facts, starts = read_facts(data, n_lines, provider)
        self.facts, self.starts = facts, starts
        self._bad_utf8 = any(fact.kind is LineKind.NOT_UTF8 for fact in facts)

    @property
    def _base(self) -> LinePass | None:
        """The pass fed every source line, not finished (None when a line is not UTF-8)."""
        if self._base_pass is None and self.readable and not self._bad_utf8:
            base = LinePass(self.provider)
            for index, fact in enumerate(self.facts):
                base.feed(index, fact)
            self._base_pass = base
        return self._base_pass

    def report(self) -> VerifyReport:
        """verify(data, provider)."""
        if self._report is None:
            if not self.readable:
                self._report = verify(self.data, self.provider)
            elif self._base is None:
                starts = self.starts
                self._report = _report_of_facts(
                    self.provider, self.facts, lambda i: starts[i], len(self.data)
                )
            else:
                checks = self._base.clone()
                checks.finish(len(self.facts))
                self._report = _report(self.provider, checks.sink, checks.count, len(self.data))
        return self._report

    def line(self, index: int) -> bytes:
        """Source line `index` with its terminator."""
        starts = self._line_starts()
        return self.data[starts[index] : starts[index + 1]]

    def _line_starts(self) -> list[int]:
        """Where each source line starts, and the end: read_facts' for a readable source,
        found once (the first time a candidate needs them) for one over a limit."""
        if not self.starts and self.data:
            self.starts = _starts_of(self.data)
        return self.starts

    def materialize(self, replaced: Mapping[int, bytes], appended: Sequence[bytes]) -> bytes:
        """The candidate's bytes."""
        if not replaced:
            return self.data + b"".join(appended)
        pieces: list[bytes] = []
        at = 0
        for index in sorted(replaced):
            start, end = self._span(index)
            pieces.append(self.data[at:start])
            pieces.append(replaced[index])
            at = end
        pieces.append(self.data[at:])
        pieces.extend(appended)
        return b"".join(pieces)

    def _span(self, index: int) -> tuple[int, int]:
        starts = self._line_starts()
        return starts[index], starts[index + 1]

    def candidate_report(
        self, replaced: Mapping[int, bytes], appended: Sequence[bytes] = ()
    ) -> VerifyReport:
        """verify() of the candidate (see the class docstring)."""
        if not self.readable:
            return self._unread_candidate_report(replaced, appended)
        n_source = len(self.facts)
        if not self._whole_lines(replaced, appended):
            return verify(self.materialize(replaced, appended), self.provider)
        size = len(self.data) + sum(len(piece) for piece in appended)
        for index, piece in replaced.items():
            size += len(piece) - (self.starts[index + 1] - self.starts[index])
        if size > VERIFY_MAX_BYTES:
            return oversize_report(size, self.provider)
        n_lines = n_source + len(appended)
        if n_lines > VERIFY_MAX_RECORDS:
            return verify(self.materialize(replaced, appended), self.provider)
        new = {index: self._fact(piece) for index, piece in replaced.items()}
        added = [self._fact(piece) for piece in appended]
        facts = self.facts
        if (
            self._base is not None
            and all(fact == facts[index] for index, fact in new.items())
            and not any(fact.kind is LineKind.NOT_UTF8 for fact in added)
        ):
            checks = self._base.clone()
            for offset, fact in enumerate(added):
                checks.feed(n_source + offset, fact)
            checks.finish(n_lines)
            return _report(self.provider, checks.sink, checks.count, size)
        merged = list(facts)
        for index, fact in new.items():
            merged[index] = fact
        merged.extend(added)
        return _report_of_facts(
            self.provider, merged, lambda i: self._start(i, replaced, appended), size
        )

    def _start(self, index: int, replaced: Mapping[int, bytes], appended: Sequence[bytes]) -> int:
        """Where the candidate's line `index` starts."""
        starts = self.starts
        n_source = len(self.facts)
        before = min(index, n_source)
        shift = sum(
            len(piece) - (starts[i + 1] - starts[i]) for i, piece in replaced.items() if i < before
        )
        return starts[before] + shift + sum(len(piece) for piece in appended[: index - before])

    def _unread_candidate_report(
        self, replaced: Mapping[int, bytes], appended: Sequence[bytes]
    ) -> VerifyReport:
        """A candidate of a source verify does not read line by line (over a limit, or
        empty). Over the byte or record limit as well (elisions keep every line), its report
        needs no reading of its lines: no materialized copy and UTF-8 check per candidate."""
        if self.data and self._whole_lines(replaced, appended):
            starts = self._line_starts()
            size = len(self.data) + sum(len(piece) for piece in appended)
            for index, piece in replaced.items():
                size += len(piece) - (starts[index + 1] - starts[index])
            if size > VERIFY_MAX_BYTES:
                return oversize_report(size, self.provider)
            n_lines = len(starts) - 1 + len(appended)
            pieces = [*replaced.values(), *appended]
            if (
                n_lines > VERIFY_MAX_RECORDS
                and self._valid_utf8()
                and all(_utf8_error_offset(piece) is None for piece in pieces)
            ):
                return _records_limit_report(self.provider, n_lines, size, None)
        return verify(self.materialize(replaced, appended), self.provider)

    def _valid_utf8(self) -> bool:
        if self._utf8_ok is None:
            self._utf8_ok = _utf8_error_offset(self.data) is None
        return self._utf8_ok

    def _whole_lines(self, replaced: Mapping[int, bytes], appended: Sequence[bytes]) -> bool:
        """Each piece is one whole line: a "\n" at its end only, and absent only from the
        candidate's last line; replaced lines are lines of the source."""
        n_source = len(self._line_starts()) - 1 if self.data else 0
        last = n_source - 1 if not appended else None
        for index, piece in replaced.items():
            if not 0 <= index < n_source or not _one_line(piece, index == last):
                return False
        if appended:
            tail = replaced.get(n_source - 1, b"") or self.line(n_source - 1)
            if not tail.endswith(b"\n"):
                return False
            final = len(appended) - 1
            return all(_one_line(piece, i == final) for i, piece in enumerate(appended))
        return True

    def _fact(self, line: bytes) -> LineFact:
        found = self._memo.get(line)
        if found is None:
            found = self._memo[line] = read_line(line, self._record_fact)
        return found


def _one_line(piece: bytes, may_be_open: bool) -> bool:
    newline = piece.find(b"\n")
    if newline < 0:
        return may_be_open and bool(piece)
    return newline == len(piece) - 1


def _starts_of(data: bytes) -> list[int]:
    """Where each line of `data` starts, then len(data)."""
    starts = [0]
    find = data.find
    size = len(data)
    newline = find(b"\n")
    while newline >= 0 and newline + 1 < size:
        starts.append(newline + 1)
        newline = find(b"\n", newline + 1)
    starts.append(size)
    return starts
