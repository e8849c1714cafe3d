"""A Claude transcript's full parse: every line into items and into the summary state, in
one pass, in this process."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ....core.model import Provider, Transcript
from ...files.jsonl import Record
from ...files.regular import regular_file
from ..full_parse import feed_all, memory_chunks, read_chunks, transcript_of
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


def _parse(path: str, chunks: Iterable[bytes], mtime_ns: int, whole: bool) -> Transcript | None:
    run = _Pass(ClaudeState(path))
    tally = feed_all(run.take, chunks)  # (the collector paused meanwhile)
    builder, state, parents = run.builder, run.state, run.parents
    leaf = state.leaf(parents)
    if not whole and _reaches_out(state, parents, leaf):
        return None
    builder.mark_branch(parents, leaf, bool(state.subagent))
    transcript = transcript_of(Provider.CLAUDE, path, builder.items, state, tally, mtime_ns)
    transcript.leaf_uuid = leaf
    return transcript


def _reaches_out(state: ClaudeState, parents: dict[str, str | None], leaf: str | None) -> bool:
    """Whether the live branch of a part of a file runs on before the part: a parent (or the
    last prompt's leaf) that the part does not hold."""
    if state.prompt_leaf is not None and state.prompt_leaf not in parents:
        return True
    node = leaf
    for _ in range(len(parents) + 1):  # the step bound is the cycle guard
        if node is None:
            return False
        if node not in parents:
            return True
        node = parents[node]
    return False


def parse_transcript(path: str) -> Transcript:
    """Every line of `path` into items, and the summary of a ClaudeState fed the same records
    (so the board's incremental figures and a full parse agree by construction); the items
    off the live branch marked inactive."""
    with regular_file(path) as handle:
        fd = handle.fileno()
        st = os.fstat(fd)
        transcript = _parse(path, read_chunks(fd, st.st_size), st.st_mtime_ns, whole=True)
    assert transcript is not None
    return transcript


def parse_data(path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
    """parse_transcript() of `path`'s bytes in `data`: the whole file, or (`part`) its live
    part (from its newest compaction boundary), None when the live branch reaches back before."""
    return _parse(path, memory_chunks(data), mtime_ns, whole=not part)
