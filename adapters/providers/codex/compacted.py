"""The experimental Codex fork (`apply --experimental-compacted`): the elided prefix of a
rollout folded into ONE synthetic `compacted` record, as Codex writes its own compaction.

On resume Codex rebuilds the model history from the newest `compacted` record's
`replacement_history`, then every response_item after it (transcript-formats.md 2.6). So the
prefix's response items (with the plan's elides already applied), and the items of an older
compacted record among them, go into the new record's history in order, the state card last
as a user message (where Codex puts its own summary); the records after the record are the
live tail, byte for byte. Every other record of the prefix (session_meta, turn_context,
events) stays in place before the record, as in a file Codex compacted itself.

Pair-aware: the cut between history and tail never separates a tool call from its output. It
starts after the last elided line and moves back to before any call whose output comes after
it. What cannot be folded safely is refused with one line (RewriteError), nothing built.

The window chain is the provider's (reference-behaviour.md, compacted records): the number
one past the newest earlier record's, its first window kept, the window it replaces its
`window_id`; ids derive from the plan's seed, so a rerun writes the same bytes. The encrypted
`compaction` item of a real record cannot be forged: the card takes its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...files.jsonl import Record, decode_line
from ..interface import RewriteCode, RewriteError
from ..rewrite_records import derived_uuid, encode_line, line_ending
from .items import CALL_TYPES, OUTPUT_TYPES, call_id_of

_CHAIN_KEYS = ("window_number", "first_window_id", "previous_window_id", "window_id")


def _unsafe(message: str) -> RewriteError:
    return RewriteError(RewriteCode.COMPACTED_UNSAFE, message)


def _records(lines: Sequence[bytes]) -> list[Record | None]:
    decoded: list[Record | None] = []
    for line in lines:
        record = decode_line(line.strip())
        decoded.append(record if isinstance(record, dict) else None)
    return decoded


def _folded(record: Record | None) -> bool:
    """Whether the record is part of the model history (it moves into the new record)."""
    return record is not None and record.get("type") in ("response_item", "compacted")


def pair_safe_cut(records: Sequence[Record | None], cut: int) -> int:
    """The first tail line at or before `cut` such that no call before it has an output at
    or after it (parallel calls answered later move the cut back to before the call)."""
    while True:
        calls: dict[str, int] = {}
        for index in range(cut):
            payload = _payload(records[index])
            if payload is not None and payload.get("type") in CALL_TYPES:
                tool_id = call_id_of(payload)
                if tool_id is not None:
                    calls.setdefault(tool_id, index)
        earliest = cut
        for index in range(cut, len(records)):
            payload = _payload(records[index])
            if payload is not None and payload.get("type") in OUTPUT_TYPES:
                at = calls.get(call_id_of(payload) or "")
                if at is not None:
                    earliest = min(earliest, at)
        if earliest == cut:
            return cut
        cut = earliest


def _payload(record: Record | None) -> dict[str, Any] | None:
    if record is None or record.get("type") != "response_item":
        return None
    payload = record.get("payload")
    return payload if type(payload) is dict else None


def _history(records: Sequence[Record | None], cut: int) -> tuple[list[Any], Record | None]:
    """The model history the prefix stands for, and its newest compacted payload."""
    history: list[Any] = []
    previous: Record | None = None
    for index in range(cut):
        record = records[index]
        if not _folded(record):
            continue
        assert record is not None
        payload = record.get("payload")
        if record.get("type") == "compacted":
            items = payload.get("replacement_history") if type(payload) is dict else None
            if type(items) is not list:
                raise _unsafe(f"line {index} is a compacted record with no replacement history")
            history = list(items)  # the window it opens replaces everything before it
            previous = payload
        elif type(payload) is dict:
            history.append(payload)
        else:
            raise _unsafe(f"line {index} is a response_item with no payload object")
    return history, previous


def _unpaired(history: Sequence[Any]) -> str | None:
    """A call id the history holds a call or an output of without the other, else None."""
    calls: set[str] = set()
    outputs: set[str] = set()
    for item in history:
        if type(item) is not dict:
            continue
        tool_id = call_id_of(item)
        if tool_id is None:
            continue
        if item.get("type") in CALL_TYPES:
            calls.add(tool_id)
        elif item.get("type") in OUTPUT_TYPES:
            if tool_id not in calls:
                return tool_id
            outputs.add(tool_id)
    left = calls - outputs
    return min(left) if left else None


def _chain(previous: Record | None, seed: bytes) -> dict[str, Any]:
    window_id = derived_uuid(seed, "codex-compacted-window")
    if previous is None:
        first = derived_uuid(seed, "codex-compacted-first-window")
        return dict(zip(_CHAIN_KEYS, (1, first, first, window_id), strict=True))
    number = previous.get("window_number")
    first_id = previous.get("first_window_id")
    prior_id = previous.get("window_id")
    first = first_id if type(first_id) is str else derived_uuid(seed, "codex-compacted-first")
    prior = prior_id if type(prior_id) is str else first
    count = number + 1 if type(number) is int and number >= 0 else 1
    return dict(zip(_CHAIN_KEYS, (count, first, prior, window_id), strict=True))


def _envelope(records: Sequence[Record | None], cut: int) -> tuple[Any, int | None]:
    """The record's timestamp and ordinal: the newest of the prefix's (so ordinals stay
    monotonic and the record dates from the history it closes)."""
    stamp: Any = None
    ordinal: int | None = None
    for record in records[:cut]:
        if record is None:
            continue
        if type(record.get("timestamp")) is str:
            stamp = record["timestamp"]
        if type(record.get("ordinal")) is int:
            ordinal = record["ordinal"]
    return stamp, ordinal


def compacted_lines(
    lines: Sequence[bytes], elided: Sequence[int], card: str, seed: bytes
) -> dict[int, bytes]:
    """Lines of `lines` (a rollout with the plan's elides applied) to replace so that the
    prefix through the last `elided` line becomes one compacted record carrying `card`:
    b"" for a folded record, the record itself on the prefix's last line."""
    if not elided:
        raise _unsafe("the plan elides nothing: there is no prefix to fold")
    records = _records(lines)
    first_item = next((i for i, r in enumerate(records) if _folded(r)), len(records))
    cut = pair_safe_cut(records, max(elided) + 1)
    if cut <= first_item:
        raise _unsafe("every tool call of the prefix is answered after it: nothing to fold")
    history, previous = _history(records, cut)
    unpaired = _unpaired(history)
    if unpaired is not None:
        raise _unsafe(f"call {unpaired} would be split from its output by the record")
    history.append(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": card}]}
    )
    record: Record = {}
    stamp, ordinal = _envelope(records, cut)
    if stamp is not None:
        record["timestamp"] = stamp
    if ordinal is not None:
        record["ordinal"] = ordinal
    record["type"] = "compacted"
    record["payload"] = {"message": card, "replacement_history": history, **_chain(previous, seed)}
    replaced = {index: b"" for index in range(cut) if _folded(records[index])}
    last = cut - 1
    kept = b"" if last in replaced else lines[last]
    ending = line_ending(lines[last]) or b"\n"
    if kept and not line_ending(kept):
        kept += ending
    built = encode_line(record, ending)
    if last == len(lines) - 1 and not line_ending(lines[last]):
        built = built[: -len(ending)]  # the source ends without a newline: so does the fork
    replaced[last] = kept + built
    return replaced


def history_items(lines: Sequence[bytes]) -> int:
    """The length of the replacement history the first compacted record of `lines` carries
    (0: none does), for what --experimental-compacted reports."""
    for line in lines:
        record = decode_line(line)
        if isinstance(record, dict) and record.get("type") == "compacted":
            payload = record.get("payload")
            kept = payload.get("replacement_history") if type(payload) is dict else None
            return len(kept) if isinstance(kept, list) else 0
    return 0
