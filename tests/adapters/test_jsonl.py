"""The resumable JSONL splitter: any chunking, any torn tail, the same lines and cursor.

`Spec` below is the behaviour written for clarity (one byte at a time); `feed_bytes` must agree
with it event for event and cursor for cursor, however its input is cut.
"""

from __future__ import annotations

import gc
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gobtui.adapters.files import jsonl
from gobtui.adapters.files.jsonl import (
    LineCursor,
    LineEvent,
    Record,
    decode_line,
    feed_bytes,
    torn_tail,
)
from gobtui.adapters.providers import full_parse
from gobtui.adapters.providers.full_parse import Tally, gc_paused, memory_chunks, read_chunks
from gobtui.core.model import BadLine

PIECES = [
    b'{"a":1}',
    b'{"b":"\xc3\xa9"}',
    b'{"c":[1,{"d":null}]}',
    b"{}",
    b"[1]",
    b"42",
    b'"s"',
    b"{",
    b"}",
    b"\xff",
    b" ",
    b"\r",
    b"\t",
    b"\x0c",
    b"\n",
    b"\n",
    b"\n",
    b"\r\n",
]


def max_line_bytes() -> int:
    return int(vars(jsonl)["MAX_LINE_BYTES"])  # as patched


class Spec:
    """What feed_bytes does, one byte at a time."""

    def __init__(self, cursor: LineCursor) -> None:
        self.c = LineCursor.from_json(cursor.to_json())

    def feed(self, chunk: bytes, at_eof: bool) -> list[LineEvent]:
        c = self.c
        events: list[LineEvent] = []
        if c.absorb_newline and chunk:
            c.absorb_newline = False
            if chunk[:1] == b"\n":
                c.offset += 1
                chunk = chunk[1:]
        for byte in chunk:
            if byte == 0x0A:
                length = c.skipping + len(c.partial)
                index = c.line_index
                c.line_index += 1
                c.offset += length + 1
                line, skipped = c.partial, c.skipping
                c.partial, c.skipping = b"", 0
                if skipped or length > max_line_bytes():
                    events.append((index, length, BadLine.TOO_LONG))
                elif line.strip():
                    events.append((index, length, decode_line(line.strip())))
            elif c.skipping:
                c.skipping += 1
            else:
                c.partial += bytes([byte])
                if len(c.partial) > max_line_bytes():
                    c.skipping, c.partial = len(c.partial), b""
        if at_eof and c.partial and not c.skipping:
            decoded = decode_line(c.partial.strip())
            if isinstance(decoded, dict):
                events.append((c.line_index, len(c.partial), decoded))
                c.line_index += 1
                c.offset += len(c.partial)
                c.partial = b""
                c.absorb_newline = True
        return events


@contextmanager
def max_line(limit: int) -> Iterator[None]:
    """MAX_LINE_BYTES set to `limit`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "MAX_LINE_BYTES", limit)
        yield


def feed_all(cursor: LineCursor, chunk: bytes, at_eof: bool) -> list[LineEvent]:
    return list(feed_bytes(cursor, chunk, at_eof))


def state(cursor: LineCursor) -> dict[str, object]:
    return cursor.to_json()


def cuts(data: bytes, positions: list[int]) -> list[bytes]:
    points = sorted({min(p, len(data)) for p in positions})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


datas = st.lists(st.sampled_from(PIECES) | st.binary(max_size=6), max_size=40).map(b"".join)
limits = st.sampled_from([4, 8, 13, 1 << 20])


@settings(max_examples=400, deadline=None)
@given(datas, st.lists(st.integers(0, 300), max_size=12), st.data(), limits)
def test_agrees_with_spec_at_every_step(
    data: bytes, positions: list[int], draw: st.DataObject, limit: int
) -> None:
    """Any chunking, with end-of-file seen at any of the steps (an appended file)."""
    with max_line(limit):
        cursor = LineCursor()
        spec = Spec(cursor)
        fed = 0
        for chunk in cuts(data, positions):
            at_eof = draw.draw(st.booleans())
            assert feed_all(cursor, chunk, at_eof) == spec.feed(chunk, at_eof)
            assert state(cursor) == state(spec.c)
            fed += len(chunk)
            assert cursor.read_pos == fed
            assert cursor.offset + len(cursor.partial) + cursor.skipping == fed
            assert not (cursor.partial and cursor.skipping)
            assert len(cursor.partial) <= limit
        assert feed_all(cursor, b"", True) == spec.feed(b"", True)
        assert state(cursor) == state(spec.c)


@settings(max_examples=300, deadline=None)
@given(datas, st.lists(st.integers(0, 300), max_size=12), limits)
def test_any_chunking_equals_one_chunk(data: bytes, positions: list[int], limit: int) -> None:
    with max_line(limit):
        whole = LineCursor()
        want = feed_all(whole, data, True)
        cursor = LineCursor()
        got: list[LineEvent] = []
        for chunk in cuts(data, positions):
            got += feed_all(cursor, chunk, False)
        got += feed_all(cursor, b"", True)
        assert got == want
        assert state(cursor) == state(whole)
        assert torn_tail(cursor) == torn_tail(whole)


@settings(max_examples=200, deadline=None)
@given(datas, st.lists(st.integers(0, 300), max_size=12), limits)
def test_cursor_survives_a_json_round_trip(data: bytes, positions: list[int], limit: int) -> None:
    with max_line(limit):
        kept = LineCursor()
        saved = LineCursor()
        for chunk in cuts(data, positions):
            saved = LineCursor.from_json(json.loads(json.dumps(saved.to_json())))
            assert feed_all(saved, chunk, False) == feed_all(kept, chunk, False)
            assert saved == kept
        assert feed_all(saved, b"", True) == feed_all(kept, b"", True)
        assert saved == kept


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES[:7]), min_size=1, max_size=8), datas)
def test_final_object_at_eof_then_its_newline(heads: list[bytes], more: bytes) -> None:
    """A last line without newline is taken at EOF; the newline that follows is absorbed."""
    head = b"\n".join(heads)
    whole = LineCursor()
    want = feed_all(whole, head + b"\n" + more, True)
    cursor = LineCursor()
    got = feed_all(cursor, head, True)
    taken = cursor.absorb_newline
    assert taken == isinstance(decode_line(heads[-1]), dict)
    got += feed_all(cursor, b"\n" + more, True)
    assert got == want
    assert state(cursor) == state(whole)


# -- examples ---------------------------------------------------------------------------------


def test_lines_offsets_and_blank_lines() -> None:
    cursor = LineCursor()
    data = b'{"a":1}\n\n  \r\n{"b":2}\r\n[3]\n'
    events = feed_all(cursor, data, False)
    assert events == [(0, 7, {"a": 1}), (3, 8, {"b": 2}), (4, 3, BadLine.NOT_OBJECT)]
    assert (cursor.offset, cursor.line_index, cursor.partial) == (len(data), 5, b"")
    assert not torn_tail(cursor)


def test_bad_lines() -> None:
    events = feed_all(LineCursor(), b'\xff{\n{"a":\n"\xc3\xa9"\n\x0c{"x":1}\x0c\n', True)
    assert [e[2] for e in events] == [
        BadLine.NOT_UTF8,
        BadLine.NOT_JSON,
        BadLine.NOT_OBJECT,
        {"x": 1},
    ]


def test_torn_tail_is_kept_until_finished() -> None:
    cursor = LineCursor()
    assert feed_all(cursor, b'{"a":1}\n{"b":', True) == [(0, 7, {"a": 1})]
    assert (cursor.offset, cursor.partial, torn_tail(cursor)) == (8, b'{"b":', True)
    assert cursor.read_pos == 13
    assert feed_all(cursor, b"2}", True) == [(1, 7, {"b": 2})]
    assert (cursor.offset, cursor.absorb_newline, torn_tail(cursor)) == (15, True, False)
    assert feed_all(cursor, b'\n{"c":3}\n', False) == [(2, 7, {"c": 3})]
    assert (cursor.offset, cursor.line_index, cursor.absorb_newline) == (24, 3, False)


def test_non_object_tail_is_not_taken_at_eof() -> None:
    cursor = LineCursor()
    assert feed_all(cursor, b"[1]", True) == []
    assert (cursor.partial, torn_tail(cursor)) == (b"[1]", True)
    assert feed_all(cursor, b"\n", True) == [(0, 3, BadLine.NOT_OBJECT)]


def test_absorbed_newline_only_when_it_comes_next() -> None:
    cursor = LineCursor()
    assert feed_all(cursor, b'{"a":1}', True) == [(0, 7, {"a": 1})]
    assert feed_all(cursor, b"", False) == [] and cursor.absorb_newline
    assert feed_all(cursor, b' {"b":2}\n', False) == [(1, 8, {"b": 2})]
    assert (cursor.offset, cursor.absorb_newline) == (16, False)


def test_over_long_lines() -> None:
    with max_line(10):
        cursor = LineCursor()
        events = feed_all(cursor, b'{"a":1}\n' + b"x" * 11 + b'\n{"b":"1234"}\n', False)
        assert events == [(0, 7, {"a": 1}), (1, 11, BadLine.TOO_LONG), (2, 12, BadLine.TOO_LONG)]
        assert feed_all(cursor, b"y" * 6, False) == []
        assert (cursor.partial, cursor.skipping) == (b"y" * 6, 0)
        assert feed_all(cursor, b"y" * 6, True) == []
        assert (cursor.partial, cursor.skipping, torn_tail(cursor)) == (b"", 12, True)
        assert feed_all(cursor, b"y" * 30, True) == []
        assert cursor.skipping == 42 and cursor.read_pos == 8 + 12 + 13 + 42
        assert feed_all(cursor, b'yy\n{"c":3}\n', False) == [
            (3, 44, BadLine.TOO_LONG),
            (4, 7, {"c": 3}),
        ]
        assert (cursor.skipping, cursor.line_index, cursor.offset) == (0, 5, 8 + 12 + 13 + 45 + 8)
        # exactly the limit is still a line
        assert feed_all(LineCursor(), b'{"k":"12"}\n', False) == [(0, 10, {"k": "12"})]


def test_cursor_json_shape() -> None:
    cursor = LineCursor(offset=3, line_index=2, partial=b"\x00\xff", skipping=0)
    data = cursor.to_json()
    assert data == {
        "offset": 3,
        "line_index": 2,
        "partial": "AP8=",
        "skipping": 0,
        "absorb_newline": False,
    }
    assert LineCursor.from_json(data) == cursor


# -- full passes ---------------------------------------------------------------------------------


def test_read_chunks_stops_at_the_size_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(full_parse, "READ_CHUNK_BYTES", 4)
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert list(read_chunks(fd, 7)) == [b"0123", b"456", b""]
        assert list(read_chunks(fd, 0)) == [b""]
        assert b"".join(read_chunks(fd, 99)) == b"0123456789"  # it shrank: what there is
    finally:
        os.close(fd)


@pytest.mark.parametrize("source", ["file", "memory"])
def test_feed_all_counts_like_feed_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    """From a file (read_chunks up to the size taken) or from its bytes (memory_chunks)."""
    monkeypatch.setattr(full_parse, "READ_CHUNK_BYTES", 5)
    data = b'{"a":1}\n[2]\n\n\xff\n{"b":\n{"c":3}\n{"d":4}'
    path = tmp_path / "f.jsonl"
    path.write_bytes(data + b'\n{"late":1}\n')  # appended after the size was taken
    fed: list[tuple[int, Record, bytes]] = []
    lines = LineCursor()

    def feed(index: int, length: int, record: Record) -> None:
        start = lines.line_start(length)
        fed.append((index, record, data[start : start + length]))

    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = read_chunks(fd, len(data)) if source == "file" else memory_chunks(data)
        tally = full_parse.feed_all(feed, chunks, lines)
    finally:
        os.close(fd)
    # each with its line's bytes: the last one was taken at EOF, without a newline
    assert fed == [(0, {"a": 1}, b'{"a":1}'), (5, {"c": 3}, b'{"c":3}'), (6, {"d": 4}, b'{"d":4}')]
    bad = Counter({"not_object": 1, "not_utf8": 1, "not_json": 1})
    assert tally == Tally(records=3, bad=bad, size=len(data), torn=False)


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
