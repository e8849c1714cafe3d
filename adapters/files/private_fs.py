"""gobtui's own folders and files (data, cache, dashboard state): private, never reached
through a symlink, and refused when someone else could have put something in them.

A folder gobtui owns is walked one level at a time with O_NOFOLLOW from the deepest folder
that exists above it, so a symlink at any of gobtui's own levels is refused, never followed
(a chmod through one changes the target's mode; a write through one lands in the target).
The folders above (~/.local/share, $GOBTUI_DATA_DIR's parent) are the user's to arrange and
may be symlinks; those missing are created 0700, as the XDG base directory spec asks.

For a folder or file gobtui uses:
- a symlink, the wrong kind of file, or one owned by another user: refused;
- writable by group or others: refused (tightening it would bless whatever they put in it);
- readable by group or others: tightened to 0700 (0600 for a file), with a note saying so.

These checks leave a chain of folders that only this user (and root) can change, so the
paths handed on afterwards stay what was checked.
"""

from __future__ import annotations

import errno
import os
import stat
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

DIR_MODE = 0o700
FILE_MODE = 0o600

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_SEARCH = getattr(os, "O_PATH", os.O_RDONLY)
"""Enough to create and open names inside a folder of the user's (O_PATH needs no read
permission on it, only search)."""
_LINK_ERRNOS = {errno.ELOOP, errno.EMLINK}
"""What open(O_NOFOLLOW) says of a symlink (EMLINK on FreeBSD)."""
_SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH
_SHARED_ANY = 0o077


class PrivateErrorCode(StrEnum):
    SYMLINK = "symlink"
    NOT_DIRECTORY = "not_directory"
    NOT_REGULAR = "not_regular"
    FOREIGN_OWNER = "foreign_owner"
    WRITABLE_BY_OTHERS = "writable_by_others"
    OPEN_PARENT = "open_parent"
    IO = "io"


class PrivateError(Exception):
    """A folder or file of gobtui's own that it refuses to use. The message is one line."""

    def __init__(self, code: PrivateErrorCode, message: str, path: Path) -> None:
        super().__init__(message)
        self.code = code
        self.path = path


class PrivateFile(NamedTuple):
    fd: int
    notes: list[str]


def _above(where: Path, label: str, top: Path) -> str:
    return f"{where} (above the {label} {top})"


def _reason(error: OSError) -> str:
    return (error.strerror or str(error)).lower()


def _mode(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"


def _tightened(what: str, mode: int) -> str:
    return f"{what} was {mode:04o}; made it {mode & ~_SHARED_ANY:04o} (private to you)"


def _existing_base(top: Path, label: str) -> tuple[Path, list[str]]:
    """The deepest existing folder above `top`, and the names missing between it and `top`.
    Followed as a path: that part is the user's."""
    missing: list[str] = []
    base = top.parent
    while base != base.parent:
        try:
            os.stat(base)
            break
        except FileNotFoundError:  # (a dangling symlink too: refused once walked into)
            missing.append(base.name)
            base = base.parent
        except OSError as error:
            what = _above(base, label, top)
            raise PrivateError(
                PrivateErrorCode.IO, f"{what} cannot be reached: {_reason(error)}", base
            ) from None
    return base, missing[::-1]


def _open_failure(error: OSError, fd: int, name: str, what: str, where: Path) -> PrivateError:
    if error.errno in _LINK_ERRNOS or error.errno == errno.ENOTDIR:
        # Linux says ENOTDIR for a symlink opened O_DIRECTORY | O_NOFOLLOW: look again.
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            is_link = error.errno in _LINK_ERRNOS
        if is_link:
            return PrivateError(
                PrivateErrorCode.SYMLINK, f"{what} is a symlink; gobtui does not follow it", where
            )
        return PrivateError(PrivateErrorCode.NOT_DIRECTORY, f"{what} is not a directory", where)
    return PrivateError(PrivateErrorCode.IO, f"{what} cannot be opened: {_reason(error)}", where)


def _open_level(fd: int, name: str, what: str, where: Path) -> tuple[int, bool]:
    """`name` in the folder `fd`, opened without following a symlink, created 0700 if it is
    missing; and whether this call created it."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(name, flags, dir_fd=fd), False
    except FileNotFoundError:
        pass
    except OSError as error:
        raise _open_failure(error, fd, name, what, where) from None
    created = False
    try:
        os.mkdir(name, DIR_MODE, dir_fd=fd)
        created = True
    except FileExistsError:  # made meanwhile by another process: checked as found
        pass
    except OSError as error:
        raise PrivateError(
            PrivateErrorCode.IO, f"{what} cannot be created: {_reason(error)}", where
        ) from None
    try:
        return os.open(name, flags, dir_fd=fd), created
    except OSError as error:
        raise _open_failure(error, fd, name, what, where) from None


def _check_owner(st: os.stat_result, what: str, where: Path) -> None:
    if st.st_uid != os.geteuid():
        raise PrivateError(
            PrivateErrorCode.FOREIGN_OWNER,
            f"{what} is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})",
            where,
        )
    if st.st_mode & _SHARED_WRITE:
        raise PrivateError(
            PrivateErrorCode.WRITABLE_BY_OTHERS,
            f"{what} is writable by others (mode {_mode(st.st_mode)}): check what is in it, "
            "then chmod go-w it",
            where,
        )


def _check_parent(fd: int, where: Path, label: str, top: Path) -> None:
    """Whoever can write to the folder holding gobtui's top folder can swap that folder for
    another after these checks, unless the sticky bit (as on /tmp) stops them."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError as error:
        raise PrivateError(
            PrivateErrorCode.IO, f"{_above(where, label, top)}: {_reason(error)}", where
        ) from None
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        raise PrivateError(
            PrivateErrorCode.OPEN_PARENT,
            f"{label} {top} is in {where}, which anyone can write to (mode {_mode(mode)}, "
            "no sticky bit)",
            top,
        )


def _secure_level(fd: int, created: bool, what: str, where: Path) -> str | None:
    """Check the folder just opened; make it 0700. A note when an existing one was loosened."""
    try:
        st = os.fstat(fd)
        _check_owner(st, what, where)
        mode = stat.S_IMODE(st.st_mode)
        if created:
            if mode != DIR_MODE:  # mkdir's mode is cut by the umask
                os.fchmod(fd, DIR_MODE)
            return None
        if not mode & _SHARED_ANY:
            return None
        os.fchmod(fd, mode & ~_SHARED_ANY)
    except OSError as error:
        raise PrivateError(
            PrivateErrorCode.IO, f"{what} cannot be made private: {_reason(error)}", where
        ) from None
    return _tightened(what, mode)


def private_dir(path: Path, label: str, *, root: Path | None = None) -> list[str]:
    """Make `path` a private folder of gobtui's and return notes of what was tightened.

    `root` (`path` itself by default, or a folder above it) is the top of what gobtui owns:
    it and every level below it down to `path` are opened without following symlinks,
    created 0700 when missing, refused when unsafe (PrivateError) and tightened to 0700 when
    readable by others. Above `root`, existing folders are followed and missing ones created
    0700. Concurrent creation by another process is fine.
    """
    target = Path(os.path.abspath(path))
    top = target if root is None else Path(os.path.abspath(root))
    if top != target and top not in target.parents:
        raise ValueError(f"{top} is not {target} nor a folder above it")
    if top.parent == top:
        raise PrivateError(
            PrivateErrorCode.NOT_DIRECTORY,
            f"{label} {top} is the root of the file system, not a folder of gobtui's",
            top,
        )
    base, missing = _existing_base(top, label)
    try:
        fd = os.open(base, _SEARCH | _DIRECTORY | _CLOEXEC)
    except OSError as error:
        code = (
            PrivateErrorCode.NOT_DIRECTORY if error.errno == errno.ENOTDIR else PrivateErrorCode.IO
        )
        what = _above(base, label, top)
        raise PrivateError(code, f"{what} cannot be opened: {_reason(error)}", base) from None
    notes: list[str] = []
    where = base
    try:
        for name in missing:  # the user's levels, missing: made 0700 (XDG)
            where = where / name
            what = _above(where, label, top)
            child, created = _open_level(fd, name, what, where)
            os.close(fd)
            fd = child
            if created:
                _secure_level(fd, True, what, where)
            else:  # appeared meanwhile: someone else's, unless it passes gobtui's checks
                _check_owner(os.fstat(fd), what, where)
        _check_parent(fd, where, label, top)
        for name in (top.name, *target.relative_to(top).parts):
            where = where / name
            what = f"{label} {where}"
            child, created = _open_level(fd, name, what, where)
            os.close(fd)
            fd = child
            note = _secure_level(fd, created, what, where)
            if note is not None:
                notes.append(note)
    finally:
        os.close(fd)
    return notes


def open_private(path: Path, flags: int, label: str) -> PrivateFile:
    """A descriptor on the regular file `path` of gobtui's, never through a symlink; created
    0600 when `flags` has O_CREAT. Refused (PrivateError) when it is a symlink, not a regular
    file, someone else's or writable by others; tightened to 0600 (and a note) when readable
    by others. Other failures (FileNotFoundError, a full disk...) are raised as OSError."""
    what = f"{label} {path}"
    try:
        # O_NONBLOCK: a FIFO planted here must not hang the open (it is refused below).
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK, FILE_MODE)
    except OSError as error:
        if error.errno in _LINK_ERRNOS:
            raise PrivateError(
                PrivateErrorCode.SYMLINK, f"{what} is a symlink; gobtui does not follow it", path
            ) from None
        if error.errno in (errno.EISDIR, errno.ENXIO):  # a folder; a FIFO nobody reads
            raise PrivateError(
                PrivateErrorCode.NOT_REGULAR, f"{what} is not a regular file", path
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PrivateError(PrivateErrorCode.NOT_REGULAR, f"{what} is not a regular file", path)
        _check_owner(st, what, path)
        mode = stat.S_IMODE(st.st_mode)
        notes: list[str] = []
        if mode & _SHARED_ANY:
            os.fchmod(fd, mode & ~_SHARED_ANY)
            notes.append(_tightened(what, mode))
    except BaseException:
        os.close(fd)
        raise
    return PrivateFile(fd, notes)


def check_private_file(path: Path, label: str) -> list[str]:
    """The same checks as open_private on a file that exists or not, without opening it
    (for files another library opens, such as SQLite's: closing any descriptor of a file
    drops the locks this process holds on it). Notes of what was tightened."""
    what = f"{label} {path}"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return []
    if stat.S_ISLNK(st.st_mode):
        raise PrivateError(
            PrivateErrorCode.SYMLINK, f"{what} is a symlink; gobtui does not follow it", path
        )
    if not stat.S_ISREG(st.st_mode):
        raise PrivateError(PrivateErrorCode.NOT_REGULAR, f"{what} is not a regular file", path)
    _check_owner(st, what, path)
    mode = stat.S_IMODE(st.st_mode)
    if not mode & _SHARED_ANY:
        return []
    # By path: it was a regular file a moment ago, in a folder only this user can change.
    os.chmod(path, mode & ~_SHARED_ANY)
    return [_tightened(what, mode)]


def create_private(path: Path) -> bool:
    """Create the empty file `path` (0600) if nothing is there; True when this call did.
    O_EXCL never follows a symlink, and opens no file another descriptor may lock."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE)
    except FileExistsError:
        return False
    os.close(fd)
    return True
