"""A Claude transcript's full parse: every line into items and into the summary state, in
one pass, in this process."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from adapters.files.jsonl import LineCursor, Record
from adapters.providers.claude.items import ItemBuilder
from adapters.providers.claude.state import ClaudeState
from adapters.providers.full_parse import Tally, feed_all, gc_paused, transcript_of
from core.model import Provider, Transcript


@dataclass(slots=True)
class Side:
    """A parse's running parts: the items, every parent link, the state, the lines."""

    builder: ItemBuilder
    state: ClaudeState
    lines: LineCursor
    parents: dict[str, str | None] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)

    def run(self, fd: int, end: int) -> None:
        """Every record from the line cursor's offset to `end`, to the builder and the state."""
        self.tally = feed_all(self._record, fd, end, self.lines)

    def _record(self, index: int, _length: int, record: Record) -> None:
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
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        side = Side(ItemBuilder(), ClaudeState(path), LineCursor())
        side.run(fd, st.st_size)
    builder, state = side.builder, side.state
    leaf = state.leaf(side.parents)
    builder.mark_branch(side.parents, leaf, bool(state.subagent))
    transcript = transcript_of(
        Provider.CLAUDE, path, builder.items, state, side.tally, st.st_mtime_ns
    )
    transcript.leaf_uuid = leaf
    return transcript
