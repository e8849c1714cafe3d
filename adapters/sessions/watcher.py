"""File changes under the provider roots, turned into summary updates.

An async generator over `watchfiles.awatch`: the dashboard runs it in one exclusive async
worker, the headless `gobtui watch` iterates it directly. Reading happens in a thread
(`asyncio.to_thread`) so the event loop never blocks on file I/O. Setting `stop_event` ends
the generator promptly (the Rust watcher checks it every `WATCH_STEP_MS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

from watchfiles import Change, awatch

from ...core.limits import WATCH_DEBOUNCE_MS, WATCH_STEP_MS
from ...core.model import SessionSummary
from ..config.paths import Homes
from .discovery import provider_roots
from .store import SessionStore, StoreChanges

log = logging.getLogger(__name__)


def watch_roots(homes: Homes) -> list[Path]:
    """Claude's projects dir, Codex's sessions and archived_sessions dirs (existing or not)."""
    return [Path(root.path) for root in provider_roots(homes)]


def _only_jsonl(_change: Change, path: str) -> bool:
    return path.endswith(".jsonl")


async def watch_changes(
    store: SessionStore,
    roots: list[Path],
    *,
    stop_event: asyncio.Event,
    now: Callable[[], float],
    debounce_ms: int = WATCH_DEBOUNCE_MS,
    force_polling: bool | None = None,
) -> AsyncGenerator[StoreChanges, None]:
    """Each batch of file changes as StoreChanges (changed summaries and removed paths)."""
    existing = [root.absolute() for root in roots if root.is_dir()]
    if not existing:
        # Nothing to watch (no home yet): stay quiet until asked to stop.
        await stop_event.wait()
        return
    batches = awatch(
        *existing,
        watch_filter=_only_jsonl,
        debounce=debounce_ms,
        step=WATCH_STEP_MS,
        stop_event=stop_event,
        force_polling=force_polling,
        ignore_permission_denied=True,
    )
    # aclosing: a consumer that breaks out still shuts the Rust watcher down.
    async with contextlib.aclosing(batches):
        try:
            async for batch in batches:
                paths = sorted({path for _change, path in batch})
                changes = await asyncio.to_thread(store.update_changes, paths, now())
                if stop_event.is_set():
                    return
                if changes.changed or changes.removed:
                    yield changes
        except FileNotFoundError as error:  # a root removed before the watch started
            log.warning("not watching: %s", error)
            await stop_event.wait()


async def watch_summaries(
    store: SessionStore,
    roots: list[Path],
    *,
    stop_event: asyncio.Event,
    now: Callable[[], float],
    debounce_ms: int = WATCH_DEBOUNCE_MS,
    force_polling: bool | None = None,
) -> AsyncGenerator[list[SessionSummary], None]:
    """The top-level summaries changed by each batch of file changes (never an empty list)."""
    changes_iter = watch_changes(
        store,
        roots,
        stop_event=stop_event,
        now=now,
        debounce_ms=debounce_ms,
        force_polling=force_polling,
    )
    async with contextlib.aclosing(changes_iter):
        async for changes in changes_iter:
            if changes.changed:
                yield changes.changed
