"""Codex's checks of `verify` (core.verify): ordinals, compacted records, the supported shapes,
tool pairing.

The effective context is what Codex rebuilds on resume: the replacement_history of the newest
`compacted` record, then every later response_item payload. Pairing runs over it in order,
positions inside one replacement_history included, so an output before its call, or in a
superseded window, answers nothing. What a call and an output are is the parser's (.items).

The supported set of response item shapes is the reference's, frozen: a message of a known
role whose content is a string, an empty list or a list of plain text blocks; a call with an
id; a function_call_output whose output is a string, or a custom_tool_call_output whose output
is a list of plain input_text blocks (neither with unknown keys); reasoning; agent_message.
Anything else (image blocks, web searches, the opaque `compaction` item, future kinds) is
outside it: a warning, since a rewrite could not be trusted to keep it intact.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ....core.limits import VERIFY_MAX_CONTEXT_ITEMS
from ....core.model import Provider
from ....core.verify.findings import FindingCode, FindingSink, LimitKind, item_type
from ....core.verify.ids import valid_id
from ....core.verify.lines import RecordChecks
from ...files.jsonl import Record
from .items import CALL_TYPES, OUTPUT_TYPES

MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})
TEXT_BLOCK_KEYS = frozenset({"type", "text"})
OUTPUT_KEYS = frozenset(
    {
        "type",
        "output",
        "call_id",
        "tool_call_id",
        "id",
        "internal_chat_message_metadata_passthrough",
    }
)
CALL_ID_KEYS = ("call_id", "tool_call_id", "id")
ORDINAL_END = 1 << 64


def _one_of(value: Any, names: frozenset[str]) -> bool:
    """`value in names` for any JSON value (a list or an object is unhashable)."""
    return type(value) is str and value in names


def call_id(item: Record) -> str | None:
    """The call identity: the first of call_id, tool_call_id, id that is present (whatever its
    value), when that value is a valid id."""
    for key in CALL_ID_KEYS:
        if key in item:
            value = item[key]
            return value if valid_id(value) else None
    return None


def text_content(value: Any) -> bool:
    """A string, or a nonempty list of plain text blocks ({type, text} and nothing else)."""
    if type(value) is str:
        return True
    if type(value) is not list or not value:
        return False
    for block in value:
        if (
            type(block) is not dict
            or not _one_of(block.get("type"), TEXT_BLOCK_TYPES)
            or type(block.get("text")) is not str
            or not block.keys() <= TEXT_BLOCK_KEYS
        ):
            return False
    return True


def supported_item(item: Any) -> bool:
    """Whether a response item has one of the frozen supported shapes (module docstring)."""
    if type(item) is not dict:
        return False
    kind = item.get("type")
    if kind == "message":
        content = item.get("content", None)
        return (
            _one_of(item.get("role"), MESSAGE_ROLES)
            and "content" in item
            and (content == [] or text_content(content))
        )
    if _one_of(kind, CALL_TYPES):
        return call_id(item) is not None
    if kind == "function_call_output":
        return (
            call_id(item) is not None
            and item.keys() <= OUTPUT_KEYS
            and type(item.get("output")) is str
        )
    if kind == "custom_tool_call_output":
        output = item.get("output")
        return (
            call_id(item) is not None
            and item.keys() <= OUTPUT_KEYS
            and type(output) is list
            and text_content(output)
            and all(block["type"] == "input_text" for block in output)
        )
    return kind == "reasoning" or kind == "agent_message"


Entry = tuple[int, bool, Any, str | None]
"""One item of the effective context: (line, supported shape, type, call id)."""


def _entry(line: int, item: Any) -> Entry:
    if type(item) is not dict:
        return (line, False, None, None)
    kind = item.get("type")
    return (line, supported_item(item), kind if type(kind) is str else None, call_id(item))


class CodexFact(NamedTuple):
    """What the Codex checks read from one record (a pure function of it)."""

    has_ordinal: bool
    ordinal: int | None
    """The ordinal when it is an integer in [0, 2^64), else None."""
    kind: Any
    history: tuple[Entry, ...] | None
    """A compacted record's replacement_history as entries (lines 0), when it is a list of at
    most VERIFY_MAX_CONTEXT_ITEMS items; a response_item's payload entry, when an object."""
    history_size: int
    """A compacted record's replacement_history length, -1 when it is not a list."""


def codex_fact(record: Record) -> CodexFact:
    has_ordinal = "ordinal" in record
    ordinal = record.get("ordinal")
    valid = has_ordinal and type(ordinal) is int and 0 <= ordinal < ORDINAL_END
    kind = record.get("type")
    history: tuple[Entry, ...] | None = None
    size = -1
    if kind == "compacted":
        payload = record.get("payload")
        items = payload.get("replacement_history") if type(payload) is dict else None
        if type(items) is list:
            size = len(items)
            if size <= VERIFY_MAX_CONTEXT_ITEMS:
                history = tuple(_entry(0, item) for item in items)
    elif kind == "response_item":
        payload = record.get("payload")
        if type(payload) is dict:
            history = (_entry(0, payload),)
    return CodexFact(has_ordinal, ordinal if valid else None, kind, history, size)


class CodexChecker:
    """Ordinals and record shapes in file order; the effective context is kept as small
    entries (not the records) and paired at the end."""

    __slots__ = ("_add", "_effective", "_previous", "_sink", "_stopped")

    def __init__(self, sink: FindingSink) -> None:
        self._sink = sink
        self._add = sink.add
        self._previous: tuple[int, int] | None = None
        """(ordinal, line) of the last ordinal-bearing record."""
        self._effective: list[Entry] = []
        self._stopped = False
        """The effective context went over its limit: the reference stops checking there."""

    def clone(self, sink: FindingSink) -> CodexChecker:
        """A checker in this one's state, reporting to `sink`."""
        twin = CodexChecker(sink)
        twin._previous = self._previous
        twin._effective = list(self._effective)
        twin._stopped = self._stopped
        return twin

    def feed(self, line: int, record: Record) -> None:
        self.feed_fact(line, codex_fact(record))

    def feed_fact(self, line: int, fact: Any) -> None:
        if self._stopped:
            return
        add = self._add
        if fact.has_ordinal:
            ordinal = fact.ordinal
            if ordinal is not None:
                previous = self._previous
                if previous is not None and ordinal < previous[0]:
                    add(FindingCode.NON_MONOTONIC_ORDINAL, line, previous[1] + 1)
                self._previous = (ordinal, line)
            else:
                add(FindingCode.INVALID_ORDINAL, line)
        kind = fact.kind
        effective = self._effective
        if kind == "compacted":
            effective.clear()  # the new window replaces everything before it
            if fact.history_size < 0:
                add(FindingCode.MALFORMED_COMPACTED, line)
            elif fact.history is None:
                add(
                    FindingCode.TRANSCRIPT_LIMIT,
                    line,
                    LimitKind.HISTORY_ITEMS,
                    fact.history_size,
                    VERIFY_MAX_CONTEXT_ITEMS,
                )
            else:
                effective.extend([(line, s, k, i) for _, s, k, i in fact.history])
        elif kind == "response_item":
            if fact.history is not None:
                _, supported, item_kind, tool_id = fact.history[0]
                effective.append((line, supported, item_kind, tool_id))
            else:
                add(FindingCode.INVALID_RESPONSE_ITEM, line)
        if len(effective) > VERIFY_MAX_CONTEXT_ITEMS:
            add(
                FindingCode.TRANSCRIPT_LIMIT,
                line,
                LimitKind.CONTEXT_ITEMS,
                len(effective),
                VERIFY_MAX_CONTEXT_ITEMS,
            )
            self._stopped = True

    def finish(self) -> None:
        if not self._stopped:
            _check_effective(self._effective, self._sink)


def _check_effective(effective: list[Entry], sink: FindingSink) -> None:
    add = sink.add
    calls: dict[str, tuple[int, int]] = {}  # call id -> (position, line) of its newest call
    answered: set[str] = set()
    outputs: dict[str, int] = {}  # output id -> line of its first output
    for position, (line, supported, kind, tool_id) in enumerate(effective):
        if not supported:
            add(FindingCode.UNSUPPORTED_RESPONSE_ITEM, line, item_type(kind))
        if tool_id is None:
            continue
        if kind in CALL_TYPES:
            answered.discard(tool_id)  # a repeated call needs an output of its own
            earlier = calls.get(tool_id)
            calls[tool_id] = (position, line)
            if earlier is not None:
                add(FindingCode.DUPLICATE_TOOL_CALL_ID, line, earlier[1] + 1)
        elif kind in OUTPUT_TYPES:
            call = calls.get(tool_id)
            if call is not None and call[0] < position:
                answered.add(tool_id)
            else:
                add(FindingCode.ORPHANED_TOOL_RESULT, line)
            first = outputs.get(tool_id)
            if first is None:
                outputs[tool_id] = line
            else:
                add(FindingCode.DUPLICATE_TOOL_RESULT, line, first + 1)
    for tool_id, (_position, line) in calls.items():
        if tool_id not in answered:
            add(FindingCode.UNPAIRED_TOOL_CALL, line)


CHECKS = RecordChecks(Provider.CODEX, codex_fact, CodexChecker)
"""Codex's checks, as the package hands them out (ProviderPackage.verify_checks)."""
