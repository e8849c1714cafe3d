"""Splitting JSONL bytes into records, resumable at any byte boundary.

A LineCursor survives between reads: it holds the bytes of an unfinished last line, so an
append costs only the appended bytes. A final line without a newline that already parses as a
JSON object is taken at end of file (real files sometimes lack the last newline); the newline
that may follow it later is absorbed so line numbers stay those of a full read.

Full parses (every line into items) of big files use two cores: a Helper process feeds the
summary state the very same bytes while the caller builds the items (see `Helper`). Helper
processes (`Child`) are forked when this process runs a single thread (the CLI; no start-up
cost, nothing to import), else started as a fresh interpreter (the dashboard's workers: a fork
there could copy a lock another thread holds).
"""

from __future__ import annotations

import base64
import gc
import os
import pickle
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

import orjson

from core.limits import MAX_LINE_BYTES, READ_CHUNK_BYTES
from core.model import BadLine, Coverage, Provider, SessionSummary, Transcript, TranscriptItem

if TYPE_CHECKING:
    import subprocess

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
    return value


def _not_json(line: bytes) -> BadLine:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return BadLine.NOT_UTF8
    return BadLine.NOT_JSON


SPLIT_BLOCK_BYTES = 256 * 1024
"""feed_bytes splits this much of a chunk at a time (a performance knob, not a limit)."""

LineEvent = tuple[int, int, "Record | BadLine"]
"""(line_index, byte length of the line, decoded object or why not)."""
Loads = Callable[[bytes], Any]
"""How a line becomes an object: orjson.loads, or a pass's cheaper stand-in for lines it can
tell by their first bytes it does not need (see adapters.codex.items_loads)."""


def feed_bytes(
    cursor: LineCursor, chunk: bytes, at_eof: bool, loads: Loads = orjson.loads
) -> Iterator[LineEvent]:
    """Advance `cursor` over `chunk` (the bytes at cursor.read_pos), yielding finished lines.

    The cursor is up to date with every line yielded so far when a line is yielded.
    """
    if cursor.absorb_newline and chunk:
        cursor.absorb_newline = False
        if chunk[:1] == b"\n":
            cursor.offset += 1
            chunk = chunk[1:]
    if chunk:
        # Split a block of lines at a time (one C call), small enough to stay in the cache
        # while its lines are decoded; a block ends at a newline.
        end = chunk.rfind(b"\n") + 1
        pos = 0
        while pos < end:
            stop = end
            if end - pos > SPLIT_BLOCK_BYTES:
                stop = chunk.rfind(b"\n", pos, pos + SPLIT_BLOCK_BYTES) + 1
                if stop <= pos:  # a line longer than a block
                    stop = chunk.find(b"\n", pos + SPLIT_BLOCK_BYTES) + 1
            yield from _finish_lines(cursor, chunk[pos : stop - 1].split(b"\n"), loads)
            pos = stop
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


def _finish_lines(cursor: LineCursor, lines: list[bytes], loads: Loads) -> Iterator[LineEvent]:
    """The events of `lines`, each ended by a newline; the first continues cursor.partial."""
    index = cursor.line_index
    if cursor.skipping:
        length = cursor.skipping + len(lines[0])
        cursor.line_index = index + 1
        cursor.offset += length + 1
        cursor.skipping = 0
        yield index, length, BadLine.TOO_LONG
        del lines[0]
        index += 1
    elif cursor.partial:
        lines[0] = cursor.partial + lines[0]
        cursor.partial = b""
    offset = cursor.offset
    limit = MAX_LINE_BYTES
    error = orjson.JSONDecodeError
    for line in lines:
        length = len(line)
        offset += length + 1
        if length > limit:
            cursor.line_index = index + 1
            cursor.offset = offset
            yield index, length, BadLine.TOO_LONG
        else:
            stripped = line.strip()
            if stripped:
                cursor.line_index = index + 1
                cursor.offset = offset
                try:
                    value = loads(stripped)
                except error:
                    yield index, length, _not_json(stripped)
                else:
                    yield index, length, value if type(value) is dict else BadLine.NOT_OBJECT
        index += 1
    cursor.line_index = index
    cursor.offset = offset


def torn_tail(cursor: LineCursor) -> bool:
    """True when the file ends inside a line that is not (yet) a whole record."""
    return bool(cursor.partial.strip()) or cursor.skipping > 0


# -- full parses -------------------------------------------------------------------------------


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off, then as it was: a parse allocates millions of acyclic objects, and the
    collector would only rescan the growing item list (about a sixth of the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # Every tracked object (the parse's and any younger ones) joins the oldest
            # generation unscanned: the young collection due at once would otherwise scan all
            # the parse allocated (a twentieth of the time).
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def read_chunks(fd: int, size: int) -> Iterator[bytes]:
    """The first `size` bytes of `fd` (fewer if it shrank), a chunk at a time, then b"" (EOF)."""
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(READ_CHUNK_BYTES, size - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        yield chunk
    yield b""


@dataclass(slots=True)
class Tally:
    """What a full pass over a file's lines counts, in whichever process it ran."""

    records: int = 0
    bad: Counter[str] = field(default_factory=Counter)
    size: int = 0
    torn: bool = False


def feed_all(feed: Callable[[int, Record], None], fd: int, size: int) -> Tally:
    """Every record of the first `size` bytes of `fd` to `feed` (with its line index), the
    lines counted."""
    lines = LineCursor()
    tally = Tally()
    bad = tally.bad
    records = 0
    with gc_paused():
        for chunk in read_chunks(fd, size):
            tally.size += len(chunk)
            for index, _length, record in feed_bytes(lines, chunk, not chunk):
                if not isinstance(record, dict):  # (isinstance of an Enum class is slower)
                    bad[record.value] += 1
                    continue
                records += 1
                feed(index, record)
    tally.records = records
    tally.torn = torn_tail(lines)
    return tally


class Summarising(Protocol):
    def summary(
        self,
        *,
        path: str,
        size: int,
        mtime: float,
        coverage: Coverage,
        records: int,
        bad_reasons: dict[str, int],
        torn: bool,
    ) -> SessionSummary: ...


S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


def full_parse(
    provider: Provider,
    path: str,
    new_state: Callable[[str], S],
    full_pass: Callable[[int, int, str], tuple[S, Tally]],
    items_pass: Callable[[int, int, S | None], tuple[T, Tally]],
    finish: Callable[[T, S], tuple[list[TranscriptItem], Summarising]],
) -> Transcript:
    """`items_pass` over every line of `path`, feeding a `new_state` the same records (for a big
    file that state is `full_pass`'s, in a Helper meanwhile: items_pass is given None); then
    `finish` makes the items and the state to summarise of the two."""
    with open(path, "rb") as handle, gc_paused():
        fd = handle.fileno()
        st = os.fstat(fd)
        helper = Helper.start(full_pass, fd, st.st_size, path)
        try:
            state = None if helper else new_state(path)
            out, tally = items_pass(fd, st.st_size, state)
            if helper is not None:
                got = helper.result()
                if isinstance(got, tuple) and len(got) == 2 and got[1] == tally:
                    state = got[0]
                else:
                    # No answer, or not from the same bytes, or a line the items pass did not
                    # decode (it may skip some) is damaged: everything again, here.
                    state = new_state(path)
                    out, tally = items_pass(fd, st.st_size, state)
        finally:
            if helper is not None:
                helper.close()
    assert state is not None
    items, summarising = finish(out, state)
    summary = summarising.summary(
        path=path,
        size=tally.size,
        mtime=st.st_mtime_ns / 1e9,
        coverage=Coverage.FULL,
        records=tally.records,
        bad_reasons=dict(tally.bad),
        torn=tally.torn,
    )
    return Transcript(
        provider=provider, session_id=summary.session_id, path=path, items=items, summary=summary
    )


HELPER_MIN_BYTES = 96 * 1024 * 1024
"""Full parses of files this big (or bigger) feed their summary state in a Helper: below
about 80 MB a spawned one's start (a fresh interpreter, ~0.3 s) costs more than it saves."""
FORK_HELPER_MIN_BYTES = 16 * 1024 * 1024
"""... and from this size on when it can be forked (a few milliseconds)."""
HELPER_TIMEOUT_SECS = 600.0
_HELPER_MAIN = """
import importlib, operator, pickle, sys
module, name, fd, size, path = sys.argv[1:]
func = operator.attrgetter(name)(importlib.import_module(module))
sys.stdout.buffer.write(pickle.dumps(func(int(fd), int(size), path), pickle.HIGHEST_PROTOCOL))
"""
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _busy() -> bool:
    """No core to spare: one, or all of them already loaded (the helper would only compete)."""
    cpus = cores()
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return cpus < 2 or load >= cpus


def single_threaded() -> bool:
    """True when forking is safe: one thread, Python's or native, so no lock can be held by a
    thread the child would not have (the dashboard's workers, watchfiles). No /proc: unsafe."""
    if threading.active_count() != 1 or not hasattr(os, "fork"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@dataclass(slots=True)
class Child:
    """Another process writing to a pipe this one reads (`fd`): forked or spawned."""

    fd: int
    pid: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def fork(cls, work: Callable[[int], None]) -> Child | None:
        """`work(pipe)` in a forked child; only when single_threaded(). The child leaves by
        os._exit (no atexit handler, no flush of buffers it shares): status 0 when work returned.

        Until it is stopped, the objects this process had are kept out of its collector's
        sight (gc.freeze), and the child runs without one: a collection touches every object
        it scans, and each page touched is copied (copy-on-write) on either side.
        """
        read, write = os.pipe()
        gc.freeze()
        try:
            pid = os.fork()
        except OSError:
            gc.unfreeze()
            os.close(read)
            os.close(write)
            return None
        if pid == 0:
            code = 1
            try:
                gc.disable()
                os.close(read)
                work(write)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        return cls(read, pid=pid)

    @classmethod
    def spawn(
        cls, code: str, args: list[str], stdin: Any = None, pass_fds: tuple[int, ...] = ()
    ) -> Child | None:
        """`python -c code *args` from this package's root (whatever the caller's directory
        holds), writing to its stdout; safe in a threaded process, ~0.3 s to start."""
        import subprocess

        if not sys.executable:
            return None
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", code, *args],
                stdin=subprocess.DEVNULL if stdin is None else stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=pass_fds,
                cwd=_ROOT,
                env=env,
            )
        except (OSError, ValueError):
            return None
        assert proc.stdout is not None
        return cls(proc.stdout.fileno(), proc=proc)

    def output(self, timeout: float) -> bytes | None:
        """Everything it writes, once it exited with status 0; None when it failed, or took
        longer than `timeout` (then it is killed)."""
        import select

        deadline = time.monotonic() + timeout
        parts: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                self.stop()
                return None
            part = os.read(self.fd, 1 << 20)
            if not part:
                break
            parts.append(part)
        return b"".join(parts) if self.stop(kill=False) == 0 else None

    def stop(self, kill: bool = True) -> int:
        """Killed (unless not `kill`), reaped and its pipe closed: its exit status, or -1."""
        if self.fd < 0:
            return -1
        code = -1
        if self.proc is not None:
            if kill:
                self.proc.kill()
            code = self.proc.wait()
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        else:
            os.close(self.fd)
            gc.unfreeze()
            try:
                if kill:
                    os.kill(self.pid, signal.SIGKILL)
                code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
            except (ProcessLookupError, ChildProcessError):
                pass
        self.fd = -1
        return code


class Aside(Generic[R]):
    """`func()` worked out in a forked child while this process goes on, for its picklable
    result; in this process, when asked, if it cannot fork (threads running, one core busy,
    not POSIX) or the child fails. The child sees this process's objects as they were at
    the fork (copy-on-write): nothing to send it."""

    def __init__(self, func: Callable[[], R], child: Child | None) -> None:
        self._func = func
        self._child = child

    @classmethod
    def start(cls, func: Callable[[], R]) -> Aside[R]:
        child = None
        if os.name == "posix" and single_threaded() and not _busy():

            def work(out: int) -> None:
                write_all(out, pickle.dumps(func(), pickle.HIGHEST_PROTOCOL))

            child = Child.fork(work)
        return cls(func, child)

    def result(self) -> R:
        child, self._child = self._child, None
        if child is not None:
            out = child.output(HELPER_TIMEOUT_SECS)
            if out is not None:
                try:
                    return cast(R, pickle.loads(out))
                except Exception:  # a truncated stream: work it out here
                    pass
        return self._func()

    def close(self) -> None:
        """Stop the child if its result was never asked for."""
        child, self._child = self._child, None
        if child is not None:
            child.stop()


class Helper:
    """`func(fd, size, path)` run in another process (on the other core) over the same open
    file, for its picklable result: forked when this process is single-threaded (no start-up
    cost), else a fresh interpreter.

    The callers use it for the summary state of a full parse, which depends on nothing the
    items need: both sides read the same `size` bytes of the same inode (the descriptor is
    inherited) and split them alike, and the caller checks the helper's Tally against its own.
    Anything amiss (no helper, a crash, a mismatch) and the caller does the pass itself.
    """

    def __init__(self, child: Child) -> None:
        self._child = child

    @classmethod
    def start(
        cls, func: Callable[[int, int, str], Any], fd: int, size: int, path: str
    ) -> Helper | None:
        fork = single_threaded()
        least = min(HELPER_MIN_BYTES, FORK_HELPER_MIN_BYTES) if fork else HELPER_MIN_BYTES
        if size < least or os.name != "posix" or _busy():
            return None
        if fork:

            def work(out: int) -> None:
                write_all(out, pickle.dumps(func(fd, size, path), pickle.HIGHEST_PROTOCOL))

            child = Child.fork(work)
        else:
            args = [func.__module__, func.__qualname__, str(fd), str(size), path]
            child = Child.spawn(_HELPER_MAIN, args, pass_fds=(fd,))
        return cls(child) if child is not None else None

    def result(self) -> Any:
        """The function's return value, or None when the helper failed."""
        out = self._child.output(HELPER_TIMEOUT_SECS)
        if out is None:
            return None
        try:
            return pickle.loads(out)
        except Exception:  # a truncated or foreign stream: do the pass here
            return None

    def close(self) -> None:
        self._child.stop()
