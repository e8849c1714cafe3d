"""Reading a transcript file into a SessionSummary, cold or incrementally.

A FileCursor remembers how far a file was read and the provider's running state, so an append
costs only the appended bytes. A file that shrank or was replaced (new inode) is read again
from 0. Big files are summarised cold from their head and tail only; the cursor then goes on
from the end like any other. Many cold reads at once (a first start) are shared with a helper
process on the other core (`read_cold`).
"""

from __future__ import annotations

import os
import struct
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, cast

import orjson

from adapters.full_parse import Summarising
from adapters.jsonl import LineCursor, Record, feed_bytes, torn_tail
from adapters.processes import Child, cores, single_threaded, write_all
from core.limits import (
    FULL_READ_MAX_BYTES,
    HEAD_SCAN_BYTES,
    READ_CHUNK_BYTES,
    TAIL_SCAN_BYTES,
    TAIL_SCAN_MAX_BYTES,
    TAIL_SECONDARY_MAX_BYTES,
)
from core.model import BadLine, Coverage, Provider, SessionSummary

PARSER_VERSION = 3
"""Bump when a reader's output changes: cached cursors of another version are dropped."""


class TailState(Summarising, Protocol):
    """A provider's running state over the records read so far."""

    provider: ClassVar[Provider]
    tail_marker: ClassVar[bytes | tuple[bytes, ...]]
    """What a tail must contain (every one of them) to hold the latest usage and model."""

    def __init__(self, path: str) -> None: ...

    def feed(self, record: Record, line_len: int) -> None: ...

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> TailState: ...

    def to_json(self) -> dict[str, Any]: ...


class TailStateFactory(Protocol):
    def __call__(self, path: str) -> TailState: ...


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
    body: BodyLoader | None = None
    """Set on a cursor restored from the cache without its body (lines, state, counts):
    a warm start of an unchanged file needs only the stat figures, so decoding the rest
    waits until the file changes (see `loaded`)."""

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
        feed = self.state.feed
        records = 0
        try:
            for _index, length, decoded in feed_bytes(self.lines, chunk, at_eof):
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
        }


def _read_range(fd: int, start: int, end: int) -> bytes:
    return os.pread(fd, max(0, end - start), start)


def open_cursor(
    path: str, provider: Provider, make_state: TailStateFactory, *, full: bool = False
) -> FileCursor:
    """A cold read: the whole file when small (or `full`), else its head and a tail that
    holds the latest usage (what the board needs first; history in between comes later)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        cursor = FileCursor(
            provider=provider,
            path=path,
            inode=st.st_ino,
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            lines=LineCursor(),
            state=make_state(path),
        )
        if full or st.st_size <= FULL_READ_MAX_BYTES:
            _read_to_end(fd, cursor, st.st_size)
            return cursor
        _no_readahead(fd)
        cursor.feed(_read_range(fd, 0, HEAD_SCAN_BYTES), at_eof=False)
        head_end = cursor.lines.offset
        tail_start, tail = _tail(fd, st.st_size, head_end, cursor.state.tail_marker)
        if tail_start > head_end:
            cursor.coverage = Coverage.HEAD_TAIL
            cursor.lines = LineCursor(offset=tail_start, line_index=cursor.lines.line_index)
            cursor.feed(tail, at_eof=False)  # read already: the rest (if any) follows
        _readahead(fd)  # what is left is read in order (all of the middle, when no tail)
        _read_to_end(fd, cursor, st.st_size)
        return cursor
    finally:
        os.close(fd)


def _tail(
    fd: int, size: int, head_end: int, marker: bytes | tuple[bytes, ...]
) -> tuple[int, bytes]:
    """The smallest tail window holding the markers: the start of its first whole line and
    its bytes from there; (head_end, b"") when the window reaches the head.

    The first marker (the latest usage) is looked for up to TAIL_SCAN_MAX_BYTES; the others
    (say, the record naming the model) only up to TAIL_SECONDARY_MAX_BYTES, after which the
    head's value stands. A wider window reads only what the last one did not.
    """
    first, *others = marker if isinstance(marker, tuple) else (marker,)
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
        if nl >= 0:
            enough = window >= TAIL_SECONDARY_MAX_BYTES or all(
                data.find(m, nl + 1) >= 0 for m in others
            )
            if (data.find(first, nl + 1) >= 0 and enough) or window >= TAIL_SCAN_MAX_BYTES:
                return start + nl + 1, data[nl + 1 :]
        window *= 2


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
    if st.st_ino != cursor.inode or st.st_size < cursor.lines.read_pos:
        fresh = open_cursor(cursor.path, cursor.provider, _state_factory_of(cursor))
        return fresh, True
    fd = os.open(cursor.path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        _read_to_end(fd, cursor, st.st_size)
        cursor.size = st.st_size
        cursor.mtime_ns = st.st_mtime_ns
    finally:
        os.close(fd)
    return cursor, True


def _state_factory_of(cursor: FileCursor) -> TailStateFactory:
    factory: TailStateFactory = type(cursor.state)  # type: ignore[assignment]
    return factory


def _read_to_end(fd: int, cursor: FileCursor, size: int) -> None:
    pos = cursor.lines.read_pos
    while pos < size:
        chunk = _read_range(fd, pos, min(size, pos + READ_CHUNK_BYTES))
        if not chunk:
            break
        pos += len(chunk)
        cursor.feed(chunk, at_eof=False)
    cursor.feed(b"", at_eof=True)
    cursor.size = max(cursor.size, pos)


# -- cold reads shared with a helper process ---------------------------------------------------

ColdJob = tuple[str, Provider]
Rows = tuple[bytes, bytes]
"""A cursor's cache rows, head and body (adapters.cache.encode_entry)."""
StateFor = Callable[[Provider], type[TailState]]

COLD_FORK_MIN_FILES = 24
"""Cold reads use a forked helper from this many files on (a fork costs a few ms)..."""
COLD_SPAWN_MIN_FILES = 500
"""... and a spawned one (a fresh interpreter, ~0.3 s of the other core) from this many."""
COLD_PIPE_BYTES = 1024 * 1024
"""Room asked for in the helper's pipe, so it rarely waits for the reader between files."""
_FRAME = struct.Struct("<III")
"""A helper's answer: job index, head and body lengths, then the rows (lengths 0: not read)."""
_COLD_MAIN = """
import sys
from adapters.reader import serve_cold
serve_cold(sys.stdin.buffer.read(), 1)
"""


def read_cold(
    jobs: Sequence[ColdJob], read_here: Callable[[int], None], state_for: StateFor
) -> dict[int, Rows]:
    """Read `jobs` cold: `read_here(i)` for each from the front, while a helper process (when
    there are enough jobs and a core to spare) reads them from the back and answers with each
    cursor's cache rows. Returns those answers by index; read_here was called for every other.

    Nobody waits: this side stops where the helper's answers begin, the helper is killed then,
    and a job the helper failed on is read here (so errors surface as without it).
    """
    _hint(jobs)
    helper = _ColdHelper.start(jobs, state_for)
    if helper is None:
        for index in range(len(jobs)):
            read_here(index)
        return {}
    try:
        index = 0
        while index < helper.low:
            read_here(index)
            index += 1
            helper.poll()
    finally:
        helper.stop()
    answers = {k: rows for k, rows in helper.answers.items() if k >= index}
    for k in range(index, len(jobs)):
        if k not in answers:
            read_here(k)
    return answers


def _hint(jobs: Sequence[ColdJob]) -> None:
    """Ask the kernel for every window the reads below will want (a small file whole, a big
    one's head and first tail window), all at once: on a cold disk they are then fetched side
    by side instead of one request at a time as each file's turn comes. Warm, ~10 µs a file."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for path, _provider in jobs:
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


def _read_encoded(job: ColdJob, state_for: StateFor) -> Rows:
    from adapters.cache import encode_entry  # (the cache imports this module)

    path, provider = job
    cursor = open_cursor(path, provider, cast(TailStateFactory, state_for(provider)))
    return encode_entry(cursor, cursor.summary())


def _serve(jobs: Sequence[ColdJob], state_for: StateFor, out: int) -> None:
    """The helper's side: the jobs from the back, an answer (frame) each."""
    for index in range(len(jobs) - 1, -1, -1):
        try:
            head, body = _read_encoded(jobs[index], state_for)
        except Exception:  # the reader's side reads it again and reports it
            head = body = b""
        write_all(out, _FRAME.pack(index, len(head), len(body)) + head + body)


def serve_cold(jobs_json: bytes, out: int) -> None:
    """A spawned helper's main: the jobs as JSON [[path, provider], ...], answers to `out`."""
    from adapters.providers import state_class

    jobs = [(str(path), Provider(provider)) for path, provider in orjson.loads(jobs_json)]
    _serve(jobs, state_class, out)


class _ColdHelper:
    """The other side of read_cold: a child process and the answers read from it so far."""

    def __init__(self, child: Child, count: int) -> None:
        self._child = child
        self._buffer = bytearray()
        self.low = count
        """Every job from here on is answered (or failed) by the helper."""
        self.answers: dict[int, Rows] = {}

    @classmethod
    def start(cls, jobs: Sequence[ColdJob], state_for: StateFor) -> _ColdHelper | None:
        if len(jobs) < COLD_FORK_MIN_FILES or os.name != "posix" or cores() < 2:
            return None
        child: Child | None = None
        if single_threaded():  # fork: no start-up cost, and the child has state_for already
            child = Child.fork(lambda out: _serve(jobs, state_for, out))
        elif len(jobs) >= COLD_SPAWN_MIN_FILES and _is_default(state_for):
            import tempfile

            with tempfile.TemporaryFile() as payload:  # a pipe could block on a long list
                payload.write(orjson.dumps([[path, provider.value] for path, provider in jobs]))
                payload.seek(0)
                child = Child.spawn(_COLD_MAIN, [], stdin=payload)
        if child is None:
            return None
        try:
            os.set_blocking(child.fd, False)
        except OSError:
            child.stop()
            return None
        _widen(child.fd)
        return cls(child, len(jobs))

    def poll(self) -> None:
        """Take in what the helper wrote so far, without waiting."""
        if self._child.fd < 0:
            return
        try:
            while chunk := os.read(self._child.fd, COLD_PIPE_BYTES):
                self._buffer += chunk
        except BlockingIOError:
            pass
        except OSError:
            self._child.stop()
        buffer, pos = self._buffer, 0
        while len(buffer) - pos >= _FRAME.size:
            index, head_len, body_len = _FRAME.unpack_from(buffer, pos)
            start = pos + _FRAME.size
            end = start + head_len + body_len
            if end > len(buffer):
                break
            if not 0 <= index < self.low:  # answers come from the back, one each
                self._child.stop()
                break
            if head_len:
                self.answers[index] = (
                    bytes(buffer[start : start + head_len]),
                    bytes(buffer[start + head_len : end]),
                )
            self.low = index
            pos = end
        del buffer[:pos]

    def stop(self) -> None:
        self._child.stop()


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


def _widen(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), COLD_PIPE_BYTES)
    except (ImportError, OSError):
        pass  # the default size works, with more waiting


def _is_default(state_for: StateFor) -> bool:
    """A spawned helper knows only the real providers' states."""
    from adapters.providers import state_class

    return state_for is state_class
