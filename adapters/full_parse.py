"""Full parses: every line of a file into items and the summary state of the same records.

A big file's parse uses two cores: a Helper process (adapters.processes) feeds the summary
state the very same bytes while this one builds the items.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from adapters.jsonl import LineCursor, Record, feed_bytes, torn_tail
from adapters.processes import Helper
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


def read_chunks(fd: int, size: int) -> Iterator[bytes]:
    """The first `size` bytes of `fd` (fewer if it shrank), a chunk at a time, then b"" (EOF)."""
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(READ_CHUNK_BYTES, size - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        yield chunk
    yield b""


@dataclass(slots=True)
class Tally:
    """What a full pass over a file's lines counts, in whichever process it ran."""

    records: int = 0
    bad: Counter[str] = field(default_factory=Counter)
    size: int = 0
    torn: bool = False


def feed_all(feed: Callable[[int, Record], None], fd: int, size: int) -> Tally:
    """Every record of the first `size` bytes of `fd` to `feed` (with its line index), the
    lines counted."""
    lines = LineCursor()
    tally = Tally()
    bad = tally.bad
    records = 0
    with gc_paused():
        for chunk in read_chunks(fd, size):
            tally.size += len(chunk)
            for index, _length, record in feed_bytes(lines, chunk, not chunk):
                if not isinstance(record, dict):  # (isinstance of an Enum class is slower)
                    bad[record.value] += 1
                    continue
                records += 1
                feed(index, record)
    tally.records = records
    tally.torn = torn_tail(lines)
    return tally


class Summarising(Protocol):
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


S = TypeVar("S")
T = TypeVar("T")


def full_parse(
    provider: Provider,
    path: str,
    new_state: Callable[[str], S],
    full_pass: Callable[[int, int, str], tuple[S, Tally]],
    items_pass: Callable[[int, int, S | None], tuple[T, Tally]],
    finish: Callable[[T, S], tuple[list[TranscriptItem], Summarising]],
) -> Transcript:
    """`items_pass` over every line of `path`, feeding a `new_state` the same records (for a big
    file that state is `full_pass`'s, in a Helper meanwhile: items_pass is given None); then
    `finish` makes the items and the state to summarise of the two."""
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        helper = Helper.start(full_pass, fd, st.st_size, path)
        try:
            state = None if helper else new_state(path)
            out, tally = items_pass(fd, st.st_size, state)
            if helper is not None:
                got = helper.result()
                if isinstance(got, tuple) and len(got) == 2 and got[1] == tally:
                    state = got[0]
                else:
                    # No answer, or not from the same bytes, or a line the items pass did not
                    # decode (it may skip some) is damaged: everything again, here.
                    state = new_state(path)
                    out, tally = items_pass(fd, st.st_size, state)
        finally:
            if helper is not None:
                helper.close()
    assert state is not None
    items, summarising = finish(out, state)
    summary = summarising.summary(
        path=path,
        size=tally.size,
        mtime=st.st_mtime_ns / 1e9,
        coverage=Coverage.FULL,
        records=tally.records,
        bad_reasons=dict(tally.bad),
        torn=tally.torn,
    )
    return Transcript(
        provider=provider, session_id=summary.session_id, path=path, items=items, summary=summary
    )
