"""Reading a transcript file into a SessionSummary, cold or incrementally.

A FileCursor remembers how far a file was read and the provider's running state, so an append
costs only the appended bytes (and a look at the bytes it had read: see `fingerprint`). A file
that shrank, was replaced (new inode) or was rewritten in place (the bytes read before are not
the same) is read again from 0. Big files are summarised cold from their head and tail only; the cursor then goes on
from the end like any other. Many cold reads at once (a first start) are announced to the
kernel first (`hint_cold_reads`), so a cold disk fetches them side by side.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from ...core.limits import (
    FINGERPRINT_WINDOW_BYTES,
    FULL_READ_MAX_BYTES,
    HEAD_FIRST_BYTES,
    HEAD_SCAN_BYTES,
    READ_CHUNK_BYTES,
    TAIL_SCAN_BYTES,
    TAIL_SCAN_MAX_BYTES,
    TAIL_SECONDARY_MAX_BYTES,
)
from ...core.model import BadLine, Coverage, Provider, SessionSummary
from ..files.jsonl import (
    LineCursor,
    decode_line,
    feed_bytes,
    torn_tail,
)
from ..files.regular import open_regular
from .interface import TailState, TailStateFactory

PARSER_VERSION = 11
"""Bump when a reader's output changes: cached cursors of another version are dropped."""


BodyLoader = Callable[[], "FileCursor"]


@dataclass(slots=True)
class FileCursor:
    provider: Provider
    path: str
    inode: int
    size: int
    mtime_ns: int
    lines: LineCursor
    state: TailState
    records: int = 0
    bad_reasons: Counter[str] = field(default_factory=Counter)
    coverage: Coverage = Coverage.FULL
    fingerprint: str = ""
    """The digest of the bytes read so far (`fingerprint` up to lines.read_pos): `advance` tails
    the file only while it still holds them. "" (not known) reads it again from 0."""
    body: BodyLoader | None = None
    """Set on a cursor restored from the cache without its body (lines, state, counts):
    a warm start of an unchanged file needs only the stat figures, so decoding the rest
    waits until the file changes (see `loaded`)."""
    as_read: bool = False
    """The cursor is what a cold read of the file (not `full`) makes, not advanced since:
    reading the file again remakes it, so the cache keeps its head only."""

    def loaded(self) -> FileCursor:
        """This cursor with its body: itself, or the full cursor decoded from the cache."""
        return self if self.body is None else self.body()

    def summary(self) -> SessionSummary:
        if self.body is not None:
            return self.body().summary()
        return self.state.summary(
            path=self.path,
            size=self.size,
            mtime=self.mtime_ns / 1e9,
            coverage=self.coverage,
            records=self.records,
            bad_reasons=dict(self.bad_reasons),
            torn=torn_tail(self.lines),
        )

    def feed(self, chunk: bytes, at_eof: bool) -> None:
        state = self.state
        feed = state.feed
        records = 0
        # (no depth check: a summary's reader never writes a record back)
        loads = type(state).tail_loads
        events = feed_bytes(self.lines, chunk, at_eof, loads, depth_checked=False)
        try:
            for _index, length, decoded in events:
                if type(decoded) is dict:
                    records += 1
                    feed(decoded, length)
                else:
                    self.bad_reasons[cast(BadLine, decoded).value] += 1
        finally:
            self.records += records

    def to_json(self) -> dict[str, Any]:
        if self.body is not None:
            return self.body().to_json()
        return {
            "parser_version": PARSER_VERSION,
            "provider": self.provider.value,
            "path": self.path,
            "inode": self.inode,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "lines": self.lines.to_json(),
            "state": self.state.to_json(),
            "records": self.records,
            "bad_reasons": dict(self.bad_reasons),
            "coverage": self.coverage.value,
            "fingerprint": self.fingerprint,
        }


def _read_range(fd: int, start: int, end: int) -> bytes:
    return os.pread(fd, max(0, end - start), start)


Seen = list[tuple[int, bytes]]
"""Bytes of a file a read holds already, by offset: what a fingerprint need not read again."""


def fingerprint_ranges(end: int) -> list[tuple[int, int]]:
    """The byte ranges [start, stop) of a file's first `end` bytes that its fingerprint
    covers: all of them when short, else the first and the last window."""
    window = FINGERPRINT_WINDOW_BYTES
    if end <= 2 * window:
        return [(0, end)]
    return [(0, window), (end - window, end)]


def fingerprint(fd: int, end: int, seen: Seen | None = None) -> str:
    """A digest of the bytes of `fd` before `end` (fingerprint_ranges), taken from `seen`
    where it holds them; what it reads is added to `seen`. A file shorter than `end` gives
    another digest."""
    seen = seen if seen is not None else []
    digest = hashlib.sha256(b"%d:" % end)
    for start, stop in fingerprint_ranges(end):
        pos = start
        for at, data in sorted(seen, key=lambda piece: piece[0]):
            if at <= pos < at + len(data):
                part = memoryview(data)[pos - at : stop - at]
                digest.update(part)
                pos += len(part)
                if pos >= stop:
                    break
        if pos < stop:
            more = _read_range(fd, pos, stop)
            seen.append((pos, more))
            digest.update(more)  # (short when the file shrank: then the digest differs)
    return digest.hexdigest()


def open_cursor(
    path: str, provider: Provider, make_state: TailStateFactory, *, full: bool = False
) -> FileCursor:
    """A cold read: the whole file when small (or `full`), else its head and a tail that
    holds the latest usage (what the board needs first; history in between comes later)."""
    fd = open_regular(path, follow_symlinks=True)
    try:
        return _cold_read(fd, os.fstat(fd), path, provider, make_state, full=full)
    finally:
        os.close(fd)


def cursor_of_fd(
    fd: int, path: str, provider: Provider, make_state: TailStateFactory
) -> FileCursor:
    """open_cursor() of a descriptor the caller opened (and checked) itself."""
    return _cold_read(fd, os.fstat(fd), path, provider, make_state)


def _cold_read(
    fd: int,
    st: os.stat_result,
    path: str,
    provider: Provider,
    make_state: TailStateFactory,
    *,
    full: bool = False,
) -> FileCursor:
    cursor = FileCursor(
        provider=provider,
        path=path,
        inode=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        lines=LineCursor(),
        state=make_state(path),
        as_read=not full,
    )
    if full or st.st_size <= FULL_READ_MAX_BYTES:
        seen = _read_to_end(fd, cursor, st.st_size)
    else:
        _no_readahead(fd)
        # The head a little at a time: most say their id, folder and title in a few KB.
        head = _read_range(fd, 0, HEAD_FIRST_BYTES)
        cursor.feed(head, at_eof=False)
        if not cursor.state.head_known:
            more = _read_range(fd, len(head), HEAD_SCAN_BYTES)
            cursor.feed(more, at_eof=False)
            head += more
        seen = [(0, head)]
        head_end = cursor.lines.offset
        first, *others = cursor.state.tail_marker
        tail_start, tail = _tail(fd, st.st_size, head_end, first)
        if tail_start > head_end:
            cursor.coverage = Coverage.HEAD_TAIL
            for marker in others:
                if tail.find(marker) < 0:
                    _feed_line_before(fd, cursor, head_end, tail_start, marker, seen)
            cursor.lines = LineCursor(offset=tail_start, line_index=cursor.lines.line_index)
            cursor.feed(tail, at_eof=False)  # read already: the rest (if any) follows
            seen.append((tail_start, tail))
        _readahead(fd)  # what is left is read in order (all of the middle, when no tail)
        seen += _read_to_end(fd, cursor, st.st_size)
    cursor.fingerprint = fingerprint(fd, cursor.lines.read_pos, seen)
    return cursor


def _tail(fd: int, size: int, head_end: int, marker: bytes) -> tuple[int, bytes]:
    """The smallest tail window (TAIL_SCAN_BYTES, doubled up to TAIL_SCAN_MAX_BYTES) holding
    `marker` (the latest usage): the start of its first whole line and its bytes from there;
    (head_end, b"") when the window reaches the head. A wider window reads only what the
    last one did not."""
    window = TAIL_SCAN_BYTES
    data, data_start = b"", size
    while True:
        start = max(head_end, size - window)
        if start <= head_end:
            return head_end, b""
        more = _read_range(fd, start, data_start)
        # (a short read: the file changed under us, so the window is read afresh)
        complete = len(more) == data_start - start
        data = more + data if complete else _read_range(fd, start, size)
        data_start = start
        nl = data.find(b"\n")
        if nl >= 0 and (data.find(marker, nl + 1) >= 0 or window >= TAIL_SCAN_MAX_BYTES):
            return start + nl + 1, data[nl + 1 :]
        window *= 2


def _feed_line_before(
    fd: int, cursor: FileCursor, head_end: int, tail_start: int, marker: bytes, seen: Seen
) -> None:
    """Feed the state the newest record before the tail whose line holds `marker` (say, the
    turn_context naming the model), found by its bytes within TAIL_SECONDARY_MAX_BYTES of the
    tail: only that line is decoded. It lies between the head and the tail, so the state
    still sees records in file order; when none is found, the head's value stands."""
    data, start, window = b"", tail_start, TAIL_SCAN_BYTES
    at = line_start = -1
    while start > head_end and window <= TAIL_SECONDARY_MAX_BYTES:
        nearer = start
        start = max(head_end, tail_start - window)
        more = _read_range(fd, start, nearer)  # (the bytes the last window did not have)
        seen.append((start, more))
        data = more + data
        if at < 0:  # only the new bytes (and a marker's length into the old) hold a newer one
            at = data.rfind(marker, 0, len(more) + len(marker))
        else:
            at += len(more)
        if at >= 0:
            line_start = data.rfind(b"\n", 0, at) + 1
            if line_start > 0 or start == head_end:
                break  # its whole line is read (head_end is a line start)
        window *= 2
    else:
        return  # not there
    line_end = data.find(b"\n", at)  # (found: the tail starts a line)
    decoded = decode_line(data[line_start:line_end])
    if type(decoded) is dict:
        cursor.state.feed(decoded, line_end - line_start)
        cursor.records += 1


def advance(cursor: FileCursor) -> tuple[FileCursor, bool]:
    """Bring a cursor up to date with its file. Returns (cursor, changed).

    Raises OSError when the file cannot be read; the caller decides what that means.
    """
    st = os.stat(cursor.path)
    if (
        st.st_ino == cursor.inode
        and st.st_size == cursor.size
        and st.st_mtime_ns == cursor.mtime_ns
    ):
        return cursor, False
    cursor = cursor.loaded()
    fd = open_regular(cursor.path, follow_symlinks=True)
    try:
        st = os.fstat(fd)
        read = cursor.lines.read_pos
        seen: Seen = []
        if (
            st.st_ino != cursor.inode
            or st.st_size < read
            # rewritten in place (same inode, as long or longer): what was read is not there
            or fingerprint(fd, read, seen) != cursor.fingerprint
        ):
            fresh = _cold_read(fd, st, cursor.path, cursor.provider, _state_factory_of(cursor))
            return fresh, True
        seen += _read_to_end(fd, cursor, st.st_size)
        if cursor.lines.read_pos > read:
            cursor.as_read = False
        cursor.size = st.st_size
        cursor.mtime_ns = st.st_mtime_ns
        cursor.fingerprint = fingerprint(fd, cursor.lines.read_pos, seen)
    finally:
        os.close(fd)
    return cursor, True


def _state_factory_of(cursor: FileCursor) -> TailStateFactory:
    factory: TailStateFactory = type(cursor.state)
    return factory


def _read_to_end(fd: int, cursor: FileCursor, size: int) -> Seen:
    """Feed the cursor the rest of the file (up to `size`); the first and the last chunk it
    read, by offset (where a fingerprint finds its bytes)."""
    seen: Seen = []
    pos = cursor.lines.read_pos
    while pos < size:
        chunk = _read_range(fd, pos, min(size, pos + READ_CHUNK_BYTES))
        if not chunk:
            break
        if len(seen) < 2:
            seen.append((pos, chunk))
        else:
            seen[1] = (pos, chunk)
        pos += len(chunk)
        cursor.feed(chunk, at_eof=False)
    cursor.feed(b"", at_eof=True)
    cursor.size = max(cursor.size, pos)
    return seen


# -- cold reads ---------------------------------------------------------------------------------

Rows = tuple[bytes, bytes]
"""A cursor's cache rows, head and body (adapters.sessions.cache.encode_entry)."""
StateFor = Callable[[Provider], type[TailState]]


def hint_cold_reads(paths: Iterable[str]) -> None:
    """Ask the kernel for every window the cold reads to come will want (a small file whole,
    a big one's head and first tail window), all at once: on a cold disk they are then
    fetched side by side instead of one request at a time as each file's turn comes."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue  # its read reports it
        try:
            size = os.fstat(fd).st_size
            if size <= FULL_READ_MAX_BYTES:
                advise(fd, 0, size, os.POSIX_FADV_WILLNEED)
            else:
                advise(fd, 0, HEAD_SCAN_BYTES, os.POSIX_FADV_WILLNEED)
                tail = max(HEAD_SCAN_BYTES, size - TAIL_SCAN_BYTES)
                advise(fd, tail, size - tail, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass  # only a hint
        finally:
            os.close(fd)


def _no_readahead(fd: int) -> None:
    """Head and tail reads of a big file: the kernel's readahead would fetch far more than
    the window from a cold disk."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is not None:
        advise(fd, 0, 0, os.POSIX_FADV_RANDOM)


def _readahead(fd: int) -> None:
    advise = getattr(os, "posix_fadvise", None)
    if advise is not None:
        advise(fd, 0, 0, os.POSIX_FADV_NORMAL)
