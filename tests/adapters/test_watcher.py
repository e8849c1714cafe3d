"""watch_summaries: a real awatch over a tmp home, ended by its stop event."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncGenerator
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.store import SessionStore
from gobtui.adapters.sessions.watcher import watch_changes, watch_roots, watch_summaries
from gobtui.core.model import SessionSummary
from tests.adapters.test_cache import tiny_state_for

TIMEOUT = 10.0


def record(**fields: object) -> bytes:
    return orjson.dumps(fields) + b"\n"


@pytest.fixture
def homes(tmp_path: Path) -> Homes:
    return Homes(claude=tmp_path / "claude", codex=tmp_path / "codex")


@pytest.fixture
def store(homes: Homes, tmp_path: Path) -> SessionStore:
    assert homes.claude is not None
    (homes.claude / "projects" / "p").mkdir(parents=True)
    cache = SummaryCache(tmp_path / "cache", state_for=tiny_state_for)
    return SessionStore(homes, cache, max_age_secs=None, state_for=tiny_state_for)


async def next_batch(gen: AsyncGenerator[list[SessionSummary], None]) -> list[SessionSummary]:
    return await asyncio.wait_for(anext(gen), TIMEOUT)


async def started(
    gen: AsyncGenerator[list[SessionSummary], None],
) -> asyncio.Task[list[SessionSummary]]:
    """Start iterating (so awatch sets up its watches) and give the watcher a moment."""
    task = asyncio.ensure_future(next_batch(gen))
    await asyncio.sleep(0.3)
    return task


def test_watch_roots(homes: Homes) -> None:
    assert homes.claude is not None and homes.codex is not None
    assert watch_roots(homes) == [
        homes.claude / "projects",
        homes.codex / "sessions",
        homes.codex / "archived_sessions",
    ]
    assert watch_roots(Homes(claude=None, codex=None)) == []


async def test_an_append_arrives_as_an_updated_summary(homes: Homes, store: SessionStore) -> None:
    assert homes.claude is not None
    path = homes.claude / "projects" / "p" / "s.jsonl"
    path.write_bytes(record(sessionId="s", tokens=1))
    store.scan(time.time())
    stop = asyncio.Event()
    gen = watch_summaries(store, watch_roots(homes), stop_event=stop, now=time.time)
    try:
        task = await started(gen)
        with path.open("ab") as f:
            f.write(record(sessionId="s", tokens=2))
        (summary,) = await task
        assert (summary.path, summary.context_tokens, summary.records) == (str(path), 2, 2)
        # A new session file shows up too.
        task = await started(gen)
        fresh = homes.claude / "projects" / "p" / "t.jsonl"
        fresh.write_bytes(record(sessionId="t", tokens=5))
        (summary,) = await task
        assert (summary.session_id, summary.context_tokens) == ("t", 5)
    finally:
        stop.set()
        await gen.aclose()


async def test_stop_event_ends_the_generator(homes: Homes, store: SessionStore) -> None:
    stop = asyncio.Event()
    received: list[list[SessionSummary]] = []

    async def consume() -> None:
        async for batch in watch_summaries(
            store, watch_roots(homes), stop_event=stop, now=time.time
        ):
            received.append(batch)

    task = asyncio.ensure_future(consume())
    await asyncio.sleep(0.2)
    assert not task.done()
    stop.set()
    await asyncio.wait_for(task, TIMEOUT)
    assert received == []


async def test_no_existing_root_waits_for_stop(tmp_path: Path, store: SessionStore) -> None:
    stop = asyncio.Event()
    gen = watch_summaries(store, [tmp_path / "missing"], stop_event=stop, now=time.time)
    task = asyncio.ensure_future(anext(gen, None))
    await asyncio.sleep(0.1)
    assert not task.done()
    stop.set()
    assert await asyncio.wait_for(task, TIMEOUT) is None


async def test_a_deleted_session_is_reported_removed(homes: Homes, store: SessionStore) -> None:
    assert homes.claude is not None
    path = homes.claude / "projects" / "p" / "s.jsonl"
    path.write_bytes(record(sessionId="s", tokens=1))
    store.scan(time.time())
    stop = asyncio.Event()
    gen = watch_changes(store, watch_roots(homes), stop_event=stop, now=time.time)
    try:
        task = asyncio.ensure_future(asyncio.wait_for(anext(gen), TIMEOUT))
        await asyncio.sleep(0.3)
        path.unlink()
        changes = await task
        assert changes.removed == [str(path)] and changes.changed == []
        assert store.all() == []
    finally:
        stop.set()
        await gen.aclose()


async def test_real_claude_fixture_append(homes: Homes, tmp_path: Path, fixtures_dir: Path) -> None:
    assert homes.claude is not None
    path = homes.claude / "projects" / "-tmp-proj" / "0d2a.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / "claude" / "marot__spotter__short.jsonl", path)
    with SummaryCache(tmp_path / "real-cache") as cache:
        store = SessionStore(homes, cache, max_age_secs=None)
        (before,) = store.scan(time.time())
        stop = asyncio.Event()
        gen = watch_summaries(store, watch_roots(homes), stop_event=stop, now=time.time)
        try:
            task = await started(gen)
            last = path.read_bytes().splitlines(keepends=True)[-1]
            with path.open("ab") as f:
                f.write(last)
            (after,) = await task
            assert after.records == before.records + 1 and after.bytes > before.bytes
        finally:
            stop.set()
            await gen.aclose()
