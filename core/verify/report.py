"""`verify` (reference §7): structural checks of transcript bytes, before a fork is published.

Pure: bytes in, a report out. The generic line checks live here and in .lines; a provider's
checks of its records come with the call (RecordChecks, from its package). Findings never
quote transcript content.

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
from collections.abc import Callable, Sequence

from pydantic import BaseModel, computed_field

from ..limits import VERIFY_MAX_BYTES, VERIFY_MAX_RECORDS
from ..model import Provider
from .findings import Finding, FindingCode, FindingSink, LimitKind, Severity
from .lines import LineFact, LineKind, LinePass, RecordChecks, read_facts


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


def report_of(provider: Provider, sink: FindingSink, records: int, size: int) -> VerifyReport:
    """The report of the findings in `sink`."""
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
    return report_of(provider, sink, 0, size)


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


def verify(data: bytes, checks: RecordChecks) -> VerifyReport:
    """Every structural finding of one transcript's bytes, its records read by `checks`
    (its provider's: adapters.providers.registry.verify_checks)."""
    size = len(data)
    if size > VERIFY_MAX_BYTES:
        return oversize_report(size, checks.provider)
    n_lines = count_lines(data)
    early = _early_report(data, n_lines, checks.provider)
    if early is not None:
        return early
    facts, starts = read_facts(data, n_lines, checks)
    return report_of_facts(checks, facts, lambda index: starts[index], size)


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def _early_report(data: bytes, n_lines: int, provider: Provider) -> VerifyReport | None:
    """The report of a transcript whose lines are not read: too many of them, or none."""
    if n_lines > VERIFY_MAX_RECORDS:
        return records_limit_report(provider, n_lines, len(data), utf8_error_offset(data))
    if not n_lines:
        sink = FindingSink()
        sink.add(FindingCode.EMPTY, None)
        return report_of(provider, sink, 0, len(data))
    return None


def records_limit_report(
    provider: Provider, n_lines: int, size: int, bad_utf8_at: int | None
) -> VerifyReport:
    sink = FindingSink()
    if bad_utf8_at is not None:  # the reference reports bad UTF-8 before the record limit
        sink.add(FindingCode.INVALID_UTF8, None, bad_utf8_at)
    else:
        sink.add(FindingCode.TRANSCRIPT_LIMIT, None, LimitKind.RECORDS, n_lines, VERIFY_MAX_RECORDS)
    return report_of(provider, sink, 0, size)


def report_of_facts(
    checks: RecordChecks, facts: Sequence[LineFact], line_start: Callable[[int], int], size: int
) -> VerifyReport:
    """The report of a transcript of `size` bytes whose lines have these facts."""
    provider = checks.provider
    for index, fact in enumerate(facts):
        if fact.kind is LineKind.NOT_UTF8:  # nothing else is worth saying
            sink = FindingSink()
            sink.add(FindingCode.INVALID_UTF8, None, line_start(index) + fact.offset)
            return report_of(provider, sink, 0, size)
    line_pass = LinePass(checks)
    for index, fact in enumerate(facts):
        line_pass.feed(index, fact)
    line_pass.finish(len(facts))
    return report_of(provider, line_pass.sink, line_pass.count, size)


def utf8_error_offset(data: bytes) -> int | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start
    return None
