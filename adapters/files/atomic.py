"""No-clobber, durable file writes: what fork publication and receipts stand on.

A new file is written to a private temporary name in the target's directory, fsynced, then
hard-linked to its final name: link() fails if the name exists, so nothing is ever
overwritten, and readers see either no file or the whole file. The directory is fsynced after.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from contextlib import suppress
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ...core.limits import STALE_TEMP_SECS
from .regular import regular_file


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
    """Make the names just linked or removed in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


TEMP_PREFIX = ".gobtui-"
TEMP_SUFFIX = ".tmp"


def clear_leftovers(directory: Path, tag: str, now: float) -> int:
    """Remove the temporary files an interrupted publication (kill -9) left in `directory`:
    those of this very target (`tag`: the caller holds its operation's lock, so none is in
    use), and any of gobtui's older than STALE_TEMP_SECS. How many went."""
    removed = 0
    with suppress(OSError):
        for entry in os.scandir(directory):
            name = entry.name
            if not (name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)):
                continue
            with suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                mine = name.startswith(f"{TEMP_PREFIX}{tag}-")
                if entry.is_file(follow_symlinks=False) and (
                    mine or now - st.st_mtime > STALE_TEMP_SECS
                ):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Every byte of `data` to `fd` (os.write may write fewer)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_temp(directory: Path, data: bytes | bytearray, mode: int, tag: str = "") -> Path:
    temp = directory / f"{TEMP_PREFIX}{tag}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


def publish_new(target: Path, data: bytes | bytearray, mode: int = 0o600) -> None:
    """Create `target` with exactly `data`; FileExistsError if the name is taken. What an
    interrupted earlier try left behind goes first (clear_leftovers)."""
    directory = target.parent
    clear_leftovers(directory, target.stem, time.time())
    temp = _write_temp(directory, data, mode, target.stem)
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
        with regular_file(source) as handle:
            while chunk := handle.read(1 << 20):
                os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_private(target: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically replace (or create) a small file such as a receipt (private by default)."""
    temp = _write_temp(target.parent, data, mode)
    os.chmod(temp, mode)  # the umask does not narrow what the file had before
    try:
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


@dataclass(frozen=True)
class FileState:
    """A file as it was read: its bytes and its stat identity (None: there was no file)."""

    data: bytes
    identity: tuple[int, ...] | None


class FileChangedError(Exception):
    """The file is no longer as it was read: someone else wrote it meanwhile."""


def read_state(path: Path, max_bytes: int) -> FileState:
    """`path`'s bytes and identity, read through one descriptor (so they describe the same
    file). Never follows a symlink nor waits on a FIFO: ValueError for anything but a regular
    file of at most `max_bytes`."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return FileState(b"", None)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ValueError("is a symlink") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is not a regular file")
        if st.st_size > max_bytes:
            raise ValueError(f"is over {max_bytes:,} bytes")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return FileState(b"".join(chunks), _identity(os.fstat(fd)))
    finally:
        os.close(fd)


def _identity(st: os.stat_result) -> tuple[int, ...]:
    # A rewrite in place moves size, mtime or ctime; a rename over it changes the inode.
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def replace_if_unchanged(target: Path, data: bytes, mode: int, expected: FileState) -> None:
    """Compare-and-swap for a file someone else also writes (a client's settings): `target`
    becomes `data` only if it is still what `expected` read, compared (bytes and identity)
    right before the rename, after everything slow is done; FileChangedError otherwise, and
    the file is left as it is. A file that did not exist is created without clobbering one
    made meanwhile."""
    temp = _write_temp(target.parent, data, mode)
    os.chmod(temp, mode)  # the umask does not narrow what the file had before
    try:
        if expected.identity is None:
            try:
                os.link(temp, target)
            except FileExistsError:
                raise FileChangedError(str(target)) from None
        else:
            try:
                now = read_state(target, len(expected.data))
            except (OSError, ValueError):
                raise FileChangedError(str(target)) from None
            if now != expected:
                raise FileChangedError(str(target))
            os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    fsync_dir(target.parent)
