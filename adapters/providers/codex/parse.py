"""A Codex rollout's full parse: every line into items and into the summary state, in one
pass, in this process; the newest compaction applied (what it replaced is out of context)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ....core.model import Provider, Transcript, TranscriptItem
from ...files.jsonl import Record
from ...files.regular import regular_file
from ..full_parse import feed_all, memory_chunks, read_chunks, transcript_of
from .items import Calls, compacted_item, deactivate, response_item
from .state import CodexState


def _parse(path: str, chunks: Iterable[bytes], mtime_ns: int) -> Transcript:
    state = CodexState(path)
    feed = state.feed_parts
    items: list[TranscriptItem] = []
    calls = Calls()
    compactions: list[int] = []

    def take(index: int, _length: int, record: Record) -> None:
        rtype = record.get("type")
        payload = record.get("payload")
        feed(record, rtype, payload)
        if type(payload) is dict:
            if rtype == "response_item":
                items.append(response_item(index, payload, calls))
            elif rtype == "compacted":
                items.append(compacted_item(index, payload))
                compactions.append(index)

    tally = feed_all(take, chunks)  # (the collector paused meanwhile)
    if compactions:
        deactivate(items, compactions[-1])
    return transcript_of(Provider.CODEX, path, items, state, tally, mtime_ns)


def parse_transcript(path: str) -> Transcript:
    """Every line of a rollout: its items, and the summary of a CodexState fed the same
    records (so the board's incremental figures and a full parse agree by construction)."""
    with regular_file(path) as handle:
        fd = handle.fileno()
        st = os.fstat(fd)
        return _parse(path, read_chunks(fd, st.st_size), st.st_mtime_ns)


def parse_data(path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
    """parse_transcript() of `path`'s bytes in `data`: the whole file, or (`part`) its live
    part (session_meta, then the newest compaction and what follows). A rollout is one line
    of turns, so its live part never reaches back: never None."""
    del part
    return _parse(path, memory_chunks(data), mtime_ns)
