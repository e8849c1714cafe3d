"""Full parses: every line of a file into items and the summary state of the same records,
in one pass (the providers' parse_file), and the parts they share."""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...core.limits import READ_CHUNK_BYTES
from ...core.model import Coverage, Provider, Transcript, TranscriptItem
from ..files.jsonl import LineCursor, Record, feed_bytes, torn_tail
from .interface import Summarising


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off, then as it was: a parse allocates millions of acyclic objects, and the
    collector would only rescan the growing item list, again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # Every tracked object (the parse's and any younger ones) joins the oldest
            # generation unscanned: the young collection due at once would otherwise scan all
            # the parse allocated.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def read_chunks(fd: int, size: int, start: int = 0) -> Iterator[bytes]:
    """The bytes of `fd` from `start` to `size` (fewer if it shrank), a chunk at a time, then
    b"" (EOF)."""
    pos = start
    while pos < size:
        chunk = os.pread(fd, min(READ_CHUNK_BYTES, size - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        yield chunk
    yield b""


@dataclass(slots=True)
class Tally:
    """What a full pass over a file's lines counts."""

    records: int = 0
    bad: Counter[str] = field(default_factory=Counter)
    size: int = 0
    torn: bool = False


def memory_chunks(data: bytes) -> Iterator[bytes]:
    """`data` as read_chunks gives a file: a chunk at a time, then b""."""
    for start in range(0, len(data), READ_CHUNK_BYTES):
        yield data[start : start + READ_CHUNK_BYTES]
    yield b""


Feed = Callable[[int, int, Record], None]
"""A full pass's reader of each record: (line index, the line's byte length, record). When it
is called, the pass's LineCursor is past that line (adapters.files.jsonl.feed_bytes)."""


def feed_all(feed: Feed, chunks: Iterable[bytes], lines: LineCursor | None = None) -> Tally:
    """Every record of `chunks` (a file's bytes from the `lines` cursor's offset, 0 when None,
    ending with b"") to `feed`, the lines counted."""
    lines = lines if lines is not None else LineCursor()
    tally = Tally()
    bad = tally.bad
    records = 0
    with gc_paused():
        for chunk in chunks:
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
