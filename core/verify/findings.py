"""The vocabulary of `verify` (reference §7): severities, finding codes, their fixed messages.

A message is a fixed sentence per code; the only variable parts are numbers (line indexes,
counts, limits) and words of this module's own closed vocabularies, never transcript content.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Severity(StrEnum):
    ERROR = "error"
    """The resumed session breaks or silently loses context."""
    WARNING = "warning"
    """Suspicious but usually survivable."""


class FindingCode(StrEnum):
    # generic (every provider)
    TRANSCRIPT_LIMIT = "transcript_limit"
    INVALID_UTF8 = "invalid_utf8"
    INVALID_RECORD = "invalid_record"
    AMBIGUOUS_JSON = "ambiguous_json"
    INVALID_JSON = "invalid_json"
    EMPTY = "empty"
    BLANK_LINE = "blank_line"
    PARTIAL_TAIL = "partial_tail"
    # Claude Code
    INVALID_UUID = "invalid_uuid"
    INVALID_PARENT_UUID = "invalid_parent_uuid"
    INVALID_CHAIN_HEAD = "invalid_chain_head"
    MISSING_CHAIN_HEAD = "missing_chain_head"
    BROKEN_PARENT_CHAIN = "broken_parent_chain"
    DUPLICATE_UUID = "duplicate_uuid"
    ORPHANED_TOOL_USE = "orphaned_tool_use"
    INTERRUPTED_TOOL_USE = "interrupted_tool_use"
    THINKING_AFTER_CHANGE = "thinking_after_change"
    """A fork against its source (not one file's structure): core.thinking."""
    # Claude Code and Codex
    DUPLICATE_TOOL_CALL_ID = "duplicate_tool_call_id"
    ORPHANED_TOOL_RESULT = "orphaned_tool_result"
    # Codex
    INVALID_ORDINAL = "invalid_ordinal"
    NON_MONOTONIC_ORDINAL = "non_monotonic_ordinal"
    MALFORMED_COMPACTED = "malformed_compacted"
    INVALID_RESPONSE_ITEM = "invalid_response_item"
    UNSUPPORTED_RESPONSE_ITEM = "unsupported_response_item"
    DUPLICATE_TOOL_RESULT = "duplicate_tool_result"
    UNPAIRED_TOOL_CALL = "unpaired_tool_call"


class LimitKind(StrEnum):
    """Which limit a transcript_limit finding is about (the word in its message)."""

    BYTES = "byte"
    RECORDS = "record"
    HISTORY_ITEMS = "replacement history item"
    CONTEXT_ITEMS = "effective context item"


_E, _W = Severity.ERROR, Severity.WARNING
C = FindingCode

RULES: dict[FindingCode, tuple[Severity, str]] = {
    C.TRANSCRIPT_LIMIT: (_E, "{0} limit exceeded: {1} > {2}"),
    C.INVALID_UTF8: (_E, "transcript is not valid UTF-8 (first bad byte at offset {0})"),
    C.INVALID_RECORD: (_E, "record must be a JSON object with a string type"),
    C.AMBIGUOUS_JSON: (_E, "record repeats a key inside one JSON object"),
    C.INVALID_JSON: (_E, "line is not valid JSON"),
    C.EMPTY: (_W, "transcript is empty"),
    C.BLANK_LINE: (_W, "line is blank"),
    C.PARTIAL_TAIL: (_W, "final line is not valid JSON (a torn write at the tail of a live file?)"),
    C.INVALID_UUID: (
        _E,
        "uuid must be a nonempty string of at most 256 bytes without control characters",
    ),
    C.INVALID_PARENT_UUID: (
        _E,
        "parentUuid must be null or a nonempty string of at most 256 bytes without control "
        "characters",
    ),
    C.INVALID_CHAIN_HEAD: (_W, "last-prompt record has a leafUuid that is not a nonempty string"),
    C.MISSING_CHAIN_HEAD: (_E, "last-prompt leafUuid names no record of the transcript"),
    C.BROKEN_PARENT_CHAIN: (
        _W,
        "parentUuid matches no uuid on an earlier line (a session continued from another file, "
        "or a parent that was never written)",
    ),
    C.DUPLICATE_UUID: (_E, "uuid already used by record {0}"),
    C.ORPHANED_TOOL_USE: (_E, "tool_use has no tool_result on a later line of the live branch"),
    C.INTERRUPTED_TOOL_USE: (
        _W,
        "tool_use after the live branch's last user record has no tool_result (an interrupted "
        "call: the client answers it on resume)",
    ),
    C.THINKING_AFTER_CHANGE: (
        _E,
        "thinking block at or after the first message the fork changed: the provider's "
        "prefix check refuses it (preserved thinking)",
    ),
    C.DUPLICATE_TOOL_CALL_ID: (_E, "tool call id already used by record {0} of the live context"),
    C.ORPHANED_TOOL_RESULT: (_W, "tool result answers no earlier tool call of the live context"),
    C.INVALID_ORDINAL: (_E, "ordinal must be an integer from 0 to 2^64-1"),
    C.NON_MONOTONIC_ORDINAL: (_W, "ordinal is lower than the ordinal of record {0}"),
    C.MALFORMED_COMPACTED: (_E, "compacted record has no replacement_history array"),
    C.INVALID_RESPONSE_ITEM: (_E, "response_item payload must be a JSON object"),
    C.UNSUPPORTED_RESPONSE_ITEM: (_W, "a {0} response item of a shape outside the supported set"),
    C.DUPLICATE_TOOL_RESULT: (_W, "tool output id already answered by record {0}"),
    C.UNPAIRED_TOOL_CALL: (_W, "tool call has no later output in the live context"),
}
"""Each code's severity and message template (numbers and LimitKind words only)."""


class Finding(BaseModel):
    """One structural problem; `line_index` is the 0-based physical line, None for the file."""

    model_config = ConfigDict(frozen=True)

    severity: Severity
    line_index: int | None
    code: FindingCode
    message: str


Detail = int | LimitKind | str
"""A str detail is an item type a transcript names, always passed through `item_type`."""
RawFinding = tuple[int | None, FindingCode, tuple[Detail, ...]]
"""(line, code, detail) as a FindingSink holds it."""


ITEM_TYPE_MAX_CHARS = 40
_ITEM_TYPE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def item_type(value: object) -> str:
    """An item type a transcript names, fit to appear in a finding: a short identifier as
    it is, anything else (text, markup, control characters) as "unnamed"."""
    if (
        isinstance(value, str)
        and 0 < len(value) <= ITEM_TYPE_MAX_CHARS
        and _ITEM_TYPE_CHARS.issuperset(value)
    ):
        return value
    return "unnamed"


class FindingSink:
    """Collects findings cheaply (tuples) while the checks run; `findings()` builds the models."""

    __slots__ = ("_raw",)

    def __init__(self) -> None:
        self._raw: list[RawFinding] = []

    def raw(self) -> list[RawFinding]:
        """What was added, in order."""
        return list(self._raw)

    def copy(self) -> FindingSink:
        twin = FindingSink()
        twin._raw = list(self._raw)
        return twin

    def add(self, code: FindingCode, line: int | None, *detail: Detail) -> None:
        self._raw.append((line, code, detail))

    def findings(self) -> list[Finding]:
        """Sorted by line, whole-file findings (line None) last; stable within a line."""
        ordered = sorted(self._raw, key=lambda raw: (raw[0] is None, raw[0] or 0))
        out: list[Finding] = []
        for line, code, detail in ordered:
            severity, template = RULES[code]
            message = template.format(*(str(d) for d in detail)) if detail else template
            # Every value comes from this module's vocabularies: no validation to pay for.
            out.append(
                Finding.model_construct(
                    severity=severity, line_index=line, code=code, message=message
                )
            )
        return out
