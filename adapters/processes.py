"""Work in another process, on the other core: Helper (a full parse's other side: the summary
state, and for Codex the items of the file's tail), Aside (a result worked out meanwhile),
and the Child process under both.

A Child is forked when this process runs a single thread (the CLI; no start-up cost, nothing
to import), else started as a fresh interpreter (the dashboard's workers: a fork there could
copy a lock another thread holds).
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

if TYPE_CHECKING:
    import subprocess

R = TypeVar("R")


HELPER_MIN_BYTES = 96 * 1024 * 1024
"""Full parses of files this big (or bigger) feed their summary state in a Helper: below
about 80 MB a spawned one's start (a fresh interpreter, ~0.3 s) costs more than it saves."""
FORK_HELPER_MIN_BYTES = 16 * 1024 * 1024
"""... and from this size on when it can be forked (a few milliseconds)."""
HELPER_TIMEOUT_SECS = 600.0
_HELPER_MAIN = """
import importlib, operator, os, pickle, sys
module, name, fd, size, path, split = sys.argv[1:]
func = operator.attrgetter(name)(importlib.import_module(module))
answer = func(int(fd), int(size), path, int(split))
sys.stdout.buffer.write(pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
sys.stdout.buffer.flush()
os.close(1)  # the reader's end of file now, not once this process's memory is freed
os._exit(0)  # (nor after a finalisation that frees every object one by one)
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


_EXITING: list[Child] = []
"""Released children not reaped yet."""
_EXITING_LOCK = threading.Lock()  # (the dashboard's workers release and reap in threads)


def reap_exited(wait: bool = False) -> int:
    """Reap the released children that have exited (all of them, waiting, when `wait`): how
    many are left."""
    with _EXITING_LOCK:
        for child in list(_EXITING):
            try:
                if child.proc is not None:
                    done = (child.proc.wait() if wait else child.proc.poll()) is not None
                else:
                    done = os.waitpid(child.pid, 0 if wait else os.WNOHANG)[0] != 0
            except ChildProcessError:
                done = True
            if done:
                _EXITING.remove(child)
        return len(_EXITING)


def _reap_later(child: Child) -> None:
    with _EXITING_LOCK:
        _EXITING.append(child)


@dataclass(slots=True)
class Child:
    """Another process writing to a pipe this one reads (`fd`), forked or spawned; or, when
    spooled, to a file in memory (`spool`) while the pipe only tells when it is done."""

    fd: int
    pid: int = 0
    proc: subprocess.Popen[bytes] | None = None
    spool: int = -1

    @classmethod
    def fork(cls, work: Callable[[int], None], *, spool: bool = False) -> Child | None:
        """`work(out)` in a forked child; only when single_threaded(). The child leaves by
        os._exit (no atexit handler, no flush of buffers it shares): status 0 when work returned.

        `out` is the pipe; with `spool` (and memfd_create), a file in memory: an answer
        written before this process reads it does not wait on a pipe's few pages, nor stop
        the child from exiting.

        Until it is stopped, the objects this process had are kept out of its collector's
        sight (gc.freeze), and the child runs without one: a collection touches every object
        it scans, and each page touched is copied (copy-on-write) on either side.
        """
        reap_exited()
        sink = -1
        if spool and hasattr(os, "memfd_create"):
            with contextlib.suppress(OSError):  # (then the pipe)
                sink = os.memfd_create("gobtui-child", os.MFD_CLOEXEC)
        try:
            read, write = os.pipe()
        except OSError:  # no descriptors left: no child, the caller does the work
            if sink >= 0:
                os.close(sink)
            return None
        gc.freeze()
        try:
            pid = os.fork()
        except OSError:
            gc.unfreeze()
            for fd in (read, write, sink):
                if fd >= 0:
                    os.close(fd)
            return None
        if pid == 0:
            code = 1
            try:
                gc.disable()
                os.close(read)
                work(write if sink < 0 else sink)
                # The reader's end of file now: at exit it would come only once this
                # process's memory is freed (a tenth of a second for a full parse's).
                os.close(write)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        return cls(read, pid=pid, spool=sink)

    @classmethod
    def spawn(
        cls, code: str, args: list[str], stdin: Any = None, pass_fds: tuple[int, ...] = ()
    ) -> Child | None:
        """`python -c code *args` from this package's root (whatever the caller's directory
        holds), writing to its stdout; safe in a threaded process, ~0.3 s to start."""
        import subprocess

        if not sys.executable:
            return None
        reap_exited()
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

    def output(self, timeout: float, *, wait_exit: bool = True) -> bytes | None:
        """Everything it writes, once it exited with status 0; None when it failed, or took
        longer than `timeout` (then it is killed).

        Not `wait_exit`: everything it wrote once it closed its end, while it may still be
        exiting (reaped later: see release). The caller tells a whole answer from a cut one.
        """
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
        if self.spool >= 0:
            parts.append(os.pread(self.spool, os.fstat(self.spool).st_size, 0))
        if not wait_exit:
            self.release()
            return b"".join(parts)
        return b"".join(parts) if self.stop(kill=False) == 0 else None

    def _close_spool(self) -> None:
        if self.spool >= 0:
            os.close(self.spool)
            self.spool = -1

    def release(self) -> None:
        """Its pipe closed, and the child reaped when it has exited, else later (reap_exited):
        one that closed its pipe may still be freeing its memory."""
        if self.fd < 0:
            return
        self._close_spool()
        if self.proc is not None:
            assert self.proc.stdout is not None
            self.proc.stdout.close()
            if self.proc.poll() is None:
                _reap_later(self)
        else:
            os.close(self.fd)
            gc.unfreeze()
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                    _reap_later(self)
            except ChildProcessError:
                pass
        self.fd = -1

    def stop(self, kill: bool = True) -> int:
        """Killed (unless not `kill`), reaped and its pipe closed: its exit status, or -1."""
        if self.fd < 0:
            return -1
        self._close_spool()
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
    result; in this process, when asked, if it cannot fork (threads running, a single core or
    every core loaded, not POSIX) or the child fails. The child sees this process's objects as they were at
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

            child = Child.fork(work, spool=True)
        return cls(func, child)

    @property
    def forked(self) -> bool:
        """A child is working it out (result() is not yet asked for)."""
        return self._child is not None

    def result(self) -> R:
        child = self._child
        if child is not None:
            try:
                out = child.output(HELPER_TIMEOUT_SECS, wait_exit=False)
            finally:  # stopped whatever happens (an interrupt while waiting included)
                child.stop()
                self._child = None
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
    """`func(fd, size, path, split)` run in another process (on the other core) over the same
    open file, for its picklable result: forked when this process is single-threaded (no
    start-up cost), else a fresh interpreter.

    A full parse uses it for the summary state and the items past `split` (see
    adapters.full_parse): both sides read the same bytes of the same inode (the descriptor is
    inherited) and split them alike, and the caller checks the helper's tally of the lines
    before `split` against its own. Anything amiss (no helper, a crash, a mismatch) and the
    caller does the whole pass itself.
    """

    def __init__(self, child: Child) -> None:
        self._child = child

    @staticmethod
    def may_start(size: int) -> bool:
        """False when no Helper would start for a file of `size` bytes, forked or not."""
        return size >= min(HELPER_MIN_BYTES, FORK_HELPER_MIN_BYTES)

    @classmethod
    def start(
        cls,
        func: Callable[[int, int, str, int], Any],
        fd: int,
        size: int,
        path: str,
        split: int,
        forked: Callable[[int, int, str, int], Any] | None = None,
    ) -> Helper | None:
        """A helper running `func` (a module-level function: a spawned one imports it), or
        `forked` instead when it is forked (it may use what this process set up, pipes say);
        None when none would help (see may_start and _busy)."""
        fork = single_threaded()
        least = min(HELPER_MIN_BYTES, FORK_HELPER_MIN_BYTES) if fork else HELPER_MIN_BYTES
        if size < least or os.name != "posix" or _busy():
            return None
        if fork:
            run = forked or func

            def work(out: int) -> None:
                answer = run(fd, size, path, split)
                write_all(out, pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))

            child = Child.fork(work, spool=True)
        else:
            args = [func.__module__, func.__qualname__, str(fd), str(size), path, str(split)]
            child = Child.spawn(_HELPER_MAIN, args, pass_fds=(fd,))
        return cls(child) if child is not None else None

    @property
    def forked(self) -> bool:
        return self._child.proc is None

    def result(self) -> Any:
        """The function's return value, or None when the helper failed."""
        # Not waiting for its exit: only a whole pickle (its last write) unpickles.
        out = self._child.output(HELPER_TIMEOUT_SECS, wait_exit=False)
        if out is None:
            return None
        try:
            return pickle.loads(out)
        except Exception:  # a truncated or foreign stream: do the pass here
            return None

    def close(self) -> None:
        self._child.stop()
        reap_exited()  # a helper that answered is most likely gone by now
