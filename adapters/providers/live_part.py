"""The live part of a transcript: its last compaction and what follows, all a plan reads.

A 200 MB session is mostly history that its provider already compacted away; the context a
plan works on starts at the newest compaction. It is found from the end of the file (the
marker bytes, then the line holding them decoded and checked), so finding it reads only the
tail, and what precedes it goes into a fork byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.model import Provider
from ..files.jsonl import decode_line
from .registry import provider_of


@dataclass(frozen=True)
class LivePart:
    """Where the live part of `source` starts, and the lines from before it a parse needs."""

    start: int
    """Byte offset of the newest compaction's line (0: no compaction, the whole file)."""
    head: bytes
    """Lines of the file's start that a reader of the live part needs (Codex: session_meta)."""

    def text(self, source: bytes) -> bytes:
        """The bytes a plan reads: the head, then the live part."""
        return source if self.start == 0 else self.head + source[self.start :]

    def whole(self, source: bytes, rewritten: bytes) -> bytes:
        """The file a rewrite of text() gives: the history as it was, then the rewrite (whose
        head is the source's own, unchanged)."""
        if self.start == 0:
            return rewritten
        return source[: self.start] + rewritten[len(self.head) :]


WHOLE = LivePart(0, b"")


def find_live_part(source: bytes, provider: Provider) -> LivePart:
    """The newest compaction of `source`, searched from the end; WHOLE when there is none
    (or it is the first line)."""
    rule = provider_of(provider)
    end = len(source)
    while (at := source.rfind(rule.BOUNDARY_MARKER, 0, end)) >= 0:
        start = source.rfind(b"\n", 0, at) + 1
        stop = source.find(b"\n", at)
        record = decode_line(source[start : len(source) if stop < 0 else stop].strip())
        if type(record) is dict and rule.is_boundary(record):
            return LivePart(start, rule.live_head(source)) if start else WHOLE
        end = start  # the marker sat inside another record: look before its line
    return WHOLE
