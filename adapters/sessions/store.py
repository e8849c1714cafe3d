"""The live set of sessions: discovered files, their cursors, their summaries.

A scan discovers the files and brings each cursor up to date: from memory, else from the disk
cache, else by a cold read. An unchanged file (same inode, size, mtime_ns) is not read at all;
an appended one costs the appended bytes. Only top-level sessions are returned: a subagent
file is attached to its parent's `subagents` (by path for Claude's layout, by
parent_session_id otherwise) and shown top-level only when its parent is not present.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ...core.model import Coverage, Provider, SessionSummary, SubagentRef
from ..config.paths import Homes
from ..providers.full_parse import gc_paused
from ..providers.interface import TailStateFactory
from ..providers.reader import (
    FileCursor,
    StateFor,
    advance,
    hint_cold_reads,
    open_cursor,
)
from ..providers.registry import state_class
from .cache import CachedCursor, SummaryCache
from .discovery import (
    DiscoveryReport,
    Found,
    KnownProvider,
    discover_path,
    scan_homes,
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Entry:
    found: Found
    cursor: FileCursor
    summary: SessionSummary
    """The file's own summary, without subagents."""


@dataclass(slots=True)
class StoreStats:
    """Cumulative counters: how much work the store did (benchmarks and tests read them)."""

    cold_reads: int = 0
    advanced: int = 0
    unchanged: int = 0
    from_cache: int = 0
    skipped: int = 0
    errors: int = 0
    """Files a reader failed on unexpectedly (logged with a traceback, then skipped)."""


@dataclass(slots=True)
class StoreChanges:
    changed: list[SessionSummary] = field(default_factory=list)
    """Top-level summaries that are new or differ, sorted by path."""
    removed: list[str] = field(default_factory=list)
    """Top-level paths no longer shown (deleted, or now nested under a parent)."""


def _summary(cached: CachedCursor | None, cursor: FileCursor) -> SessionSummary:
    """The cached summary when it came with this cursor, else one built from its state."""
    if cached is not None and cached.cursor is cursor and cached.summary is not None:
        return cached.summary
    return cursor.summary()


class SessionStore:
    def __init__(
        self,
        homes: Homes,
        cache: SummaryCache | None,
        *,
        max_age_secs: float | None,
        state_for: StateFor = state_class,
    ) -> None:
        self._homes = homes
        self._cache = cache
        self._max_age = max_age_secs
        self._state_for = state_for
        self._lock = threading.RLock()  # one writer at a time: the watcher thread or a scan
        self._entries: dict[str, _Entry] = {}
        self._top: dict[str, SessionSummary] = {}
        self._kids: dict[str, tuple[str, ...]] = {}
        self.stats = StoreStats()
        self.skipped = 0
        """Files and directories that could not be read in the last scan (plus updates since)."""
        self.last_report: DiscoveryReport | None = None

    # -- reading -------------------------------------------------------------------------

    def _known(
        self,
        preloaded: dict[str, CachedCursor],
        heads: Callable[[], dict[str, bytes] | None] = lambda: None,
    ) -> KnownProvider:
        """Provider of a file we already have a cursor for, so discovery need not sniff it.
        `heads`: the cache's head rows read at once, when there are (else a query a file)."""

        def known(path: str, inode: int) -> Provider | None:
            entry = self._entries.get(path)
            if entry is not None and entry.cursor.inode == inode:
                return entry.cursor.provider
            cache = self._cache
            cached = cache.get_entry(path, heads()) if cache is not None else None
            if cached is not None and cached.cursor.inode == inode:
                preloaded[path] = cached
                self.stats.from_cache += 1
                return cached.cursor.provider
            return None

        return known

    def _refresh(
        self, found: Found, cursor: FileCursor | None, *, walked: bool = False
    ) -> _Entry | None:
        """Bring one file up to date. None when unchanged. Raises OSError.

        `walked`: `found` comes from the walk that just ran, whose stat figures are as fresh
        as another stat would be (a warm start of 2,000 files then stats each once)."""
        if cursor is not None and cursor.provider is found.provider:
            if walked and (found.inode, found.size, found.mtime_ns) == (
                cursor.inode,
                cursor.size,
                cursor.mtime_ns,
            ):
                self.stats.unchanged += 1
                return None
            cursor, changed = advance(cursor)
            if not changed:
                self.stats.unchanged += 1
                return None
            self.stats.advanced += 1
        else:
            cursor = open_cursor(found.path, found.provider, self._factory(found.provider))
            self.stats.cold_reads += 1
        return _Entry(found, cursor, cursor.summary())

    def _factory(self, provider: Provider) -> TailStateFactory:
        # State classes are constructed from the path (TailState's protocol omits __init__).
        return self._state_for(provider)

    def _write_back(self, entries: list[_Entry]) -> None:
        if self._cache is not None and entries:
            self._cache.put_many((e.cursor, e.summary) for e in entries)

    def scan(self, now: float) -> list[SessionSummary]:
        """Discover everything under the homes and return the top-level sessions."""
        # The collector paused: a scan makes thousands of lasting objects, and each collection
        # it would set off scans every object the process holds (the dashboard's too).
        with self._lock, gc_paused():
            preloaded: dict[str, CachedCursor] = {}
            heads: dict[str, bytes] | None = None

            def prefetch(paths: list[str]) -> None:
                nonlocal heads
                if self._cache is not None:
                    new = [path for path in paths if path not in self._entries]
                    heads = self._cache.head_rows(new) if new else {}

            report = scan_homes(
                self._homes,
                now=now,
                max_age_secs=self._max_age,
                known=self._known(preloaded, lambda: heads),
                prefetch=prefetch,
            )
            self.last_report = report
            skipped = len(report.skipped)
            entries: dict[str, _Entry] = {}
            fresh: list[_Entry] = []
            cold: list[Found] = []
            for found in report.found:
                old = self._entries.get(found.path)
                cached = preloaded.get(found.path)
                cursor = old.cursor if old is not None else cached.cursor if cached else None
                if cursor is not None and cursor.inode != found.inode:
                    cursor = None  # replaced: judge it afresh (it was sniffed already)
                if cursor is None or cursor.provider is not found.provider:
                    cold.append(found)
                    continue
                entry, unread = self._refresh_or_skip(found, cursor, walked=True)
                if unread:
                    skipped += 1
                    continue
                if entry is not None:
                    fresh.append(entry)
                else:
                    entry = (
                        old if old is not None else _Entry(found, cursor, _summary(cached, cursor))
                    )
                entries[found.path] = entry
            read, unread_cold = self._read_cold(cold)
            fresh += read
            entries.update((entry.found.path, entry) for entry in read)
            self._write_back(fresh)
            self.skipped = skipped + unread_cold
            self.stats.skipped += self.skipped
            self._entries = entries
            self._rebuild(None)
            return self.all()

    def _read_cold(self, cold: list[Found]) -> tuple[list[_Entry], int]:
        """Cold reads (announced to the kernel first): the entries, and how many files could
        not be read."""
        hint_cold_reads(found.path for found in cold)
        done: list[_Entry] = []
        failed = 0
        for found in cold:
            entry, unread = self._refresh_or_skip(found, None)
            failed += unread
            if entry is not None:
                done.append(entry)
        return done, failed

    def _refresh_or_skip(
        self, found: Found, cursor: FileCursor | None, *, walked: bool = False
    ) -> tuple[_Entry | None, bool]:
        """_refresh(), and whether the file could not be read (then skipped: one bad file must
        not blank the whole board; a reader bug is logged)."""
        try:
            return self._refresh(found, cursor, walked=walked), False
        except OSError:
            return None, True
        except Exception:
            self._reader_failed(found.path)
            return None, True

    def update(self, paths: Iterable[str], now: float) -> list[SessionSummary]:
        """Re-read only `paths`; the top-level summaries that changed."""
        return self.update_changes(paths, now).changed

    def update_changes(self, paths: Iterable[str], now: float) -> StoreChanges:
        """Like update, and also which top-level paths disappeared."""
        with self._lock:
            touched: set[str] = set()
            for path in sorted(set(paths)):
                done = self._update_one(os.path.abspath(path), now)
                if done is not None:
                    touched.add(done)
            self._write_back([self._entries[p] for p in sorted(touched) if p in self._entries])
            if not touched:
                return StoreChanges()
            return self._rebuild(touched)

    def _update_one(self, path: str, now: float) -> str | None:
        """The store path touched (changed, added or removed), else None."""
        entry = self._entries.get(path)
        cursor: FileCursor | None = entry.cursor if entry is not None else None
        found = entry.found if entry is not None else None
        cached: CachedCursor | None = None
        if entry is None:
            preloaded: dict[str, CachedCursor] = {}
            try:
                found = discover_path(
                    self._homes,
                    path,
                    now=now,
                    max_age_secs=self._max_age,
                    known=self._known(preloaded),
                )
            except FileNotFoundError:
                return None
            except OSError:
                self._skip()
                return None
            if found is None:
                return None
            path = found.path  # a watcher may spell it through a resolved root
            entry = self._entries.get(path)
            cached = preloaded.get(path)
            cursor = entry.cursor if entry is not None else cached.cursor if cached else None
            if cursor is not None and cursor.inode != found.inode:
                cursor = None
        assert found is not None
        try:
            fresh = self._refresh(found, cursor)
        except FileNotFoundError:
            if self._entries.pop(path, None) is None:
                return None
            if self._cache is not None:
                self._cache.delete(path)
            return path
        except OSError:
            self._skip()
            return None
        except Exception:
            self._reader_failed(path)
            self._skip()
            return None
        if fresh is None:
            if entry is None and cursor is not None:  # back from the cache, e.g. aged in again
                self._entries[path] = _Entry(found, cursor, _summary(cached, cursor))
                return path
            return None
        self._entries[path] = fresh
        return path

    def _reader_failed(self, path: str) -> None:
        log.exception("reading %s failed; skipping it", path)
        self.stats.errors += 1
        if self._cache is not None:
            self._cache.delete(path)  # a cursor that breaks the reader must not come back

    def _skip(self) -> None:
        self.skipped += 1
        self.stats.skipped += 1

    # -- nesting -------------------------------------------------------------------------

    def _roots(self) -> dict[str, str]:
        """path -> the top-level path it is shown under (itself when top-level)."""
        entries = self._entries
        by_session: dict[tuple[Provider, str], str] = {}
        for path in sorted(entries):
            entry = entries[path]
            if not entry.found.is_subagent and entry.summary.agent_id is None:
                by_session.setdefault((entry.cursor.provider, entry.summary.session_id), path)
        parent_of: dict[str, str] = {}
        for path, entry in entries.items():
            parent = entry.found.parent_path
            if parent not in entries and entry.summary.parent_session_id:
                key = (entry.cursor.provider, entry.summary.parent_session_id)
                parent = by_session.get(key)
            if parent is not None and parent != path and parent in entries:
                parent_of[path] = parent
        root_of: dict[str, str] = {}
        for path in entries:
            current, seen = path, {path}
            while current in parent_of:
                current = parent_of[current]
                if current in seen:  # a parent cycle (damaged ids): show it top-level
                    current = path
                    break
                seen.add(current)
            root_of[path] = current
        return root_of

    def _rebuild(self, touched: set[str] | None) -> StoreChanges:
        """Recompute the top-level view; rebuild only summaries that touched paths affect."""
        root_of = self._roots()
        kids: dict[str, list[str]] = defaultdict(list)
        for path, root in root_of.items():
            if root != path:
                kids[root].append(path)
        changes = StoreChanges()
        top: dict[str, SessionSummary] = {}
        new_kids: dict[str, tuple[str, ...]] = {}
        for path in sorted(self._entries):
            if root_of[path] != path:
                continue
            children = tuple(sorted(kids.get(path, ())))
            new_kids[path] = children
            old = self._top.get(path)
            if (
                touched is not None
                and old is not None
                and path not in touched
                and children == self._kids.get(path)
                and not touched.intersection(children)
            ):
                top[path] = old
                continue
            summary = self._entries[path].summary
            if children:
                refs = [self._ref(self._entries[child]) for child in children]
                summary = replace(summary, subagents=refs)
            top[path] = summary
            changes.changed.append(summary)
        changes.removed = [path for path in self._top if path not in top]
        self._top, self._kids = top, new_kids
        return changes

    @staticmethod
    def _ref(entry: _Entry) -> SubagentRef:
        summary = entry.summary
        agent_id = summary.agent_id
        if agent_id is None:
            stem = os.path.basename(entry.found.path).removesuffix(".jsonl")
            agent_id = (
                stem.removeprefix("agent-") if entry.found.is_subagent else summary.session_id
            )
        return SubagentRef(
            agent_id=agent_id,
            path=summary.path,
            context_tokens=summary.context_tokens,
            records=summary.records,
            bytes=summary.bytes,
            mtime=summary.mtime,
        )

    # -- queries -------------------------------------------------------------------------

    # -- completing head+tail summaries ----------------------------------------------------

    def partial_paths(self) -> list[str]:
        """Files summarised from their head and tail only, smallest first."""
        with self._lock:
            partial = [
                e for e in self._entries.values() if e.summary.coverage is Coverage.HEAD_TAIL
            ]
            return [
                e.found.path for e in sorted(partial, key=lambda e: (e.summary.bytes, e.found.path))
            ]

    def complete(self, paths: Iterable[str]) -> StoreChanges:
        """Read these files whole, so history, compactions and counts cover every record.

        The reading happens outside the lock (a big file takes a while and the watcher must
        not wait); the result is brought up to date and swapped in under it.
        """
        done: list[tuple[str, FileCursor]] = []
        for path in paths:
            entry = self._entries.get(path)
            if entry is None or entry.summary.coverage is not Coverage.HEAD_TAIL:
                continue
            factory = self._factory(entry.found.provider)
            try:
                done.append((path, open_cursor(path, entry.found.provider, factory, full=True)))
            except OSError:
                continue
        with self._lock:
            touched: set[str] = set()
            for path, cursor in done:
                entry = self._entries.get(path)
                if entry is None:
                    continue
                try:
                    cursor, _changed = advance(cursor)
                except OSError:
                    continue
                self._entries[path] = _Entry(entry.found, cursor, cursor.summary())
                touched.add(path)
            self._write_back([self._entries[p] for p in sorted(touched)])
            self._keep_heads(sorted(touched))
            return self._rebuild(touched) if touched else StoreChanges()

    def _keep_heads(self, paths: list[str]) -> None:
        """A whole read's state (a long session's parent links, ...) is in the cache now:
        memory keeps the cursor's head, and the body comes back from the cache when the file
        changes. (Kept whole for 2,000 sessions, the bodies held more than the board.)"""
        if self._cache is None or not paths:
            return
        heads = self._cache.head_rows(paths)
        for path in paths:
            entry = self._entries[path]
            cached = self._cache.get_entry(path, heads)
            if cached is None:
                continue
            head, cursor = cached.cursor, entry.cursor
            if (head.inode, head.size, head.mtime_ns) == (
                cursor.inode,
                cursor.size,
                cursor.mtime_ns,
            ):
                self._entries[path] = _Entry(entry.found, head, entry.summary)

    def all(self) -> list[SessionSummary]:
        """Top-level sessions, sorted by path."""
        with self._lock:
            return [self._top[path] for path in sorted(self._top)]

    def get(self, path: str) -> SessionSummary | None:
        """A top-level session (with its subagents), or any file's own summary."""
        with self._lock:
            if path in self._top:
                return self._top[path]
            entry = self._entries.get(path)
            return entry.summary if entry is not None else None

    def cursor(self, path: str) -> FileCursor | None:
        with self._lock:
            entry = self._entries.get(path)
            return entry.cursor if entry is not None else None

    def paths(self) -> list[str]:
        """Every file held, subagents included, sorted."""
        with self._lock:
            return sorted(self._entries)
