"""Splitting JSONL bytes into records, resumable at any byte boundary.

A LineCursor survives between reads: it holds the bytes of an unfinished last line, so an
append costs only the appended bytes. A final line without a newline that already parses as a
JSON object is taken at end of file (real files sometimes lack the last newline); the newline
that may follow it later is absorbed so line numbers stay those of a full read.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from ...core.limits import MAX_JSON_DEPTH, MAX_LINE_BYTES
from ...core.model import BadLine

Record = dict[str, Any]


@dataclass(slots=True)
class LineCursor:
    offset: int = 0
    """Bytes fully consumed (complete lines, or a final object taken at EOF)."""
    line_index: int = 0
    """Physical index of the next line."""
    partial: bytes = b""
    """Bytes after `offset` of a line not finished yet."""
    skipping: int = 0
    """Bytes dropped so far of an over-long line (0 when not inside one)."""
    absorb_newline: bool = False
    """The last line was taken at EOF without its newline; a newline next belongs to it."""

    @property
    def read_pos(self) -> int:
        """File position of the next byte to read."""
        return self.offset + len(self.partial) + self.skipping

    def line_start(self, length: int) -> int:
        """Where the line just yielded (of `length` bytes) starts: the cursor is past it, and
        past its newline unless it was taken at EOF."""
        return self.offset - length - (0 if self.absorb_newline else 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "line_index": self.line_index,
            "partial": base64.b64encode(self.partial).decode("ascii"),
            "skipping": self.skipping,
            "absorb_newline": self.absorb_newline,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LineCursor:
        return cls(
            offset=int(data["offset"]),
            line_index=int(data["line_index"]),
            partial=base64.b64decode(data["partial"]),
            skipping=int(data["skipping"]),
            absorb_newline=bool(data["absorb_newline"]),
        )


def decode_line(line: bytes) -> Record | BadLine:
    """One line to a JSON object, or the reason it is not one."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _not_json(line)
    if type(value) is not dict:  # orjson makes exact dicts
        return BadLine.NOT_OBJECT
    return BadLine.TOO_DEEP if _too_deep(bytes(line), 0, len(line), value) else value


def _too_deep(data: bytes, start: int, stop: int, value: Any) -> bool:
    """The value read from data[start:stop] nests deeper than MAX_JSON_DEPTH containers. Two
    byte counts settle almost every line: fewer brackets cannot nest that deep."""
    if data.count(b"{", start, stop) + data.count(b"[", start, stop) <= MAX_JSON_DEPTH:
        return False
    level = [(value, 1)]
    while level:
        node, depth = level.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        if type(node) is dict:
            level.extend((child, depth + 1) for child in node.values())
        elif type(node) is list:
            level.extend((child, depth + 1) for child in node)
    return False


def serialized_len(value: Any) -> int | None:
    """Bytes of `value` as compact JSON; None when orjson cannot write it: it reads a
    nesting of up to 1,024 levels but writes no more than 254, and a transcript can hold
    the deeper (hostile input). Such a record is kept as it is, never rewritten."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return None


def _not_json(line: bytes) -> BadLine:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return BadLine.NOT_UTF8
    return BadLine.NOT_JSON


LineEvent = tuple[int, int, "Record | BadLine"]
"""(line_index, byte length of the line, decoded object or why not)."""
Loads = Callable[[Any], Any]
"""How a line becomes an object: orjson.loads, or a pass's cheaper stand-in for lines it can
tell by their first bytes it does not need (see adapters.providers.codex.parse.items_loads)."""


def feed_bytes(
    cursor: LineCursor,
    chunk: bytes,
    at_eof: bool,
    loads: Loads = orjson.loads,
    *,
    depth_checked: bool = True,
) -> Iterator[LineEvent]:
    """Advance `cursor` over `chunk` (the bytes at cursor.read_pos), yielding finished lines.

    The cursor is up to date with every line yielded so far when a line is yielded. Without
    `depth_checked` a record nested deeper than MAX_JSON_DEPTH is yielded like any other:
    depth matters only to a pass whose records may be written back (orjson writes no deeper),
    and the check costs two counts over every byte.
    """
    if cursor.absorb_newline and chunk:
        cursor.absorb_newline = False
        if chunk[:1] == b"\n":
            cursor.offset += 1
            chunk = chunk[1:]
    if chunk:
        end = chunk.rfind(b"\n") + 1
        if end:
            yield from _finish_lines(cursor, chunk, end, loads, depth_checked)
        rest = chunk[end:]
        if rest:
            if cursor.skipping:
                cursor.skipping += len(rest)
            elif len(cursor.partial) + len(rest) > MAX_LINE_BYTES:
                cursor.skipping = len(cursor.partial) + len(rest)
                cursor.partial = b""
            else:
                cursor.partial += rest
    if at_eof and cursor.partial and not cursor.skipping:
        decoded = decode_line(cursor.partial.strip())
        if isinstance(decoded, dict):
            index = cursor.line_index
            length = len(cursor.partial)
            cursor.line_index += 1
            cursor.offset += length
            cursor.partial = b""
            cursor.absorb_newline = True
            yield index, length, decoded


def _finish_lines(
    cursor: LineCursor, chunk: bytes, end: int, loads: Loads, depth_checked: bool
) -> Iterator[LineEvent]:
    """The events of the lines of chunk[:end] (each ended by a newline); the first continues
    the cursor's unfinished line."""
    # Each line is found (memchr) just before it is decoded: one pass over bytes still in the
    # cache (bytes.split would compare byte by byte, then copy every line). orjson decodes a
    # view of it (no copy); another `loads` gets a copy.
    find = chunk.find
    index = cursor.line_index
    offset = cursor.offset
    pos = 0
    line: bytes | memoryview | None = None
    if cursor.skipping or cursor.partial:
        pos = find(b"\n", 0, end) + 1
        if cursor.skipping:
            length = cursor.skipping + pos - 1
            cursor.skipping = 0
            index += 1
            offset += length + 1
            cursor.line_index = index
            cursor.offset = offset
            yield index - 1, length, BadLine.TOO_LONG
        else:
            line = cursor.partial + chunk[: pos - 1]
            cursor.partial = b""
    view = memoryview(chunk) if loads is orjson.loads else chunk
    limit = MAX_LINE_BYTES
    error = orjson.JSONDecodeError
    record_of = _record_of if depth_checked else _object_of
    while line is not None or pos < end:
        if line is None:
            stop = find(b"\n", pos)
            length = stop - pos
            if length <= limit:
                line = view[pos:stop]
            raw, start = chunk, pos  # where the line's bytes are (for a depth check)
            pos = stop + 1
        else:
            length = len(line)
            raw, start = bytes(line), 0
        offset += length + 1
        index += 1
        if length > limit:
            cursor.line_index = index
            cursor.offset = offset
            yield index - 1, length, BadLine.TOO_LONG
        elif line is not None:
            cursor.line_index = index
            cursor.offset = offset
            try:
                value = loads(line)
            except error:
                # blank, or padded with what JSON does not call whitespace, or damaged
                stripped = bytes(line).strip()
                if stripped:
                    try:
                        value = loads(stripped)
                    except error:
                        yield index - 1, length, _not_json(stripped)
                    else:
                        yield index - 1, length, record_of(value, raw, start, length)
            else:
                yield index - 1, length, record_of(value, raw, start, length)
        line = None
    cursor.line_index = index
    cursor.offset = offset


def _record_of(value: Any, raw: bytes, start: int, length: int) -> Record | BadLine:
    if type(value) is not dict:
        return BadLine.NOT_OBJECT
    return BadLine.TOO_DEEP if _too_deep(raw, start, start + length, value) else value


def _object_of(value: Any, _raw: bytes, _start: int, _length: int) -> Record | BadLine:
    return value if type(value) is dict else BadLine.NOT_OBJECT


SPLIT_WINDOW_BYTES = 1024 * 1024
"""How far past a byte a line start is looked for (line_start_after)."""


def line_start_after(fd: int, at: int, end: int) -> int:
    """The first line start of `fd` after byte `at` (within SPLIT_WINDOW_BYTES) and before
    `end`, else `end`: where a file can be split between two readers."""
    if at <= 0 or at >= end:
        return end
    newline = os.pread(fd, SPLIT_WINDOW_BYTES, at).find(b"\n")
    return at + newline + 1 if newline >= 0 and at + newline + 1 < end else end


def torn_tail(cursor: LineCursor) -> bool:
    """True when the file ends inside a line that is not (yet) a whole record."""
    return bool(cursor.partial.strip()) or cursor.skipping > 0
