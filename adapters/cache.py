"""Cursors (and their summaries) on disk, so a warm start reads only what changed.

diskcache pickles by default, and unpickling what anyone with write access to the cache
directory planted runs their code (CVE-2025-69872). So keys are str, values are orjson bytes
stored inline in SQLite, and `JsonOnlyDisk` refuses every other mode on the way in and out.
The directory is 0700. A cache that cannot be opened is moved aside and started afresh; an
entry that cannot be decoded, or was written by another parser version, is dropped. Nothing
here raises to the caller: a cache miss only costs a read.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import diskcache
import orjson

from adapters.jsonl import LineCursor
from adapters.paths import cache_dir
from adapters.providers import state_class
from adapters.reader import PARSER_VERSION, FileCursor, TailState, open_cursor
from core.model import Coverage, Provider, SessionSummary

log = logging.getLogger(__name__)

CACHE_SIZE_LIMIT = 256 * 1024 * 1024
CACHE_TIMEOUT_SECS = 2.0
"""SQLite busy timeout: another gobtui holding the lock costs a miss, not a hang."""
DIR_MODE = 0o700

StateFor = Callable[[Provider], type[TailState]]


@dataclass(slots=True)
class CachedCursor:
    cursor: FileCursor
    summary: SessionSummary | None
    """The summary stored with the cursor (validating it is cheaper than rebuilding it)."""


def _body_key(path: str) -> str:
    return path + "\x00body"


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
    directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    st = directory.stat()
    if st.st_mode & 0o077:
        os.chmod(directory, DIR_MODE)


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
    if not isinstance(data, str):
        return None
    try:
        summary = SessionSummary.model_validate_json(data)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None
    same = (summary.path, summary.bytes, summary.records, summary.provider)
    if same != (cursor.path, cursor.size, cursor.records, cursor.provider):
        return None
    return summary


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
        self._state_for = state_for
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
        # "start afresh".
        try:
            return self._connect()
        except Exception as error:
            log.warning("cache %s unusable (%s); starting a fresh one", self.directory, error)
        self.recovered = True
        _move_aside(self.directory)
        try:
            return self._connect()
        except Exception as error:
            log.warning("cache %s disabled: %s", self.directory, error)
            return None

    def get(self, path: str) -> FileCursor | None:
        """The whole cursor (body decoded)."""
        entry = self.get_entry(path)
        return entry.cursor.loaded() if entry is not None else None

    def get_entry(self, path: str) -> CachedCursor | None:
        """The cursor's head (stat figures and summary); its body is decoded only on use."""
        raw = self._fetch(path)
        if raw is None:
            return None
        try:
            return self._decode_head(path, raw)
        except Exception as error:  # untrusted bytes: any failure is a miss
            log.debug("dropping cache entry for %s: %r", path, error)
            self.delete(path)
            return None

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

    def _decode_head(self, path: str, raw: bytes) -> CachedCursor:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        if data.get("parser_version") != PARSER_VERSION or data.get("path") != path:
            raise ValueError("stale entry")
        provider = Provider(data["provider"])
        state_class_ = self._state_for(provider)
        cursor = FileCursor(
            provider=provider,
            path=path,
            inode=int(data["inode"]),
            size=int(data["size"]),
            mtime_ns=int(data["mtime_ns"]),
            lines=LineCursor(),
            state=state_class_(path),
            records=int(data["records"]),
            body=lambda: self._load_body(path, provider),
        )
        return CachedCursor(cursor, _summary_of(cursor, data.get("summary_json")))

    def _load_body(self, path: str, provider: Provider) -> FileCursor:
        """The whole cursor; when its body is gone or damaged, a cold read of the file."""
        raw = self._fetch(_body_key(path))
        if raw is not None:
            try:
                return self._decode_body(path, raw)
            except Exception as error:  # untrusted bytes: any failure is a miss
                log.debug("dropping cache body for %s: %r", path, error)
                self.delete(path)
        factory = self._state_for(provider)
        return open_cursor(path, provider, factory)  # type: ignore[arg-type]

    def _decode_body(self, path: str, raw: bytes) -> FileCursor:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        if data.get("parser_version") != PARSER_VERSION or data.get("path") != path:
            raise ValueError("stale entry")
        provider = Provider(data["provider"])
        lines = LineCursor.from_json(data["lines"])
        size = int(data["size"])
        if min(lines.offset, lines.line_index, lines.skipping, size) < 0 or lines.read_pos > size:
            raise ValueError("inconsistent offsets")
        state = self._state_for(provider).from_json(path, data["state"])
        return FileCursor(
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
        )

    def put(self, cursor: FileCursor, summary: SessionSummary | None = None) -> None:
        self.put_many([(cursor, summary)])

    def put_many(self, items: Iterable[tuple[FileCursor, SessionSummary | None]]) -> None:
        """Store cursors (head with the summary, and body) in one short transaction."""
        if self._cache is None:
            return
        values: list[tuple[str, bytes]] = []
        for cursor, summary in items:
            body = cursor.to_json()
            head = {
                key: body[key]
                for key in (
                    "parser_version",
                    "provider",
                    "path",
                    "inode",
                    "size",
                    "mtime_ns",
                    "records",
                )
            }
            if summary is not None:
                # Kept as a JSON string: pydantic validates JSON faster than parsed dicts.
                head["summary_json"] = summary.model_dump_json()
            try:
                values.append((cursor.path, orjson.dumps(head)))
                values.append((_body_key(cursor.path), orjson.dumps(body)))
            except TypeError as error:
                log.warning("not caching %s: %s", cursor.path, error)
        if not values:
            return
        try:
            with self._cache.transact():
                for key, value in values:
                    self._cache.set(key, value)
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
