"""A Claude transcript's full parse: every line into items and into the summary state.

A big file is split in two at a line start: this process parses the head while a Helper
(adapters.processes) parses the tail with a state and a builder of its own, so every line is
decoded once, on one core or the other. The tail's answer is then joined to the head as if
this process had gone on reading:
- the tail's items are numbered on from the head's lines, and the few tool results naming a
  tool call of the head are rebuilt with it;
- its state is absorbed (HalfState.absorb), which is exact as long as no record's uuid is
  used twice across the join and no response's usage is split apart by another.
A forked Helper that is done first also takes the end of the head (adapters.steal), another
part joined the same way, before the tail: the two cores' speeds differ from run to run on a
shared machine, and a fixed split leaves one of them idle.
Anything else (no Helper, a failed or foreign answer, a file where the join would not be
exact) and this process reads the rest itself after the head: one pass, as without a Helper.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from adapters.claude import ClaudeState
from adapters.claude_items import ItemBuilder, Siblings, Unresolved, weigh
from adapters.full_parse import (
    Bound,
    ItemRow,
    Spans,
    Tally,
    feed_all,
    gc_paused,
    item_rows,
    items_of,
    split_point,
    transcript_of,
    weigh_lines,
)
from adapters.jsonl import LineCursor, Record, feed_bytes
from adapters.processes import Helper
from adapters.steal import Steal, start_helper
from core.limits import (
    CLAUDE_JOIN_REBUILD_MAX,
    RECENT_LINK_WINDOW,
    USAGE_HISTORY_MAX,
    WEIGH_LATER_MIN_BYTES,
)
from core.model import Provider, Transcript, TranscriptItem

HEAD_SHARE = 0.62
"""Where a big file's head ends (a line start near this share of its bytes): more than half,
so that a forked Helper is most often done first and takes part of the head's end."""

SIDECHAIN_PROBE_BYTES = 64 * 1024
"""How much of the file's start the tail's side reads to find the first record that says
whether the file is a subagent's (the head's state decides by it; the tail must know it)."""


_LEAF_UNTOUCHED = "\0"
"""prompt_leaf of a state from starting_after() that no last-prompt or leaf record changed."""


class HalfState(ClaudeState):
    """A ClaudeState that can be fed one part of a file and joined to the state of the part
    before it, fed in another process."""

    def starting_after(self) -> HalfState:
        """A state to feed the records after this one's, in another process, for absorb():
        the decisions taken at the first records (subagent or not) are carried over."""
        tail = HalfState(self.path)
        tail.subagent = self.subagent
        tail.prompt_leaf = _LEAF_UNTOUCHED
        return tail

    def can_absorb(self, tail: HalfState, tail_msg_ids: Iterable[str]) -> bool:
        """Whether absorb(tail) would leave this state as if it had been fed the tail's
        records itself. `tail_msg_ids` are the message ids of the tail's assistant records in
        file order (a superset of what its history saw). The windows (links, usage history)
        need no key set twice apart: the caller checks the links' uuids; the history's keys
        are checked here. The usage of one response may straddle the two halves."""
        ids = [key for key, _ in groupby(tail_msg_ids) if key]
        if len(set(ids)) != len(ids) or any(key.startswith("#") for key in ids):
            return False  # (a key like an anonymous response's would be numbered on)
        history = self.history
        shared = history.keys() & set(ids)
        if not shared:
            return True
        return shared == {ids[0]} and next(reversed(history)) == ids[0]

    def absorb(self, tail: HalfState) -> None:
        """Fold in `tail`: a state from starting_after() fed the records after this one's,
        given can_absorb(tail, ...) and no uuid of the tail's among this one's."""
        if self.subagent is None:
            self.subagent = tail.subagent
        if self.agent_id is None:
            self.agent_id = tail.agent_id
        if self.session_id is None:
            self.session_id = tail.session_id
        if self.title is None:
            self.title = tail.title
        self.cwd = tail.cwd or self.cwd
        self.model = tail.model if tail.model is not None else self.model
        if tail.newest_usage is not None:
            self.newest_usage = tail.newest_usage
        if tail.newest_leaf is not None:
            self.newest_leaf = tail.newest_leaf
        if tail.prompt_leaf != _LEAF_UNTOUCHED:
            self.prompt_leaf = tail.prompt_leaf
        links = self.links
        links.update(tail.links)
        while len(links) > RECENT_LINK_WINDOW:
            links.popitem(False)
        history = self.history
        for key, (ts, tokens) in tail.history.items():
            if key.startswith("#"):  # an anonymous response: numbered on from this one's
                uuid, _, number = key.rpartition("#")
                key = f"{uuid}#{int(number) + self._anon}"
            sample = history.get(key)
            history[key] = (sample[0] if sample else ts, tokens)
        while len(history) > USAGE_HISTORY_MAX:
            history.popitem(False)
        self._anon += tail._anon
        self.compactions.extend(tail.compactions)
        # The instants' bounds: on a tie the earlier record's raw text stays, as feeding keeps it.
        first = tail.first_ts
        if first is not None and (self.first_ts is None or first < self.first_ts):
            self.first_ts, self._lo_raw = first, tail._lo_raw
        last, mine = tail.last_ts, self.last_ts
        if last is not None and (mine is None or last > mine):
            self.last_ts = last
            self._hi_raw = tail._hi_raw
        lo, hi = self._lo_raw, self._hi_raw
        self._ts_len = len(lo) if lo and len(lo) == len(hi) else -1


@dataclass(slots=True)
class Side:
    """One process's share of a parse: the items, every parent link, the state, the lines."""

    builder: ItemBuilder
    state: HalfState
    lines: LineCursor
    parents: dict[str, str | None] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    uuid_records: int = 0
    """Records with a uuid: more than len(parents) when one was used twice."""

    def run(self, fd: int, end: int, bound: Bound | None = None) -> None:
        """Every record from the line cursor's offset to `end` (or where `bound` says), to the
        builder and the state."""
        self.add(feed_all(self._record, fd, end, self.lines, bound))

    def add(self, tally: Tally) -> None:
        """Count the lines of a pass that went on from this one's."""
        self.tally.records += tally.records
        self.tally.bad += tally.bad
        self.tally.size += tally.size
        self.tally.torn = tally.torn

    def _record(self, index: int, length: int, record: Record) -> None:
        kind = record.get("type")
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        self.state.feed_parts(record, kind, uuid, parent)
        if type(uuid) is str:
            self.uuid_records += 1
            self.parents[uuid] = parent if type(parent) is str else None
        if kind != "progress":
            start = self.lines.line_start(length)
            self.builder.add(index, record, kind, uuid, parent, start, length)


TailAnswer = tuple[
    bool | None,  # the subagent decision the tail started from
    list[ItemRow],
    Siblings,
    set[int],  # sidechain item positions
    list[Unresolved],
    bool,  # a tool_use id seen twice
    dict[str, str | None],  # parents
    HalfState,
    Tally,
    int,  # records with a uuid
    Spans,  # the items' lines (not weighed)
    tuple[int, int],  # where the part ended, and how many lines it had
    dict[str, tuple[str, str]] | None,  # its tool calls (a part another part follows)
]
"""A part of a file parsed in a Helper, to join to what this process read before it."""


def parse_file(path: str, weigh_later: bool | None = None) -> Transcript:
    """Every line of `path` into items, and a ClaudeState fed the same records. The items of a
    big file (or any, when `weigh_later`) are weighed once the live branch is known, only those
    in it (see WEIGH_LATER_MIN_BYTES)."""
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        size = st.st_size
        later = size >= WEIGH_LATER_MIN_BYTES if weigh_later is None else weigh_later
        split = split_point(fd, size, HEAD_SHARE) if Helper.may_start(size) else size
        helper, steal = (
            start_helper(tail_pass, fd, size, path, split, _tail_pass_stealing)
            if split < size
            else (None, None)
        )
        head = Side(ItemBuilder(weigh=not later), HalfState(path), LineCursor())
        try:
            head.run(fd, size if helper is None else split, steal)
            if steal is not None:
                steal.close()
            if helper is not None:
                parts = _parts(helper.result(), steal, split)
                for n, (start, answer) in enumerate(parts, 1):
                    if not _join(head, answer, start, last=n == len(parts)):
                        head.run(fd, size)  # the rest here, after the head: one pass
                        break
        finally:
            if helper is not None:
                helper.close()
            if steal is not None:
                steal.release()
        builder, state = head.builder, head.state
        leaf = state.leaf(head.parents)
        builder.mark_branch(head.parents, leaf, bool(state.subagent))
        if later and not weigh_lines(fd, builder.items, builder.spans, weigh):
            return parse_file(path, weigh_later=False)  # changed in place: read it again
    transcript = transcript_of(
        Provider.CLAUDE, path, builder.items, state, head.tally, st.st_mtime_ns
    )
    transcript.leaf_uuid = leaf
    return transcript


def tail_pass(fd: int, size: int, path: str, split: int) -> TailAnswer:
    """The Helper's side: the records from `split` (a line start) to `size`, numbered from 0."""
    return _part(_first_decisions(fd, path, split), fd, split, size, size >= WEIGH_LATER_MIN_BYTES)


def _tail_pass_stealing(
    steal: Steal, fd: int, size: int, path: str, split: int
) -> TailAnswer | None:
    """tail_pass in a forked Helper, its answer handed over at once, then the end of the head's
    part if this process gets it (adapters.steal): that part's answer."""
    started = time.monotonic()
    steal.helper_side()
    later = size >= WEIGH_LATER_MIN_BYTES
    tail = _part(_first_decisions(fd, path, split), fd, split, size, later)
    speed = (size - split) / max(time.monotonic() - started, 1e-6)
    start = steal.ask(tail, speed / (1 + PICKLE_SHARE))  # (an extra part is pickled too)
    if not start:
        return None
    # (decided from the records before `start`, as the head's state will have)
    return _part(_first_decisions(fd, path, start), fd, start, split, later, True)


PICKLE_SHARE = 0.15
"""A part's answer takes about this share of its parse to pickle (the 219 MB of row d: the
tail's 0.14 to 0.17 s against 1.1 s, forked)."""


def _parts(answer: Any, steal: Steal | None, split: int) -> list[tuple[int, Any]]:
    """The Helper's parts in file order, each with where it starts."""
    if steal is None:
        return [(split, answer)]
    return ([(steal.given, answer)] if steal.given else []) + [(split, steal.answer())]


def _first_decisions(fd: int, path: str, split: int) -> HalfState:
    """A state fed the file's first records until it knows whether the file is a subagent's,
    as the head's state will decide it."""
    first = HalfState(path)
    if first.subagent is None:
        start = os.pread(fd, min(split, SIDECHAIN_PROBE_BYTES), 0)
        for _index, _length, record in feed_bytes(LineCursor(), start, False):
            if isinstance(record, dict):
                first.feed_parts(record, record.get("type"), None, None)
                if first.subagent is not None:
                    break
    return first


def _part(
    first: HalfState, fd: int, start: int, end: int, later: bool, with_tools: bool = False
) -> TailAnswer:
    """The records from `start` (a line start) to `end`, numbered from 0, as a TailAnswer."""
    builder = ItemBuilder(keep_unresolved=True, weigh=not later)
    part = Side(builder, first.starting_after(), LineCursor(start))
    part.run(fd, end)
    unresolved = builder.unresolved
    return (
        first.subagent,
        item_rows(builder.items),
        builder.siblings,
        builder.sidechain,
        unresolved if len(unresolved) <= CLAUDE_JOIN_REBUILD_MAX else [],
        builder.redefined or len(unresolved) > CLAUDE_JOIN_REBUILD_MAX,
        part.parents,
        part.state,
        part.tally,
        part.uuid_records,
        builder.spans,
        (part.lines.offset, part.lines.line_index),
        builder.tools if with_tools else None,
    )


def _join(head: Side, answer: Any, start: int, last: bool = True) -> bool:
    """A Helper's part joined to `head` (read up to `start`, where the part starts); False,
    with `head` as it was, when there is no answer or the join would not equal reading on.
    A part that is not the `last` brings its tool calls (the next one's results may name
    them)."""
    if not isinstance(answer, tuple) or len(answer) != 13 or head.lines.offset != start:
        return False
    (subagent, rows, siblings, sidechain, unresolved, redefined,
     parents, state, tally, uuid_records, spans, (end, lines), tools) = answer  # fmt: skip
    builder = head.builder
    if (
        redefined
        or (tools is None) != last
        or len(spans) != (0 if builder.weigh else 2 * len(rows))  # not weighed alike
        or subagent != head.state.subagent
        or uuid_records != len(parents)
        or not head.parents.keys().isdisjoint(parents)
        or not head.state.can_absorb(state, siblings.msg_keys)
    ):
        return False
    items = items_of(rows)
    offset, base = head.lines.line_index, len(head.builder.items)
    for item in items:
        item.line_index += offset
    heads = head.builder.tools
    for pos, missed, record, known in unresolved:
        if any(tid in heads for tid in missed):
            # No id was set twice: the head's calls are as they were when the part began.
            tools_then = {tid: heads[tid] for tid in missed if tid in heads} | known
            items[pos] = _rebuilt(record, items[pos].line_index, tools_then)
    builder.items += items
    builder.spans += spans
    builder.uuids += [item.uuid for item in items]  # (not sent: the items have them)
    builder.siblings.extend(siblings)
    builder.sidechain.update(pos + base for pos in sidechain)
    if tools is not None:
        heads.update(tools)
    head.parents.update(parents)
    head.state.absorb(state)
    head.add(tally)
    head.uuid_records += uuid_records
    head.lines = LineCursor(offset=end, line_index=offset + lines)
    return True


def _rebuilt(
    record: dict[str, Any], index: int, tools: dict[str, tuple[str, str]]
) -> TranscriptItem:
    """A tail's tool result item built again, knowing the tool calls it names."""
    builder = ItemBuilder()
    builder.tools = tools
    builder.add(index, record, record.get("type"), record.get("uuid"), record.get("parentUuid"))
    return builder.items[-1]
