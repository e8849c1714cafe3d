"""A Claude transcript's full parse: every line into items and into the summary state.

A big file is split in two at a line start: this process parses the head while a Helper
(adapters.processes) parses the tail with a state and a builder of its own, so every line is
decoded once, on one core or the other. The tail's answer is then joined to the head as if
this process had gone on reading:
- the tail's items are numbered on from the head's lines, and the few tool results naming a
  tool call of the head are rebuilt with it;
- its state is absorbed (ClaudeState.absorb), which is exact as long as no record's uuid is
  used twice across the join and no response's usage is split apart by another.
Anything else (no Helper, a failed or foreign answer, a file where the join would not be
exact) and this process reads the tail itself after the head: one pass, as without a Helper.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from adapters.claude import ClaudeState
from adapters.claude_items import ItemBuilder, Unresolved
from adapters.full_parse import (
    ItemRow,
    Tally,
    feed_all,
    gc_paused,
    item_rows,
    items_of,
    split_point,
    transcript_of,
)
from adapters.jsonl import LineCursor, Record, feed_bytes
from adapters.processes import Helper
from core.limits import CLAUDE_JOIN_REBUILD_MAX
from core.model import Provider, Transcript, TranscriptItem

HEAD_SHARE = 0.55
"""Where a big file's head ends (a line start near this share of its bytes): the tail's side
also pickles its answer, this side unpickles and joins it."""

SIDECHAIN_PROBE_BYTES = 64 * 1024
"""How much of the file's start the tail's side reads to find the first record that says
whether the file is a subagent's (the head's state decides by it; the tail must know it)."""


@dataclass(slots=True)
class Side:
    """One process's share of a parse: the items, every parent link, the state, the lines."""

    builder: ItemBuilder
    state: ClaudeState
    lines: LineCursor
    parents: dict[str, str | None] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    uuid_records: int = 0
    """Records with a uuid: more than len(parents) when one was used twice."""

    def run(self, fd: int, end: int) -> None:
        """Every record from the line cursor's offset to `end`, to the builder and the state."""
        self.add(feed_all(self._record, fd, end, self.lines))

    def add(self, tally: Tally) -> None:
        """Count the lines of a pass that went on from this one's."""
        self.tally.records += tally.records
        self.tally.bad += tally.bad
        self.tally.size += tally.size
        self.tally.torn = tally.torn

    def _record(self, index: int, record: Record) -> None:
        kind = record.get("type")
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        self.state.feed_parts(record, kind, uuid, parent)
        if type(uuid) is str:
            self.uuid_records += 1
            self.parents[uuid] = parent if type(parent) is str else None
        if kind != "progress":
            self.builder.add(index, record, kind, uuid, parent)


TailAnswer = tuple[
    bool | None,  # the subagent decision the tail started from
    list[ItemRow],
    list[str | None],  # the items' uuids
    list[tuple[str | None, str]],  # msg_ids
    list[tuple[str | None, tuple[str, ...]]],  # calls
    list[tuple[str | None, str | None, tuple[str, ...]]],  # answers
    set[int],  # sidechain item positions
    list[Unresolved],
    bool,  # a tool_use id seen twice
    dict[str, str | None],  # parents
    ClaudeState,
    Tally,
    int,  # records with a uuid
]


def parse_file(path: str) -> Transcript:
    """Every line of `path` into items, and a ClaudeState fed the same records."""
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        size = st.st_size
        split = split_point(fd, size, HEAD_SHARE) if Helper.may_start(size) else size
        helper = Helper.start(tail_pass, fd, size, path, split) if split < size else None
        head = Side(ItemBuilder(), ClaudeState(path), LineCursor())
        try:
            head.run(fd, size if helper is None else split)
            if helper is not None and not _join(head, helper.result(), split):
                head.run(fd, size)  # the tail here, after the head: one pass
        finally:
            if helper is not None:
                helper.close()
    builder, state = head.builder, head.state
    builder.mark_branch(head.parents, state.leaf(head.parents), bool(state.subagent))
    return transcript_of(Provider.CLAUDE, path, builder.items, state, head.tally, st.st_mtime_ns)


def tail_pass(fd: int, size: int, path: str, split: int) -> TailAnswer:
    """The Helper's side: the records from `split` (a line start) to `size`, numbered from 0."""
    first = ClaudeState(path)
    if first.subagent is None:  # as the head's state will decide it, from the first records
        start = os.pread(fd, min(split, SIDECHAIN_PROBE_BYTES), 0)
        for _index, _length, record in feed_bytes(LineCursor(), start, False):
            if isinstance(record, dict):
                first.feed_parts(record, record.get("type"), None, None)
                if first.subagent is not None:
                    break
    tail = Side(ItemBuilder(keep_unresolved=True), first.starting_after(), LineCursor(split))
    tail.run(fd, size)
    built = tail.builder
    return (
        first.subagent,
        item_rows(built.items),
        built.uuids,
        built.msg_ids,
        built.calls,
        built.answers,
        built.sidechain,
        built.unresolved if len(built.unresolved) <= CLAUDE_JOIN_REBUILD_MAX else [],
        built.redefined or len(built.unresolved) > CLAUDE_JOIN_REBUILD_MAX,
        tail.parents,
        tail.state,
        tail.tally,
        tail.uuid_records,
    )


def _join(head: Side, answer: Any, split: int) -> bool:
    """The tail's answer joined to `head` (read up to `split`); False, with `head` as it was,
    when there is no answer or the join would not equal reading on."""
    if not isinstance(answer, tuple) or len(answer) != 13 or head.lines.offset != split:
        return False
    (subagent, rows, uuids, msg_ids, calls, answers, sidechain, unresolved, redefined,
     parents, state, tally, uuid_records) = answer  # fmt: skip
    if (
        redefined
        or subagent != head.state.subagent
        or uuid_records != len(parents)
        or not head.parents.keys().isdisjoint(parents)
        or not head.state.can_absorb(state, (msg for _uuid, msg in msg_ids))
    ):
        return False
    items = items_of(rows)
    offset, base = head.lines.line_index, len(head.builder.items)
    for item in items:
        item.line_index += offset
    heads = head.builder.tools
    for pos, missed, record, known in unresolved:
        if record is not None and any(tid in heads for tid in missed):
            # No id was set twice: the head's calls are as they were when the tail began.
            tools = {tid: heads[tid] for tid in missed if tid in heads} | known
            items[pos] = _rebuilt(record, items[pos].line_index, tools)
    builder = head.builder
    builder.items += items
    builder.uuids += uuids
    builder.msg_ids += msg_ids
    builder.calls += calls
    builder.answers += answers
    builder.sidechain.update(pos + base for pos in sidechain)
    head.parents.update(parents)
    head.state.absorb(state)
    head.add(tally)
    head.uuid_records += uuid_records
    return True


def _rebuilt(
    record: dict[str, Any], index: int, tools: dict[str, tuple[str, str]]
) -> TranscriptItem:
    """A tail's tool result item built again, knowing the tool calls it names."""
    builder = ItemBuilder()
    builder.tools = tools
    builder.add(index, record, record.get("type"), record.get("uuid"), record.get("parentUuid"))
    return builder.items[-1]
