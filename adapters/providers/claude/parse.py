"""A Claude transcript's full parse: every line into items and into the summary state, in
one pass, in this process."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ....core.model import Provider, Transcript
from ...files.jsonl import Record
from ..full_parse import feed_all, transcript_of
from .items import ItemBuilder
from .state import ClaudeState


@dataclass(slots=True)
class _Pass:
    """One pass's running parts: the state, the items and every parent link."""

    state: ClaudeState
    builder: ItemBuilder = field(default_factory=ItemBuilder)
    parents: dict[str, str | None] = field(default_factory=dict)

    def take(self, index: int, _length: int, record: Record) -> None:
        kind = record.get("type")
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        self.state.feed_parts(record, kind, uuid, parent)
        if type(uuid) is str:
            self.parents[uuid] = parent if type(parent) is str else None
        if kind != "progress":
            self.builder.add(index, record, kind, uuid, parent)


def parse_transcript(path: str) -> Transcript:
    """Every line of `path` into items, and the summary of a ClaudeState fed the same records
    (so the board's incremental figures and a full parse agree by construction); the items
    off the live branch marked inactive."""
    with open(path, "rb") as handle:
        fd = handle.fileno()
        st = os.fstat(fd)
        run = _Pass(ClaudeState(path))
        tally = feed_all(run.take, fd, st.st_size)  # (the collector paused meanwhile)
    builder, state = run.builder, run.state
    leaf = state.leaf(run.parents)
    builder.mark_branch(run.parents, leaf, bool(state.subagent))
    transcript = transcript_of(Provider.CLAUDE, path, builder.items, state, tally, st.st_mtime_ns)
    transcript.leaf_uuid = leaf
    return transcript
