"""No-clobber, durable file writes: what fork publication and receipts stand on.

A new file is written to a private temporary name in the target's directory, fsynced, then
hard-linked to its final name: link() fails if the name exists, so nothing is ever
overwritten, and readers see either no file or the whole file. The directory is fsynced after.
"""

from __future__ import annotations

import errno
import os
import secrets
from contextlib import suppress
from enum import StrEnum
from pathlib import Path


class WriteErrorCode(StrEnum):
    EXISTS = "exists"
    NO_SPACE = "no_space"
    READ_ONLY = "read_only"
    PERMISSION = "permission"
    IO = "io"


def write_error_code(error: OSError) -> WriteErrorCode:
    if error.errno == errno.EEXIST:
        return WriteErrorCode.EXISTS
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteErrorCode.NO_SPACE
    if error.errno == errno.EROFS:
        return WriteErrorCode.READ_ONLY
    if error.errno in (errno.EACCES, errno.EPERM):
        return WriteErrorCode.PERMISSION
    return WriteErrorCode.IO


def describe(error: OSError) -> str:
    """A one-line description of a failed write, naming the file."""
    reason = {
        WriteErrorCode.EXISTS: "already exists",
        WriteErrorCode.NO_SPACE: "no space left on the device",
        WriteErrorCode.READ_ONLY: "read-only file system",
        WriteErrorCode.PERMISSION: "permission denied",
        WriteErrorCode.IO: error.strerror or str(error),
    }[write_error_code(error)]
    where = f" ({error.filename})" if error.filename else ""
    return f"{reason}{where}"


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(directory: Path, data: bytes | bytearray, mode: int) -> Path:
    temp = directory / f".gobtui-{secrets.token_hex(8)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


def publish_new(target: Path, data: bytes | bytearray, mode: int = 0o600) -> None:
    """Create `target` with exactly `data`; FileExistsError if the name is taken."""
    directory = target.parent
    temp = _write_temp(directory, data, mode)
    try:
        try:
            os.link(temp, target)
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                raise
            # File systems without hard links: an exclusive create is still no-clobber.
            _exclusive_copy(temp, target, mode)
        if os.stat(target).st_size != len(data):
            raise OSError(errno.EIO, "published file has the wrong size", str(target))
    finally:
        temp.unlink(missing_ok=True)
    fsync_dir(directory)


def _exclusive_copy(source: Path, target: Path, mode: int) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with open(source, "rb") as handle:
            while chunk := handle.read(1 << 20):
                os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_private(target: Path, data: bytes) -> None:
    """Atomically replace (or create) a small private file such as a receipt."""
    temp = _write_temp(target.parent, data, 0o600)
    try:
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def private_dir(path: Path) -> Path:
    """Create `path` and the parents it lacks, each with mode 0700 (mkdir's `parents` would
    give them the default mode), and return it."""
    missing: list[Path] = []
    for directory in (path, *path.parents):
        if directory.exists():
            break
        missing.append(directory)
    for directory in reversed(missing):
        with suppress(FileExistsError):  # made meanwhile by another process
            directory.mkdir(mode=0o700)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)  # (exists by now: checks it is a dir)
    return path
