"""Opening a file we read but do not own (a transcript, a fork we may have made) so that the
open itself cannot block: a FIFO or device swapped in under the path (by rename, or as a
symlink's target) would hang a plain open() in the kernel until a writer came. O_NONBLOCK makes
that open return at once; the descriptor is then refused unless it is a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class NotRegular(OSError):
    """A path that should be a plain file is something else (a symlink, a FIFO, a device...)."""


def open_regular(path: str | Path, *, follow_symlinks: bool = False) -> int:
    """A read-only descriptor on a plain file; NotRegular otherwise. A transcript reached by a
    symlink the walk allowed is followed (`follow_symlinks`); files gobtui owns never are."""
    flags = os.O_RDONLY | _CLOEXEC | _NONBLOCK | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlinks:
            raise NotRegular(errno.ELOOP, "is a symlink", str(path)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, "is not a regular file", str(path))
    return fd


@contextmanager
def regular_file(path: str | Path) -> Iterator[BinaryIO]:
    """open(path, "rb") for a file we do not own (symlinks followed, as the walk allows them)."""
    with os.fdopen(open_regular(path, follow_symlinks=True), "rb") as handle:
        yield handle
