"""A hook's payload from its stdin, within a deadline and a byte bound.

A client writes the payload and closes the pipe; one that never closes it (or a stdin left
to a terminal) must not hold the hook, and so the agent, until it is killed. The descriptor
is made non-blocking for the read (and put back as it was: it may be shared) and waited on
with select() up to one overall deadline: no helper thread, no process.
"""

from __future__ import annotations

import os
import select
import time
from contextlib import suppress
from dataclasses import dataclass
from enum import StrEnum

READ_BYTES = 64 * 1024


class StdinEnd(StrEnum):
    CLOSED = "closed"
    """End of file: the payload is whole."""
    TOO_LARGE = "too_large"
    """More than the bound arrived (reading stopped there)."""
    DEADLINE = "deadline"
    """Still open when the deadline passed."""


@dataclass(frozen=True)
class Stdin:
    data: bytes
    end: StdinEnd


def read_bounded(fd: int, max_bytes: int, deadline_secs: float) -> Stdin:
    """What `fd` holds up to end of file, if that comes within `deadline_secs` and
    `max_bytes`. A descriptor that is not open reads as empty."""
    until = time.monotonic() + deadline_secs
    try:
        was_blocking = os.get_blocking(fd)
    except OSError:  # no stdin at all (closed by the caller)
        return Stdin(b"", StdinEnd.CLOSED)
    if was_blocking:
        os.set_blocking(fd, False)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return Stdin(b"".join(chunks), StdinEnd.DEADLINE)
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue  # (the deadline is looked at again above)
            try:
                chunk = os.read(fd, min(READ_BYTES, max_bytes + 1 - size))
            except BlockingIOError:  # woken for nothing (another reader took it)
                continue
            except OSError:  # unreadable from here (EIO...): what came is all there is
                return Stdin(b"".join(chunks), StdinEnd.CLOSED)
            if not chunk:
                return Stdin(b"".join(chunks), StdinEnd.CLOSED)
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                return Stdin(b"".join(chunks), StdinEnd.TOO_LARGE)
    finally:
        if was_blocking:
            with suppress(OSError):
                os.set_blocking(fd, True)
