"""File primitives of the vault: private directories, no-clobber publication, bounded reads,
and the directory lock.

Publication writes a private temporary file, fsyncs it and hard-links it into place: a link
never replaces an existing name, so a half-written file is never visible under a final name
and nothing is overwritten. Unix only; elsewhere the lock fails closed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ...core.limits import LOCK_POLL_SECS
from ...core.vault.errors import VaultError, VaultErrorCode
from ..files.atomic import write_all
from ..files.regular import NotRegular as NotRegular
from ..files.regular import open_regular as open_regular

try:
    import fcntl
except ImportError:  # pragma: no cover - not a Unix
    fcntl = None  # type: ignore[assignment]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
"""How often a waiting command retries the lock."""


def is_real_dir(path: Path) -> bool:
    """True for a directory, False when nothing is there; a symlink or file is damage."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise VaultError(VaultErrorCode.DAMAGED_LAYOUT, f"{path} is not a directory")
    return True


def read_small(path: Path, limit: int) -> bytes:
    """A whole plain file of at most `limit` bytes (one byte more is read to notice a longer
    one). FileNotFoundError and NotRegular pass through."""
    fd = open_regular(path)
    try:
        return read_fd(fd, limit + 1)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int, offset: int = 0) -> bytes:
    """Up to `limit` bytes from `offset` (pread until EOF or the limit)."""
    parts = []
    got = 0
    while got < limit:
        data = os.pread(fd, limit - got, offset + got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def create_temp(directory: Path, hint: str) -> tuple[int, Path]:
    """A new private (0600) file in `directory`, opened for writing; the caller removes it."""
    for _ in range(8):
        path = directory / f".{hint[:16]}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise VaultError(VaultErrorCode.IO, f"could not create a temporary file in {directory}")


def touch_private(path: Path) -> None:
    """Create an empty private (0600) file at `path`, or leave the one there (not a link)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600))


def link_new(temp: Path, final: Path) -> bool:
    """Give `temp` the name `final` unless that name exists. False when it does."""
    try:
        os.link(temp, final, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        # No hard links here: a checked rename, racy only against another writer.
        if os.path.lexists(final):
            return False
        os.rename(temp, final)
    return True


def store_new(final: Path, parts: Iterable[bytes], temp_dir: Path) -> bool:
    """Write `parts` to a new file named `final`, durably; False (nothing written) if the name
    is already taken, which in a content-addressed store means it is stored already (unlike
    adapters.files.atomic.publish_new, whose taken name is an error). The directory of `final` is
    not fsynced: callers batch that (atomic.fsync_dir)."""
    fd, temp = create_temp(temp_dir, final.name)
    try:
        try:
            for part in parts:
                write_all(fd, part)
            os.fsync(fd)
        finally:
            os.close(fd)
        return link_new(temp, final)
    finally:
        unlink_quietly(temp)


def unlink_quietly(path: Path) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


@contextmanager
def locked(directory: Path, *, exclusive: bool, wait_secs: float) -> Iterator[None]:
    """flock on the directory itself: shared for readers and snapshots, exclusive for prune.

    The directory is never replaced, unlike the index, so every command agrees on what it
    locks. Waits up to `wait_secs`, then LOCKED.
    """
    if fcntl is None:  # pragma: no cover - not a Unix
        raise VaultError(VaultErrorCode.UNSUPPORTED, "the vault needs Unix file locks")
    try:
        fd = os.open(directory, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise VaultError(
                VaultErrorCode.DAMAGED_LAYOUT, f"{directory} is not a real directory"
            ) from None
        raise
    try:
        operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        deadline = time.monotonic() + wait_secs
        while True:
            try:
                fcntl.flock(fd, operation)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    what = "a snapshot or reader" if exclusive else "a prune"
                    raise VaultError(
                        VaultErrorCode.LOCKED, f"the vault is busy ({what} is running); try again"
                    ) from None
                time.sleep(LOCK_POLL_SECS)
        yield
    finally:
        os.close(fd)


def lock_file(fd: int, *, exclusive: bool) -> None:
    """A blocking flock on an open file (the index: appends are short)."""
    if fcntl is None:  # pragma: no cover - not a Unix
        raise VaultError(VaultErrorCode.UNSUPPORTED, "the vault needs Unix file locks")
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def hex_names(directory: Path) -> dict[str, int]:
    """{name: size} of the objects in a chunks/ or manifests/ directory. Anything else there
    (a stray file, a link, a directory) is damage: the vault did not put it there."""
    names: dict[str, int] = {}
    if not is_real_dir(directory):
        return names
    with os.scandir(directory) as listing:
        for entry in listing:
            name = entry.name
            if not entry.is_file(follow_symlinks=False) or len(name) != 64 or not _hex(name):
                raise VaultError(
                    VaultErrorCode.DAMAGED_LAYOUT, f"unexpected {entry.path} in the vault"
                )
            names[name] = entry.stat(follow_symlinks=False).st_size
    return names


def _hex(name: str) -> bool:
    return all(ch in "0123456789abcdef" for ch in name)
