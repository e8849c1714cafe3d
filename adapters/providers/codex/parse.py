"""A Codex rollout's full parse: every line into items and into the summary state, in one
pass, in this process; the newest compaction applied (what it replaced is out of context)."""

from __future__ import annotations

import os

from ....core.model import Provider, Transcript, TranscriptItem
from ...files.jsonl import Record
from ..full_parse import feed_all, transcript_of
from .items import Calls, compacted_item, deactivate, response_item
from .state import CodexState


def parse_transcript(path: str) -> Transcript:
    """Every line of a rollout: its items, and the summary of a CodexState fed the same
    records (so the board's incremental figures and a full parse agree by construction)."""
    with open(path, "rb") as handle:
        fd = handle.fileno()
        st = os.fstat(fd)
        state = CodexState(path)
        feed = state.feed_parts
        items: list[TranscriptItem] = []
        calls: Calls = {}
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

        tally = feed_all(take, fd, st.st_size)  # (the collector paused meanwhile)
    if compactions:
        deactivate(items, compactions[-1])
    return transcript_of(Provider.CODEX, path, items, state, tally, st.st_mtime_ns)
