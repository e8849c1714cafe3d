"""The toy's full parse: every record into items and the state, in one pass."""

from __future__ import annotations

import os
from collections.abc import Iterable

from gobtui.adapters.files.jsonl import Record
from gobtui.adapters.files.regular import regular_file
from gobtui.adapters.providers.full_parse import (
    feed_all,
    memory_chunks,
    read_chunks,
    transcript_of,
)
from gobtui.core.model import ItemKind, Transcript, TranscriptItem
from gobtui.core.tokens import estimate_tokens
from tests.adapters.toy_provider import PROVIDER
from tests.adapters.toy_provider.state import ToyState

_KINDS = {"call": ItemKind.TOOL_CALL, "result": ItemKind.TOOL_RESULT}


def _item(index: int, length: int, record: Record) -> TranscriptItem | None:
    kind = record.get("toy")
    if kind == "say":
        said = ItemKind.USER if record.get("who") == "user" else ItemKind.ASSISTANT
        return TranscriptItem(index, said, estimate_tokens(length), summary=record.get("text"))
    if kind not in _KINDS:
        return None
    call = record.get("call")
    ids = (call,) if type(call) is str else ()
    item = TranscriptItem(index, _KINDS[kind], estimate_tokens(length), tool_use_ids=ids)
    output = record.get("output")
    if kind == "result" and type(output) is str and output:
        item.elidable_bytes = len(output.encode())
        item.elidable_parts = 1
    item.label = str(record.get("name") or kind)
    return item


def _parse(path: str, chunks: Iterable[bytes], mtime_ns: int) -> Transcript:
    state = ToyState(path)
    items: list[TranscriptItem] = []

    def take(index: int, length: int, record: Record) -> None:
        state.feed(record, length)
        if record.get("toy") == "compact":
            items.clear()  # the context starts again
        item = _item(index, length, record)
        if item is not None:
            items.append(item)

    tally = feed_all(take, chunks)
    return transcript_of(PROVIDER, path, items, state, tally, mtime_ns)


def parse_file(path: str) -> Transcript:
    with regular_file(path) as handle:
        st = os.fstat(handle.fileno())
        return _parse(path, read_chunks(handle.fileno(), st.st_size), st.st_mtime_ns)


def parse_bytes(path: str, data: bytes, mtime_ns: int) -> Transcript:
    return _parse(path, memory_chunks(data), mtime_ns)
