"""Cursors (and their summaries) on disk, so a warm start reads only what changed.

diskcache pickles by default, and unpickling what anyone with write access to the cache
directory planted runs their code (CVE-2025-69872). So keys are str, values are orjson bytes
stored inline in SQLite, and `JsonOnlyDisk` refuses every other mode on the way in and out.
The directory (and $GOBTUI_CACHE_DIR above it) is 0700 and cache.db 0600; a cache folder or
file that is a symlink, someone else's or writable by others is not used: the cache is
switched off with a warning (it only saves time), never followed. A cache that cannot be
opened is moved aside and started afresh; an entry that cannot be decoded, or was written by
another parser version, is dropped. A cursor carries the fingerprint of the bytes it read, so a
file rewritten in place since is read again, not tailed (adapters.providers.reader.advance).
Nothing here raises to the caller: a cache miss only costs a read.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from types import TracebackType
from typing import Any

import diskcache
import orjson

from ...core.model import Coverage, Provider, SessionSummary
from ...core.summary_json import summary_from_json, summary_to_json
from ..config.paths import cache_dir
from ..files.jsonl import LineCursor
from ..files.private_fs import (
    PrivateError,
    check_private_file,
    create_private,
    private_dir,
)
from ..providers.reader import PARSER_VERSION, FileCursor, Rows, StateFor, open_cursor
from ..providers.registry import state_class

log = logging.getLogger(__name__)

CACHE_SIZE_LIMIT = 256 * 1024 * 1024
CACHE_TIMEOUT_SECS = 2.0
"""SQLite busy timeout: another gobtui holding the lock costs a miss, not a hang."""
DB_NAME = "cache.db"
DB_FILES = (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm")
"""diskcache's SQLite file and the two SQLite keeps beside it (made with the main file's mode)."""


@dataclass(slots=True)
class CachedCursor:
    cursor: FileCursor
    summary: SessionSummary | None
    """The summary stored with the cursor (validating it is cheaper than rebuilding it)."""


_BODY_SUFFIX = "\x00body"
AS_READ = b"null"
"""The body row of a cursor kept as a cold read made it (FileCursor.as_read)."""


def _body_key(path: str) -> str:
    return path + _BODY_SUFFIX


class UnsafeCacheValue(Exception):
    """A cache row that is not a raw str key / inline bytes value (e.g. a pickle)."""


class JsonOnlyDisk(diskcache.Disk):  # type: ignore[misc]
    """A diskcache Disk that never pickles and never unpickles.

    Every value is stored inline in SQLite (no value files), so a planted row cannot point
    a read or a delete at a file elsewhere either.
    """

    def __init__(self, directory: str, min_file_size: int = 0, pickle_protocol: int = 0) -> None:
        super().__init__(directory, min_file_size=2**62, pickle_protocol=0)

    def put(self, key: Any) -> tuple[Any, bool]:
        if type(key) is not str:
            raise TypeError("cache keys are str only")
        return super().put(key)  # type: ignore[no-any-return]

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise UnsafeCacheValue("refusing a pickled cache key")
        return super().get(key, raw)

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
        if read or type(value) is not bytes:
            raise TypeError("cache values are bytes only")
        return super().store(value, False, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> bytes:
        if mode != diskcache.core.MODE_RAW or filename is not None or read:
            raise UnsafeCacheValue(f"refusing a cache value of mode {mode}")
        if isinstance(value, memoryview):
            value = bytes(value)
        if type(value) is not bytes:
            raise UnsafeCacheValue("refusing a non-bytes cache value")
        return value

    def remove(self, file_path: str) -> None:
        # We never write value files; a row naming one was planted: delete nothing.
        log.warning("cache row names a file %r; not removing it", file_path)


def _secure_dir(directory: Path) -> None:
    """Make the cache folder private and its files 0600 before SQLite opens them (it creates
    cache.db 0644, and follows a symlink); PrivateError when they cannot be trusted."""
    top = cache_dir()
    # Under $GOBTUI_CACHE_DIR every level is gobtui's; a folder elsewhere is from itself down.
    root = top if top in directory.parents else directory
    notes = private_dir(directory, "cache folder", root=root)
    create_private(directory / DB_NAME)
    for name in DB_FILES:  # by lstat: opening and closing one would drop SQLite's locks
        notes += check_private_file(directory / name, "cache file")
    for note in notes:
        log.warning("%s", note)


def _move_aside(directory: Path) -> None:
    """Keep one damaged copy for inspection (<name>.bad), replacing any older one."""
    bad = directory.with_name(directory.name + ".bad")
    try:
        if bad.is_dir() and not bad.is_symlink():
            shutil.rmtree(bad)
        elif bad.exists() or bad.is_symlink():
            bad.unlink()
        os.replace(directory, bad)
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)


def _summary_of(cursor: FileCursor, data: Any) -> SessionSummary | None:
    """The stored summary when it belongs to this very cursor; else None (rebuilt later)."""
    if data is None:
        return None
    try:
        summary = summary_from_json(data)
    except ValueError:
        return None
    same = (summary.path, summary.bytes, summary.records, summary.provider)
    if same != (cursor.path, cursor.size, cursor.records, cursor.provider):
        return None
    return summary


# -- the rows: a cursor's head (stat figures and summary) and its body, as JSON ---------------

_STAT_KEYS = ("path", "inode", "size", "mtime_ns", "records")
_HEAD_KEYS = ("parser_version", "provider", *_STAT_KEYS)


def encode_entry(cursor: FileCursor, summary: SessionSummary | None) -> Rows:
    """The head (stat figures, and the summary) and the body (everything) of a cursor; the
    body of one that is as a cold read made it is `null` (reading the file makes it again,
    and a first start writes 2,000 of them).

    Raises TypeError when the state holds something JSON cannot carry.
    """
    if cursor.as_read and cursor.body is None:
        body = AS_READ
        head = {key: getattr(cursor, key) for key in _STAT_KEYS}
        head |= {"parser_version": PARSER_VERSION, "provider": cursor.provider.value}
    else:
        data = cursor.to_json()
        body = orjson.dumps(data)
        head = {key: data[key] for key in _HEAD_KEYS}
    if summary is not None:
        head["summary"] = summary_to_json(summary)
    return orjson.dumps(head), body


def _checked(path: str, raw: bytes) -> dict[str, Any]:
    data = orjson.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    if data.get("parser_version") != PARSER_VERSION or data.get("path") != path:
        raise ValueError("stale entry")
    return data


def decode_head(
    path: str, raw: bytes, state_for: StateFor, load_body: Callable[[Provider], FileCursor]
) -> CachedCursor:
    """A cursor with its stat figures only (`load_body` brings the rest when needed), and its
    summary when the head holds this cursor's. Raises on anything malformed (untrusted bytes)."""
    data = _checked(path, raw)
    provider = Provider(data["provider"])
    cursor = FileCursor(
        provider=provider,
        path=path,
        inode=int(data["inode"]),
        size=int(data["size"]),
        mtime_ns=int(data["mtime_ns"]),
        lines=LineCursor(),
        state=state_for(provider)(path),
        records=int(data["records"]),
        body=lambda: load_body(provider),
    )
    return CachedCursor(cursor, _summary_of(cursor, data.get("summary")))


def decode_body(path: str, raw: bytes, state_for: StateFor) -> FileCursor:
    """The whole cursor. Raises on anything malformed or inconsistent (untrusted bytes)."""
    data = _checked(path, raw)
    provider = Provider(data["provider"])
    lines = LineCursor.from_json(data["lines"])
    size = int(data["size"])
    if min(lines.offset, lines.line_index, lines.skipping, size) < 0 or lines.read_pos > size:
        raise ValueError("inconsistent offsets")
    state = state_for(provider).from_json(path, data["state"])
    fingerprint = data["fingerprint"]
    if type(fingerprint) is not str:
        raise ValueError("not a fingerprint")
    cursor = FileCursor(
        provider=provider,
        path=path,
        inode=int(data["inode"]),
        size=size,
        mtime_ns=int(data["mtime_ns"]),
        lines=lines,
        state=state,
        records=int(data["records"]),
        bad_reasons=Counter({str(k): int(v) for k, v in data["bad_reasons"].items()}),
        coverage=Coverage(data["coverage"]),
        fingerprint=fingerprint,
    )
    # The state's fields are not checked one by one as they are restored: the summary they
    # make is (a damaged body fails here, not on the board).
    summary_from_json(orjson.loads(orjson.dumps(summary_to_json(cursor.summary()))))
    return cursor


_UPSERT = (
    "INSERT INTO Cache(key, raw, store_time, expire_time, access_time, access_count, tag,"
    " size, mode, filename, value) VALUES (?, 1, ?, NULL, ?, 0, NULL, 0, ?, NULL, ?)"
    " ON CONFLICT(key, raw) DO UPDATE SET store_time = excluded.store_time,"
    " expire_time = NULL, access_time = excluded.access_time, access_count = 0, tag = NULL,"
    " size = 0, mode = excluded.mode, filename = NULL, value = excluded.value"
)
"""diskcache's row for an inline raw value (what Cache.set writes through JsonOnlyDisk), for
many keys in one statement: Cache.set costs five statements a key. Its triggers keep the
count and size settings right. A planted row's value file is left alone, as remove() does."""
_HEADS = (
    "SELECT key, mode, filename, value FROM Cache"
    " WHERE (expire_time IS NULL OR expire_time > ?) AND raw = 1 AND key IN ({marks})"
)
"""The head rows of many paths (Cache.get's query, for many keys)."""
_HEADS_BATCH = 500
"""Paths a query (SQLite allows 999 parameters in older builds)."""


class SummaryCache:
    """path -> FileCursor, validated by parser version; see the module docstring."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        state_for: StateFor = state_class,
        size_limit: int = CACHE_SIZE_LIMIT,
    ) -> None:
        self.directory = directory if directory is not None else cache_dir() / "cursors"
        self._state_for: StateFor = cache(state_for)  # asked once a row: a lookup, not a call
        self._size_limit = size_limit
        self.recovered = False
        """True when a damaged cache was moved aside on open."""
        self._cache: diskcache.Cache | None = self._open()

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def _connect(self) -> diskcache.Cache:
        _secure_dir(self.directory)
        cache = diskcache.Cache(
            str(self.directory),
            timeout=CACHE_TIMEOUT_SECS,
            disk=JsonOnlyDisk,
            size_limit=self._size_limit,
            eviction_policy="least-recently-stored",
            statistics=0,
            # diskcache re-applies its stored disk_* settings on open, overriding the Disk's
            # own: without this, values over 32 KiB go to files, which JsonOnlyDisk refuses.
            disk_min_file_size=2**62,
        )
        cache.get("")  # touch the Cache table now, so damage shows here and not later
        return cache

    def _open(self) -> diskcache.Cache | None:
        # diskcache surfaces damage as many exception types (sqlite3, OSError, KeyError on
        # a bad settings row, TypeError on planted disk_* settings): any of them means
        # "start afresh". An untrusted folder is not damage: nothing there is moved or removed.
        try:
            return self._connect()
        except PrivateError as error:
            log.warning("cache disabled: %s", error)
            return None
        except Exception as error:
            log.warning("cache %s unusable (%s); starting a fresh one", self.directory, error)
        self.recovered = True
        _move_aside(self.directory)
        try:
            return self._connect()
        except PrivateError as error:
            log.warning("cache disabled: %s", error)
            return None
        except Exception as error:
            log.warning("cache %s disabled: %s", self.directory, error)
            return None

    def get(self, path: str) -> FileCursor | None:
        """The whole cursor (body decoded)."""
        entry = self.get_entry(path)
        return entry.cursor.loaded() if entry is not None else None

    def get_entry(self, path: str, heads: dict[str, bytes] | None = None) -> CachedCursor | None:
        """The cursor's head (stat figures and summary); its body is decoded only on use.

        `heads` (from head_rows) answers instead of a query per path: a path not in it is a miss.
        """
        raw = self._fetch(path) if heads is None else heads.get(path)
        if raw is None:
            return None
        try:
            return decode_head(path, raw, self._state_for, partial(self._load_body, path))
        except Exception as error:  # untrusted bytes: any failure is a miss
            log.debug("dropping cache entry for %s: %r", path, error)
            self.delete(path)
            return None

    def head_rows(self, paths: list[str]) -> dict[str, bytes]:
        """The stored heads of `paths` (those there are), in a few queries: a scan looks up
        every file it finds, and one query a file costs more than the decoding."""
        if self._cache is None:
            return {}
        heads: dict[str, bytes] = {}
        unsafe: list[str] = []
        try:
            con = self._cache._con  # diskcache reads one key a query; this is its own table
            for start in range(0, len(paths), _HEADS_BATCH):
                batch = paths[start : start + _HEADS_BATCH]
                query = _HEADS.format(marks=",".join("?" * len(batch)))
                for key, mode, filename, value in con.execute(query, (time.time(), *batch)):
                    # What JsonOnlyDisk.fetch checks: inline raw bytes, never a value file.
                    if (
                        mode == diskcache.core.MODE_RAW
                        and filename is None
                        and type(value) is bytes
                    ):
                        heads[key] = value
                    else:
                        unsafe.append(key)
        except (sqlite3.Error, OSError) as error:
            log.warning("cache %s unreadable: %s", self.directory, error)
            return {}
        for key in unsafe:
            log.warning("dropping cache entry for %s: not an inline JSON value", key)
            self.delete(key)
        return heads

    def _fetch(self, key: str) -> bytes | None:
        if self._cache is None:
            return None
        try:
            raw = self._cache.get(key)
        except (UnsafeCacheValue, sqlite3.Error, OSError, diskcache.Timeout) as error:
            log.warning("dropping cache entry for %s: %s", key, error)
            self.delete(key)
            return None
        return raw if isinstance(raw, bytes) else None

    def _load_body(self, path: str, provider: Provider) -> FileCursor:
        """The whole cursor; when its body is not kept (AS_READ), gone or damaged, a cold read
        of the file."""
        raw = self._fetch(_body_key(path))
        if raw is not None and raw != AS_READ:
            try:
                return decode_body(path, raw, self._state_for)
            except Exception as error:  # untrusted bytes: any failure is a miss
                log.debug("dropping cache body for %s: %r", path, error)
                self.delete(path)
        factory = self._state_for(provider)
        return open_cursor(path, provider, factory)

    def put(self, cursor: FileCursor, summary: SessionSummary | None = None) -> None:
        self.put_many([(cursor, summary)])

    def put_many(self, items: Iterable[tuple[FileCursor, SessionSummary | None]]) -> None:
        """Store cursors (head with the summary, and body) in one short transaction."""
        if self._cache is None:
            return
        values: list[tuple[str, bytes]] = []
        for cursor, summary in items:
            try:
                head, body = encode_entry(cursor, summary)
            except TypeError as error:
                log.warning("not caching %s: %s", cursor.path, error)
                continue
            values.append((cursor.path, head))
            values.append((_body_key(cursor.path), body))
        if not values:
            return
        now = time.time()
        rows = [(key, now, now, diskcache.core.MODE_RAW, value) for key, value in values]
        try:
            with self._cache.transact():
                self._cache._con.executemany(_UPSERT, rows)
            if self._cache.volume() > self._size_limit:
                self._cache.cull()
        except (sqlite3.Error, OSError, diskcache.Timeout) as error:
            log.warning("not caching %d cursors: %s", len(values) // 2, error)

    def delete(self, path: str) -> None:
        if self._cache is None:
            return
        try:
            self._cache.delete(path)
            self._cache.delete(_body_key(path))
        except (UnsafeCacheValue, sqlite3.Error, OSError, diskcache.Timeout) as error:
            log.warning("cache delete of %s failed: %s", path, error)

    def clear(self) -> None:
        if self._cache is not None:
            try:
                self._cache.clear()
            except (sqlite3.Error, OSError, diskcache.Timeout) as error:
                log.warning("cache clear failed: %s", error)

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> SummaryCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
