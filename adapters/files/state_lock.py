"""A lock for one of gobtui's small state files (cursors.json, card-index.jsonl), which are
read, changed and written back whole: two writers at once would each keep only their own
change. The lock is a sidecar `<name>.lock` (the state file itself is replaced by rename, so
a lock on it would be a lock on a file nobody opens next), opened private like the file."""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...core.limits import LOCK_POLL_SECS, STATE_LOCK_WAIT_SECS
from .private_fs import PrivateError, PrivateErrorCode, open_private

log = logging.getLogger(__name__)


@contextmanager
def state_locked(path: Path, label: str) -> Iterator[None]:
    """Hold the exclusive lock of the state file `path` (its sidecar is made if missing).

    Holders only read and write a small file, so waiting is short; past
    STATE_LOCK_WAIT_SECS a PrivateError says who to suspect rather than waiting forever.
    """
    lock = path.with_name(path.name + ".lock")
    fd, notes = open_private(lock, os.O_RDWR | os.O_CREAT, f"{label} lock")
    for note in notes:  # (a mode tightened: said, as every private open says it)
        log.warning("%s", note)
    try:
        deadline = time.monotonic() + STATE_LOCK_WAIT_SECS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise PrivateError(
                        PrivateErrorCode.IO,
                        f"the {label} is locked by another gobtui ({lock}); try again",
                        lock,
                    ) from None
                time.sleep(LOCK_POLL_SECS)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
