"""Helpers shared by the verify tests: a compact view of findings (the hand-written records
themselves are tests/builders' claude and codex ones)."""

from __future__ import annotations

from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.model import Provider
from gobtui.core.verify import VerifyReport, verify

Triple = tuple[str, str, int | None]
"""(code, severity, line_index) of one finding."""


def triples(report: VerifyReport) -> list[Triple]:
    return [(f.code.value, f.severity.value, f.line_index) for f in report.findings]


def check(data: bytes, provider: Provider) -> list[Triple]:
    report = verify(data, verify_checks(provider))
    # The counts always agree with the findings, whatever the transcript.
    assert report.errors == sum(1 for f in report.findings if f.severity == "error")
    assert report.warnings == len(report.findings) - report.errors
    assert report.bytes == len(data)
    return triples(report)
