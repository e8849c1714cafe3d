"""The Codex half of adapters.rewrite.apply: output elision, the state card, session_meta identity.

Elision replaces only `payload.output` of a function/custom tool output, each large
`replacement_history[i].output` of a `compacted` record (the history Codex rebuilds on
resume), or the body of the patch an applied patch call carries (adapters.providers.codex.inputs);
calls and their `call_id`s stay. An elided `reasoning` item (its encrypted content is most of a
long session's request, and the provider counts none of it) becomes the `agent_reasoning` event
Codex writes beside it: the line stays, with the reasoning's summary, out of the history the
client rebuilds (the real Codex CLI resumes such a fork and sends no reasoning for it;
tests/e2e/test_codex_reasoning.py measures what that saves). The card is a user `message` response_item.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping, Sequence
from typing import Any

import orjson

from ....core.limits import ELIDABLE_MIN_BYTES
from ....core.model import ItemKind, Transcript
from ....core.text import utf8_len
from ...files.jsonl import Record, decode_line
from ..interface import CardScanner, ForkUsage, RewriteCode, RewriteError, StubMaker
from ..rewrite_records import stub_output
from .compacted import (
    compacted_lines as compacted_lines,  # --experimental-compacted
)
from .inputs import stub_patch
from .items import (
    CALL_TYPES,
    OUTPUT_TYPES,
    SUMMARY_BLOCK_TYPES,
    TEXT_BLOCK_TYPES,
    content_text,
    output_text,
)

_IDENTITY_KEYS = ("id", "session_id")


def _tool_output(record: Record) -> dict[str, Any] | None:
    """The payload of a tool-output response_item, else None."""
    payload = record.get("payload")
    if (
        record.get("type") == "response_item"
        and type(payload) is dict
        and payload.get("type") in OUTPUT_TYPES
    ):
        return payload
    return None


def _has_image(output: Any) -> bool:
    # output_text() refuses a block list holding an image block
    return type(output) is list and output_text(output) is None


def has_image_output(record: Record) -> bool:
    payload = _tool_output(record)
    return payload is not None and _has_image(payload.get("output"))


def _history(record: Record) -> list[Any] | None:
    payload = record.get("payload")
    if record.get("type") != "compacted" or type(payload) is not dict:
        return None
    history = payload.get("replacement_history")
    return history if type(history) is list else None


def _large_outputs(history: list[Any]) -> list[tuple[dict[str, Any], str]]:
    """The history entries whose output the parser counts as elidable, with its text."""
    found: list[tuple[dict[str, Any], str]] = []
    for entry in history:
        if type(entry) is not dict or "output" not in entry:
            continue
        text = output_text(entry["output"])
        if text is not None and utf8_len(text) > ELIDABLE_MIN_BYTES:
            found.append((entry, text))
    return found


def _as_reasoning_event(record: Record, payload: dict[str, Any]) -> None:
    """A reasoning response_item turned, in place, into the event Codex writes beside one."""
    summary = content_text(payload.get("summary"), SUMMARY_BLOCK_TYPES)
    stamp = record.get("timestamp")
    record.clear()
    if stamp is not None:
        record["timestamp"] = stamp
    record["type"] = "event_msg"
    record["payload"] = {"type": "agent_reasoning", "text": summary}


def elide_record(record: Record, stub: StubMaker) -> int:
    item = record.get("payload")
    if record.get("type") == "response_item" and type(item) is dict:
        if item.get("type") == "reasoning":
            if type(item.get("encrypted_content")) is not str:
                return 0
            _as_reasoning_event(record, item)
            return 1
        if item.get("type") in CALL_TYPES:
            return int(stub_patch(item))
    payload = _tool_output(record)
    if payload is not None:
        output = payload.get("output")
        if _has_image(output):
            raise RewriteError(RewriteCode.IMAGE_OUTPUT, "the tool output holds an image")
        replaced = stub_output(output, stub, TEXT_BLOCK_TYPES)
        if replaced is None:
            return 0
        payload["output"] = replaced
        return 1
    history = _history(record)
    if history is None:
        raise RewriteError(RewriteCode.UNSUPPORTED_SHAPE, "not a tool output or compacted record")
    stubbed = 0
    for entry, _text in _large_outputs(history):
        replaced = stub_output(entry["output"], stub, TEXT_BLOCK_TYPES)
        if replaced is not None:
            entry["output"] = replaced
            stubbed += 1
    return stubbed


def _unwrapped(text: str) -> str:
    """custom_tool_call_output wraps its text in JSON ({"output": ..., "metadata": ...})."""
    if text.startswith('{"output":'):
        try:
            inner = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
        if type(inner) is dict and type(inner.get("output")) is str:
            return str(inner["output"])
    return text


def payload_text(record: Record) -> str | None:
    payload = _tool_output(record)
    if payload is not None:
        text = output_text(payload.get("output"))
        return _unwrapped(text) if text else None
    history = _history(record)
    if history is None:
        return None
    return "\n".join(_unwrapped(text) for _entry, text in _large_outputs(history)) or None


def record_id(record: Record) -> str | None:
    """Codex records carry no id of their own (a fork's are paired by content and order)."""
    return None


def rewrite_identity_record(record: Record, new_id: str) -> bool:
    payload = record.get("payload")
    if record.get("type") != "session_meta" or type(payload) is not dict:
        return False
    changed = False
    for key in _IDENTITY_KEYS:
        if key in payload and payload[key] != new_id:
            payload[key] = new_id
            changed = True
    return changed


_ID_FIELDS = tuple(
    re.compile(rb'("' + key + rb'"\s*:\s*)"[^"\\]*"') for key in (b"id", b"session_id")
)


def rewrite_identity_bytes(line: bytes, new_id: str) -> bytes:
    """A session_meta line with its `id` / `session_id` saying `new_id`, every other byte
    kept (only the first of each: the payload's own, before any nested one)."""
    for field in _ID_FIELDS:
        line = field.sub(lambda m: m.group(1) + b'"' + new_id.encode() + b'"', line, count=1)
    return line


class CardScan:
    """What the card needs from the file: the newest record's timestamp, and whether records
    carry ordinals; what the fork's usage needs: the token counts after the newest compaction.
    Fed every record in file order (`feed`); an elide changes none of it."""

    def __init__(self, path: str, parsed: Transcript | None = None) -> None:
        self.timestamp: str | None = None
        self.ordinals = False
        self.usage: list[tuple[int, int]] = []
        """(line, reported context) of each new token count since the newest compaction."""
        self.token_count: dict[str, Any] | None = None
        """The payload of the newest token count that reports a usage."""

    @classmethod
    def of(cls, lines: Sequence[bytes], path: str) -> CardScan:
        scan = cls(path)
        for index, line in enumerate(lines):
            record = decode_line(line.strip())
            if isinstance(record, dict):
                scan.feed(index, record)
        return scan

    def feed(self, index: int, record: Record) -> None:
        stamp = record.get("timestamp")
        if type(stamp) is str:
            self.timestamp = stamp
        if type(record.get("ordinal")) is int:
            self.ordinals = True
        kind = record.get("type")
        if kind == "compacted":
            self.usage.clear()  # what came before is no longer the context
        elif kind == "event_msg":
            payload = record.get("payload")
            if type(payload) is dict and payload.get("type") == "token_count":
                self._token_count(index, payload)

    def _token_count(self, index: int, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        last = info.get("last_token_usage") if type(info) is dict else None
        if type(last) is not dict:
            return
        total = sum(
            v for v in (last.get("input_tokens"), last.get("output_tokens")) if type(v) is int
        )
        if total <= 0:
            return  # cleared around a compaction
        self.token_count = payload
        if not self.usage or self.usage[-1][1] != total:  # each is written twice in a row
            self.usage.append((index, total))

    def usage_points(self, live: Container[int]) -> list[tuple[int, int]]:
        """Every token count since the newest compaction is on the live context."""
        return list(self.usage)

    def finish(self) -> None:
        pass


def card_records(
    lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
) -> list[Record]:
    """One user message response_item holding `card`: the newest record's timestamp, and an
    `ordinal` (the new line's index) when the file's records carry one."""
    return card_records_scanned(CardScan.of(lines, transcript.path), lines, transcript, card, seed)


def _own(scan: CardScanner) -> CardScan:
    """`scan` as this half's CardScan; TypeError for another provider's."""
    if not isinstance(scan, CardScan):
        raise TypeError(f"not a Codex CardScan: {type(scan).__name__}")
    return scan


def card_records_scanned(
    any_scan: CardScanner, lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
) -> list[Record]:
    """card_records() with the scan of `lines` already made."""
    scan = _own(any_scan)
    message: Record = {}
    if scan.timestamp is not None:
        message["timestamp"] = scan.timestamp
    if scan.ordinals:
        message["ordinal"] = len(lines)
    message["type"] = "response_item"
    message["payload"] = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": card}],
    }
    return [message]


def fork_usage(
    any_scan: CardScanner, lines: Sequence[bytes], target: ForkUsage, appended: int
) -> tuple[dict[int, bytes], list[Record]]:
    """The fork's latest usage: a token_count event after everything else saying the fork's
    context (Codex decides on resume whether to compact from the newest one's total). Its
    cumulative total, window and rate limits are the newest token count's; no line is
    changed."""
    scan = _own(any_scan)
    context = target[0]
    payload = scan.token_count
    if payload is None:
        return {}, []
    info = dict(payload["info"])
    last = dict(info["last_token_usage"])
    output = min(_int(last.get("output_tokens")), context)
    last["input_tokens"] = context - output
    last["output_tokens"] = output
    if "cached_input_tokens" in last:
        last["cached_input_tokens"] = min(_int(last.get("cached_input_tokens")), context - output)
    if "reasoning_output_tokens" in last:
        last["reasoning_output_tokens"] = min(_int(last.get("reasoning_output_tokens")), output)
    last["total_tokens"] = context
    info["last_token_usage"] = last
    record: Record = {}
    if scan.timestamp is not None:
        record["timestamp"] = scan.timestamp
    if scan.ordinals:
        record["ordinal"] = len(lines) + appended
    record["type"] = "event_msg"
    record["payload"] = {**payload, "info": info}
    return {}, [record]


def _int(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


LEFT_OUT_KINDS: frozenset[ItemKind] = frozenset()
"""None: an elided reasoning item becomes an event (_as_reasoning_event), its line stays."""


def prefix_safe(
    _lines: Sequence[bytes], _first: int, _marked: Sequence[int] | None = None
) -> tuple[dict[int, bytes], dict[str, str | None]]:
    """Nothing: the Responses API checks no prefix of the reasoning items sent back (core.
    thinking)."""
    return {}, {}


def thinking_lines(_lines: Sequence[bytes]) -> list[int]:
    return []


def thinking_after_change(
    _lines: Sequence[bytes],
    _replaced: Mapping[int, bytes],
    _appended: Sequence[bytes],
    _marked: Sequence[int] | None = None,
) -> int | None:
    return None
