"""A Codex rollout's full parse: every line into items and into the summary state.

A big rollout's lines are read by two processes (adapters.full_parse): this one builds the
items of the head, decoding only the lines that make one (items_loads), while a Helper feeds
the summary state every record and builds the tail's items; their tallies of the head's lines
must agree. A big file's items are weighed once the newest compaction is applied, only those
still in context.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from adapters.codex_items import (
    CALL_TYPES,
    Calls,
    call_id_of,
    compacted_item,
    deactivate,
    note_call,
    response_item,
)
from adapters.full_parse import (
    Bound,
    HelperAnswer,
    ItemRow,
    Spans,
    Tally,
    full_parse,
    item_rows,
    items_of,
    no_spans,
    read_chunks,
    split_pass,
    weighed_as,
)
from adapters.jsonl import LineCursor, Record, feed_bytes, torn_tail
from adapters.steal import Steal
from core.limits import WEIGH_LATER_MIN_BYTES
from core.model import Provider, Transcript, TranscriptItem

if TYPE_CHECKING:
    from adapters.codex import CodexState


def parse_file(path: str, new_state: Callable[[str], CodexState]) -> Transcript:
    """Every line of a rollout: its items, and a state fed the same records (for a big file
    a Helper feeds the state and builds the items of its last eighth, and more when it is
    done first: see adapters.full_parse)."""
    got = full_parse(
        Provider.CODEX,
        path,
        new_state,
        _helper_pass,
        _items_pass,
        _finish,
        weigh,
        ITEMS_HEAD_SHARE,
        _helper_pass_stealing,
    )
    if got is None:  # changed in place: read again, every item weighed as it is built
        eager = partial(_items_pass, later=False)
        got = full_parse(Provider.CODEX, path, new_state, _helper_pass, eager, _finish, weigh, 1.0)
    assert got is not None  # (nothing is left to weigh later)
    return got


def weigh(item: TranscriptItem, record: Record) -> bool:
    """full_parse.Weigh for an item built with weigh=False."""
    rtype = record.get("type")
    payload = record.get("payload")
    if type(payload) is not dict:
        return False
    if rtype == "response_item":
        return weighed_as(item, response_item(item.line_index, payload, {}))
    if rtype == "compacted":
        return weighed_as(item, compacted_item(item.line_index, payload))
    return False


def _weighs_later(fd: int) -> bool:
    return os.fstat(fd).st_size >= WEIGH_LATER_MIN_BYTES


ITEMS_HEAD_SHARE = 0.88
"""The share of a big rollout whose items this process builds while a Helper feeds the state
(and builds the rest's items): about where the two finish together (bench row d2). Counted
instructions put it at 0.91 (this side: 1.19 G per 30 MB, the state 1.05 G, the tail's items
0.35 G); this side also unpickles and joins the tail's items."""
CodexTail = tuple[list[ItemRow], int, Spans]
"""The tail's items (as rows), the line of its newest compaction (-1: none), and its items'
lines when they were not weighed (else empty)."""
Built = tuple[list[TranscriptItem], Spans, int, int]
"""Items, their lines when they were not weighed (else empty), how many lines were read, and
the line of the newest compaction (-1: none)."""
Extra = tuple[Built, int]
"""The items of the end of this process's part that a Helper took (numbered from its start),
and where that part starts."""


def _helper_pass(fd: int, size: int, path: str, split: int) -> HelperAnswer[CodexState, CodexTail]:
    """A full parse's other side, in a Helper: a state fed every record of the file's first
    `size` bytes, and the items from `split` on (see adapters.full_parse). A module-level
    function: a spawned Helper imports it by module and name."""
    return _state_and_tail(fd, size, path, split)[0]


def _helper_pass_stealing(
    steal: Steal, fd: int, size: int, path: str, split: int
) -> tuple[Extra, Tally] | None:
    """_helper_pass in a forked Helper, its answer handed over at once, then the items of the
    end of this process's part if it gets it (adapters.steal)."""
    steal.helper_side()
    answer, calls, called_at = _state_and_tail(fd, size, path, split)
    # The same work as the other side's (an items pass); none when a call was made twice:
    # what the extra part's outputs are named by could then differ.
    start = steal.ask(answer, None, willing=called_at is not None)
    if not start or called_at is None:
        return None
    # (the tail's calls are in `calls` too, made after `start`)
    known = {cid: head for cid, head in calls.items() if called_at.get(cid, start) < start}
    built, tally = _items_pass(fd, split, None, None, start=start, calls=known)
    return (built, start), tally


def _state_and_tail(
    fd: int, size: int, path: str, split: int
) -> tuple[HelperAnswer[CodexState, CodexTail], Calls, dict[str, int] | None]:
    """_helper_pass's answer, the calls seen before `split`, and where each was made (None
    when one was made twice)."""
    from adapters.codex import CodexState  # (adapters.codex imports this module)

    state = CodexState(path)
    feed = state.feed_parts
    calls: Calls = {}
    called_at: dict[str, int] | None = {}
    items: list[TranscriptItem] = []
    spans = array("q")
    compactions: list[int] = []
    later = _weighs_later(fd)
    head_lines = LineCursor()
    lines = LineCursor(offset=split)  # the tail's, for where its lines start

    def head(index: int, length: int, record: Record) -> None:
        nonlocal called_at
        rtype = record.get("type")
        payload = record.get("payload")
        feed(record, rtype, payload)
        # the calls the tail's outputs are labelled with
        if (
            isinstance(payload, dict)
            and rtype == "response_item"
            and payload.get("type") in CALL_TYPES
        ):
            cid = note_call(payload, calls)[0]
            if cid and called_at is not None:
                if cid in called_at:
                    called_at = None
                else:
                    called_at[cid] = head_lines.line_start(length)

    def tail(index: int, length: int, record: Record) -> None:
        nonlocal called_at
        rtype = record.get("type")
        payload = record.get("payload")
        feed(record, rtype, payload)
        if type(payload) is dict:
            if rtype == "response_item":
                if (
                    called_at
                    and payload.get("type") in CALL_TYPES
                    and call_id_of(payload) in called_at
                ):
                    called_at = None  # a call made again: `calls` has the new one
                items.append(response_item(index, payload, calls, not later))
            elif rtype == "compacted":
                items.append(compacted_item(index, payload, not later))
                compactions.append(index)
            else:
                return
            if later:
                spans.append(lines.line_start(length))
                spans.append(length)

    first, whole = split_pass(head, tail, fd, size, split, lines, head_lines)
    newest = compactions[-1] if compactions else -1
    rest = (item_rows(items), newest, spans) if split < size else None
    return (state, rest, first, whole), calls, called_at


def _finish(
    built: Built, tail: CodexTail | None, state: CodexState, extra: Extra | None
) -> tuple[list[TranscriptItem], Spans, CodexState]:
    """This process's items, then those of the extra part (numbered on from them) and of
    the tail, the newest compaction of all applied; where those not weighed are."""
    items, spans, lines, _ = built
    if extra is not None or tail is not None:
        parts: list[tuple[list[TranscriptItem], Spans, int]] = []
        if extra is not None:
            (more, more_spans, _, newest), _start = extra
            for item in more:
                item.line_index += lines
            parts.append((more, more_spans, newest + lines if newest >= 0 else -1))
        if tail is not None:
            rows, newest, tail_spans = tail
            parts.append((items_of(rows), tail_spans, newest))
        if spans or any(part_spans for _, part_spans, _ in parts):
            spans = spans or no_spans(len(items))
            for more, part_spans, _ in parts:
                spans = spans + (part_spans or no_spans(len(more)))
        for more, _, _ in parts:
            items.extend(more)
        newest = max(newest for _, _, newest in parts)
        if newest >= 0:
            deactivate(items, newest)
    return items, spans, state


_LEADING_TYPE = re.compile(rb'\{"timestamp":"[^"\\]*","type":"([a-z_]+)"')
"""A rollout line's first two members as Codex writes them. Only a string without quotes or
backslashes fits between those quotes, so a match is the record's own top-level type (its
first: a parser keeps the last of a repeated key, see items_loads)."""
_ITEM_TYPES = frozenset({b"response_item", b"compacted"})
_RESPONSE_ITEM_TYPE = b'"type":"response_item"'
_COMPACTED_TYPE = b'"type":"compacted"'


def items_loads(line: bytes) -> Any:
    """orjson.loads for an items pass that a Helper's state pass backs: a line whose own type
    makes no item (event_msg, turn_context: over half of a rollout's bytes) stands in as just
    that type, undecoded. A damaged one then counts as a record here but as a bad line in
    the Helper, so full_parse sees the tallies differ and parses again, decoding everything."""
    found = _LEADING_TYPE.match(line)
    if found is not None:
        rtype = found[1]
        if rtype not in _ITEM_TYPES:
            end = found.end()
            # a repeated "type" key naming an item type (never written by Codex; orjson
            # would keep it) sends the line to the real parser
            if line.find(_RESPONSE_ITEM_TYPE, end) < 0 and line.find(_COMPACTED_TYPE, end) < 0:
                stand_in = _STAND_INS.get(rtype)  # (read only: the pass has no state)
                if stand_in is None:
                    stand_in = {"type": rtype.decode()}
                    if len(_STAND_INS) < 64:  # (a handful of types: bounded all the same)
                        _STAND_INS[rtype] = stand_in
                return stand_in
    return orjson.loads(line)


_STAND_INS: dict[bytes, dict[str, str]] = {}


def _items_pass(
    fd: int,
    size: int,
    state: CodexState | None,
    bound: Bound | None = None,
    later: bool | None = None,
    start: int = 0,
    calls: Calls | None = None,
) -> tuple[Built, Tally]:
    """Items of every record from `start` (a line start; lines numbered from it) to `size`
    (or where `bound` says), and `state` fed them unless None; the newest compaction applied.
    Without a state, lines that make no item are not decoded (see items_loads). The items of a
    big file (or any, when `later`) are not weighed yet: their lines are said. `calls`: those
    made before `start`."""
    feed = state.feed_parts if state is not None else None
    loads = orjson.loads if state is not None else items_loads
    weigh = not (_weighs_later(fd) if later is None else later)
    lines = LineCursor(offset=start)
    items: list[TranscriptItem] = []
    spans = array("q")
    append = items.append
    calls = calls if calls is not None else {}
    tally = Tally()
    bad = tally.bad
    records = 0
    last_compaction = -1
    for chunk in read_chunks(fd, size, start, bound):
        tally.size += len(chunk)
        for index, length, record in feed_bytes(lines, chunk, not chunk, loads):
            if not isinstance(record, dict):  # (isinstance of an Enum class is slower)
                bad[record.value] += 1
                continue
            records += 1
            rtype = record.get("type")
            payload = record.get("payload")
            if feed is not None:
                feed(record, rtype, payload)
            if type(payload) is dict:
                if rtype == "response_item":
                    append(response_item(index, payload, calls, weigh))
                elif rtype == "compacted":
                    append(compacted_item(index, payload, weigh))
                    last_compaction = index
                else:
                    continue
                if not weigh:
                    spans.append(lines.line_start(length))
                    spans.append(length)
    if last_compaction >= 0:
        deactivate(items, last_compaction)
    tally.records = records
    tally.torn = torn_tail(lines)
    return (items, spans, lines.line_index, last_compaction), tally
