"""A Codex rollout's full parse: every line into items and into the summary state, in one
pass, in this process; the newest compaction applied (what it replaced is out of context)."""

from __future__ import annotations

import os

from adapters.files.jsonl import LineCursor, feed_bytes, torn_tail
from adapters.providers.codex.items import Calls, compacted_item, deactivate, response_item
from adapters.providers.codex.state import CodexState
from adapters.providers.full_parse import Tally, gc_paused, read_chunks, transcript_of
from core.model import Provider, Transcript, TranscriptItem


def parse_transcript(path: str) -> Transcript:
    """Every line of a rollout: its items, and the summary of a CodexState fed the same
    records (so the board's incremental figures and a full parse agree by construction)."""
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        state = CodexState(path)
        items, tally = _items_pass(fd, st.st_size, state)
    return transcript_of(Provider.CODEX, path, items, state, tally, st.st_mtime_ns)


def _items_pass(fd: int, size: int, state: CodexState) -> tuple[list[TranscriptItem], Tally]:
    """Items of every record up to `size`, and `state` fed them; the newest compaction
    applied."""
    feed = state.feed_parts
    lines = LineCursor()
    items: list[TranscriptItem] = []
    append = items.append
    calls: Calls = {}
    tally = Tally()
    bad = tally.bad
    records = 0
    last_compaction = -1
    for chunk in read_chunks(fd, size):
        tally.size += len(chunk)
        for index, _length, record in feed_bytes(lines, chunk, not chunk):
            if not isinstance(record, dict):  # (isinstance of an Enum class is slower)
                bad[record.value] += 1
                continue
            records += 1
            rtype = record.get("type")
            payload = record.get("payload")
            feed(record, rtype, payload)
            if type(payload) is dict:
                if rtype == "response_item":
                    append(response_item(index, payload, calls))
                elif rtype == "compacted":
                    append(compacted_item(index, payload))
                    last_compaction = index
    if last_compaction >= 0:
        deactivate(items, last_compaction)
    tally.records = records
    tally.torn = torn_tail(lines)
    return items, tally
