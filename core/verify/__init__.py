"""`verify` (reference §7): structural checks of transcript bytes, before a fork is published.

By concern: .findings (the codes, their severities and fixed messages), .lines (what each
physical line says, and the pass over a file's lines), .report (the report, verify(), what a
copy adds to its source's findings), .source (a source's candidates verified by reading only
their new lines), .ids (the rule every provider's ids follow). A provider's checks of its
records are its package's (adapters/providers/<name>/verify.py), handed in as RecordChecks.
"""

from __future__ import annotations

from .findings import Finding, FindingCode, FindingSink, LimitKind, Severity
from .lines import RecordChecks
from .report import VerifyReport, accepts, added_findings, oversize_report, verify
from .source import SourceChecks

__all__ = [
    "Finding",
    "FindingCode",
    "FindingSink",
    "LimitKind",
    "RecordChecks",
    "Severity",
    "SourceChecks",
    "VerifyReport",
    "accepts",
    "added_findings",
    "oversize_report",
    "verify",
]
