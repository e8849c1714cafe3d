"""Work stealing in a two-process full parse: a forked Helper that finishes its part first
hands it over at once and takes over part of what this process has left of its own.

The Helper, its part done, writes its answer (pickled) to a file in memory and asks (`ask`,
with how fast it read and how long the pickling took). This process answers between two
chunks of its own part (`end_at`, a full_parse.Bound): with enough left, the Helper gets
the end of it, from a line start, so that both finish together, counting that this process
first unpickles the Helper's answer (about half as long as the pickling took), which it
does right then. Once its part is read, this process answers "no" to a question still to come
(`close`), so the Helper never waits on a process that no longer reads, and takes the
answer from the file once the Helper is done (`answer`). Everything is made before the
fork: a spawned Helper does not steal.
"""

from __future__ import annotations

import os
import pickle
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from adapters.jsonl import line_start_after
from adapters.processes import Helper, write_all
from core.limits import STEAL_MIN_BYTES

_ASK = struct.Struct("<dd")  # the Helper's speed (bytes a second; 0: none, below 0: ours),
# and the unpickling's seconds
_ANSWER = struct.Struct("<q")  # where its extra part starts (it ends where ours did); 0: none
_NOT_READ = object()
UNPICKLE_PER_PICKLE = 0.5
"""Unpickling an answer takes about half as long as pickling it (row d's tail: 0.07 to 0.09 s
against 0.17 to 0.19 s)."""


def start_helper(
    func: Callable[[int, int, str, int], Any],
    fd: int,
    size: int,
    path: str,
    split: int,
    stealing: Callable[[Steal, int, int, str, int], Any],
) -> tuple[Helper | None, Steal | None]:
    """Helper.start(func, ...), and when it forks, `stealing(steal, ...)` run instead, with
    the Steal this process answers through (None: no helper forked, or nothing to steal
    with)."""
    steal = Steal.open(fd) if split < size else None
    forked = partial(stealing, steal) if steal is not None else None
    helper = Helper.start(func, fd, size, path, split, forked)
    if steal is not None and (helper is None or not helper.forked):
        steal.release()
        steal = None
    return helper, steal


@dataclass(slots=True)
class Steal:
    """The two pipes and the file in memory, and what this process knows of its progress."""

    fd: int
    """The file both read (for a line start)."""
    asks: tuple[int, int]
    answers: tuple[int, int]
    handed: int
    """A file in memory: the Helper's first answer, pickled."""
    started: float = field(default_factory=time.monotonic)
    given: int = 0
    """Where the Helper's extra part starts, once given."""
    first: Any = _NOT_READ

    @classmethod
    def open(cls, fd: int) -> Steal | None:
        """None where there are no files in memory (not Linux), or no descriptors left: the
        parse goes on without."""
        if not hasattr(os, "memfd_create"):
            return None
        made: list[int] = []
        try:
            made += os.pipe()
            made += os.pipe()
            made.append(os.memfd_create("gobtui-steal", os.MFD_CLOEXEC))
        except OSError:
            for end in made:
                os.close(end)
            return None
        os.set_blocking(made[0], False)  # polled between chunks
        return cls(fd, (made[0], made[1]), (made[2], made[3]), made[4])

    # -- this process ---------------------------------------------------------------------

    def end_at(self, pos: int, end: int) -> int:
        """full_parse.Bound: `end`, or where the Helper's extra part starts once it asked."""
        try:
            asked = os.read(self.asks[0], _ASK.size)
        except BlockingIOError:
            return end
        if len(asked) != _ASK.size:
            return end  # (the Helper is gone)
        their_speed, unpickling = _ASK.unpack(asked)
        give = 0
        left = end - pos
        if left >= STEAL_MIN_BYTES and their_speed != 0:
            our_speed = pos / max(time.monotonic() - self.started, 1e-6)
            if their_speed < 0:  # the same work as ours, and cores alike
                their_speed = our_speed
            # both done together: theirs / their_speed == unpickling + (left - theirs) / ours
            theirs = (left + unpickling * our_speed) * their_speed / (their_speed + our_speed)
            if theirs >= STEAL_MIN_BYTES / 2:
                at = line_start_after(self.fd, end - int(min(theirs, left)), end)
                give = at if at < end else 0
        os.write(self.answers[1], _ANSWER.pack(give))
        self.given = give
        self.answer()  # now, while the Helper reads on
        return give or end

    def close(self) -> None:
        """This process has read its part: a question still to come gets "no"."""
        os.write(self.answers[1], _ANSWER.pack(0))

    def answer(self) -> Any:
        """The Helper's first answer (None when damaged), once it is written: after it asked,
        or once it is done."""
        if self.first is _NOT_READ:
            data = os.pread(self.handed, os.fstat(self.handed).st_size, 0)
            try:
                self.first = pickle.loads(data)
            except Exception:  # cut short, or not written: this process reads on
                self.first = None
        return self.first

    def release(self) -> None:
        for end in (*self.asks, *self.answers, self.handed):
            os.close(end)

    # -- the Helper -----------------------------------------------------------------------

    def helper_side(self) -> None:
        """In the Helper, first: its ends only, so that it reads end-of-file, not forever, if
        the other process dies."""
        os.close(self.asks[0])
        os.close(self.answers[1])

    def ask(self, answer: Any, speed: float | None, willing: bool = True) -> int:
        """Hand `answer` over, then ask: where an extra part starts (up to where this
        process's part ended), or 0; given how fast the Helper would read (counting what it
        sends back; None: as fast as this process, for the same work), or that it takes
        nothing (not `willing`)."""
        speed = (-1.0 if speed is None else speed) if willing else 0.0
        started = time.monotonic()
        write_all(self.handed, pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
        unpickling = (time.monotonic() - started) * UNPICKLE_PER_PICKLE
        os.write(self.asks[1], _ASK.pack(speed, unpickling))
        reply = os.read(self.answers[0], _ANSWER.size)  # (blocking: the other end answers)
        return _ANSWER.unpack(reply)[0] if len(reply) == _ANSWER.size else 0
