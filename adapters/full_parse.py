"""Full parses: every line of a file into items and the summary state of the same records.

A big file's parse uses two cores. In `full_parse` (Codex's) a Helper process
(adapters.processes) feeds the summary state every record while this process builds the items
of the file's head; the Helper also builds the items of the rest (the tail), where it already
has the records decoded, so that both finish about together. `head_share` (per provider) says
where the head ends: a line start near that share of the file's bytes. A forked Helper done
first also takes the end of this process's part (adapters.steal). Claude's parse
(adapters.claude_parse) splits the file itself and uses the shared parts here.
"""

from __future__ import annotations

import dataclasses
import gc
import operator
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, TypeVar

from adapters.jsonl import (
    LineCursor,
    Record,
    decode_line,
    feed_bytes,
    line_start_after,
    torn_tail,
)
from adapters.processes import Helper
from adapters.steal import Steal, start_helper
from core.limits import READ_CHUNK_BYTES
from core.model import Coverage, Provider, SessionSummary, Transcript, TranscriptItem


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off, then as it was: a parse allocates millions of acyclic objects, and the
    collector would only rescan the growing item list (about a sixth of the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # Every tracked object (the parse's and any younger ones) joins the oldest
            # generation unscanned: the young collection due at once would otherwise scan all
            # the parse allocated (a twentieth of the time).
            gc.freeze()
            gc.unfreeze()
            gc.enable()


class Bound(Protocol):
    """An end that may move closer while a pass reads towards it (see claude_parse.Steal)."""

    def end_at(self, pos: int, end: int) -> int:
        """Where to stop now that `pos` is read (between chunks): `end`, or a line start
        between `pos` and it."""
        ...


def read_chunks(fd: int, size: int, start: int = 0, bound: Bound | None = None) -> Iterator[bytes]:
    """The bytes of `fd` from `start` to `size` (fewer if it shrank, or where `bound` says),
    a chunk at a time, then b"" (EOF)."""
    pos = start
    while pos < size:
        chunk = os.pread(fd, min(READ_CHUNK_BYTES, size - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        yield chunk
        if bound is not None:
            size = bound.end_at(pos, size)
    yield b""


@dataclass(slots=True)
class Tally:
    """What a full pass over a file's lines counts, in whichever process it ran."""

    records: int = 0
    bad: Counter[str] = field(default_factory=Counter)
    size: int = 0
    torn: bool = False


Feed = Callable[[int, int, Record], None]
"""A full pass's reader of each record: (line index, the line's byte length, record). When it
is called, the pass's LineCursor is past that line (adapters.jsonl.feed_bytes)."""


def feed_all(
    feed: Feed, fd: int, size: int, lines: LineCursor | None = None, bound: Bound | None = None
) -> Tally:
    """Every record of `fd` from the `lines` cursor's offset (0 when None) to `size` (or where
    `bound` says) to `feed`, the lines counted."""
    lines = lines if lines is not None else LineCursor()
    tally = Tally()
    bad = tally.bad
    records = 0
    with gc_paused():
        for chunk in read_chunks(fd, size, lines.offset, bound):
            tally.size += len(chunk)
            for index, length, record in feed_bytes(lines, chunk, not chunk):
                if not isinstance(record, dict):  # (isinstance of an Enum class is slower)
                    bad[record.value] += 1
                    continue
                records += 1
                feed(index, length, record)
    tally.records = records
    tally.torn = torn_tail(lines)
    return tally


class Summarising(Protocol):
    """A provider's state that can say what it saw: its summary, given the file's facts."""

    def summary(
        self,
        *,
        path: str,
        size: int,
        mtime: float,
        coverage: Coverage,
        records: int,
        bad_reasons: dict[str, int],
        torn: bool,
    ) -> SessionSummary: ...


_ITEM_ROW = operator.attrgetter(*(f.name for f in dataclasses.fields(TranscriptItem)))
ItemRow = tuple[Any, ...]


def item_rows(items: list[TranscriptItem]) -> list[ItemRow]:
    """Items as plain tuples of their fields, for a Helper to send: a slotted dataclass
    pickles several times slower."""
    return list(map(_ITEM_ROW, items))


def items_of(rows: list[ItemRow]) -> list[TranscriptItem]:
    return [TranscriptItem(*row) for row in rows]


def file_facts(
    *,
    size: int,
    mtime: float,
    coverage: Coverage,
    records: int,
    bad_reasons: dict[str, int],
    torn: bool,
) -> dict[str, Any]:
    """The SessionSummary fields about the file itself, alike for every provider."""
    return {
        "records": records,
        "bad_lines": sum(bad_reasons.values()),
        "bad_reasons": dict(bad_reasons),
        "torn_tail": torn,
        "bytes": size,
        "mtime": mtime,
        "coverage": coverage,
    }


S = TypeVar("S")
T = TypeVar("T")
U = TypeVar("U")
X = TypeVar("X")
HelperAnswer = tuple[S, U | None, Tally, Tally]
"""What a full parse's Helper sends back: the summary state, the items of the tail (None
when there is none), and the tallies of the head's lines and of every line."""


def split_point(fd: int, size: int, head_share: float) -> int:
    """Where the items pass hands over to the Helper: a line start near `head_share` of the
    file, or `size` (no tail)."""
    return line_start_after(fd, int(size * head_share), size)


def split_pass(
    head: Feed,
    tail: Feed,
    fd: int,
    size: int,
    split: int,
    rest_lines: LineCursor | None = None,
    head_lines: LineCursor | None = None,
) -> tuple[Tally, Tally]:
    """`head` fed the records before `split` (a line start), `tail` those from it (the two
    cursors, when given: `head_lines` at 0, `rest_lines` at `split`): the head's tally and
    the whole file's."""
    lines = head_lines if head_lines is not None else LineCursor()
    first = feed_all(head, fd, split, lines)
    rest_lines = rest_lines if rest_lines is not None else LineCursor(offset=split)
    rest_lines.line_index = lines.line_index
    rest = feed_all(tail, fd, size, rest_lines)
    return first, joined(first, rest)


def joined(first: Tally, rest: Tally) -> Tally:
    """The tally of two passes, the second from where the first ended."""
    return Tally(
        records=first.records + rest.records,
        bad=first.bad + rest.bad,
        size=first.size + rest.size,
        torn=first.torn or rest.torn,
    )


def full_parse(
    provider: Provider,
    path: str,
    new_state: Callable[[str], S],
    helper_pass: Callable[[int, int, str, int], HelperAnswer[S, U]],
    items_pass: Callable[[int, int, S | None, Bound | None], tuple[T, Tally]],
    finish: Callable[[T, U | None, S, X | None], tuple[list[TranscriptItem], Spans, Any]],
    weigh: Weigh,
    head_share: float,
    stealing: Callable[[Steal, int, int, str, int], tuple[X, Tally] | None] | None = None,
) -> Transcript | None:
    """Every line of `path` into items and a state fed the same records.

    For a big file a Helper runs `helper_pass` (the state, and the tail's items) while
    `items_pass` here builds the head's items without a state (None); with no Helper,
    `items_pass` does it all, feeding a `new_state`. A forked Helper runs `stealing` instead:
    it hands helper_pass's answer over at once, then may take the end of this process's part
    (adapters.steal, through items_pass's Bound): that extra part and its tally. `finish`
    joins the head's items, the extra part's and the tail's, says where the lines of those not
    weighed yet are, and gives the state to summarise. None: the file changed in place before
    they were weighed (weigh_lines).
    """
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        size = st.st_size
        split = split_point(fd, size, head_share) if Helper.may_start(size) else size
        if stealing is not None:
            helper, steal = start_helper(helper_pass, fd, size, path, split, stealing)
        else:
            helper, steal = Helper.start(helper_pass, fd, size, path, split), None
        tail: U | None = None
        extra: X | None = None
        try:
            if helper is None:
                state = new_state(path)
                out, tally = items_pass(fd, size, state, None)
            else:
                out, head = items_pass(fd, split, None, steal)
                if steal is not None:
                    steal.close()
                    part = helper.result()
                    got = steal.answer()
                    if steal.given:  # this process stopped there: the Helper's tally is for both
                        ok = isinstance(part, tuple) and len(part) == 2
                        extra, head = (part[0], joined(head, part[1])) if ok else (None, Tally())
                else:
                    got = helper.result()
                if isinstance(got, tuple) and len(got) == 4 and got[2] == head:
                    state, tail, _, tally = got
                else:
                    # No answer, or not from the same bytes, or a line the items pass did not
                    # decode (it may skip some) is damaged: everything again, here.
                    state = new_state(path)
                    tail = extra = None
                    out, tally = items_pass(fd, size, state, None)
        finally:
            if helper is not None:
                helper.close()
            if steal is not None:
                steal.release()
        items, spans, summarising = finish(out, tail, state, extra)
        if spans and not weigh_lines(fd, items, spans, weigh):
            return None
    return transcript_of(provider, path, items, summarising, tally, st.st_mtime_ns)


Spans: TypeAlias = "array[int]"
"""Where items' lines are: a (byte offset, byte length) pair an item, one after the other in
an array of 'q' (no tuple an item: a big file has a hundred thousand); (-1, 0) for an item
weighed already."""


def no_spans(count: int) -> Spans:
    """The spans of `count` items weighed already."""
    return array("q", (-1, 0)) * count


Weigh = Callable[[TranscriptItem, Record], bool]
"""Give an item built unweighed its est_tokens and payload_sha256 from its record decoded
again; False when the record is not the one the item was built from."""


def weighed_as(item: TranscriptItem, again: TranscriptItem | None) -> bool:
    """Give `item` (built unweighed) the estimate and fingerprint of `again`, its line built
    again, weighed: False when `again` is not the same item (the file changed in place)."""
    if again is None or (again.uuid, again.kind, again.elidable_bytes, again.elidable_parts) != (
        item.uuid,
        item.kind,
        item.elidable_bytes,
        item.elidable_parts,
    ):
        return False
    item.est_tokens = again.est_tokens
    item.payload_sha256 = again.payload_sha256
    return True


def weigh_lines(fd: int, items: list[TranscriptItem], spans: Spans, weigh: Weigh) -> bool:
    """Weigh the items still active that were built unweighed, each line read again: a big
    file's items are weighed once it is known which are in context, only those (see
    WEIGH_LATER_MIN_BYTES). False when a line is not what it was (the file changed in place)."""
    if len(spans) != 2 * len(items):
        return False
    for pos, item in enumerate(items):
        if item.active and spans[2 * pos] >= 0:
            start, length = spans[2 * pos], spans[2 * pos + 1]
            line = os.pread(fd, length, start)
            record = decode_line(line.strip())
            if len(line) != length or not isinstance(record, dict) or not weigh(item, record):
                return False
    return True


def transcript_of(
    provider: Provider,
    path: str,
    items: list[TranscriptItem],
    summarising: Summarising,
    tally: Tally,
    mtime_ns: int,
) -> Transcript:
    """A full parse's Transcript: its items, and the summary of the state fed every line."""
    summary = summarising.summary(
        path=path,
        size=tally.size,
        mtime=mtime_ns / 1e9,
        coverage=Coverage.FULL,
        records=tally.records,
        bad_reasons=dict(tally.bad),
        torn=tally.torn,
    )
    return Transcript(
        provider=provider, session_id=summary.session_id, path=path, items=items, summary=summary
    )
