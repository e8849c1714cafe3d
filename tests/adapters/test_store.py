"""SessionStore: warm starts read nothing, appends read only new bytes, subagents nest."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.providers import reader
from gobtui.adapters.providers.reader import open_cursor as real_open_cursor
from gobtui.adapters.sessions import store as store_module
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.store import SessionStore
from gobtui.core.model import Provider
from tests.adapters.test_cache import tiny_state_for

NOW = 1_800_000_000.0
SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"


def line(**fields: Any) -> bytes:
    return orjson.dumps(fields) + b"\n"


def codex_line(**payload: Any) -> bytes:
    return orjson.dumps({"type": "event_msg", "payload": payload}) + b"\n"


def write(path: Path, data: bytes, mtime: float | None = NOW) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


@pytest.fixture
def homes(tmp_path: Path) -> Homes:
    return Homes(claude=tmp_path / "claude", codex=tmp_path / "codex")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[SummaryCache]:
    with SummaryCache(tmp_path / "cache", state_for=tiny_state_for) as c:
        yield c


def tiny_store(homes: Homes, cache: SummaryCache | None) -> SessionStore:
    return SessionStore(homes, cache, max_age_secs=None, state_for=tiny_state_for)


class ReadCounter:
    """Counts transcript opens and the bytes os.pread returns (the reader's only read call)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opens = 0
        self.preads = 0
        self.bytes = 0
        real_open, real_pread = os.open, os.pread

        def counting_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if str(path).endswith(".jsonl"):
                self.opens += 1
            return real_open(path, flags, *args, **kwargs)

        def counting_pread(fd: int, n: int, offset: int) -> bytes:
            data = real_pread(fd, n, offset)
            self.preads += 1
            self.bytes += len(data)
            return data

        monkeypatch.setattr(os, "open", counting_open)
        monkeypatch.setattr(os, "pread", counting_pread)


def checked_bytes(read: int) -> int:
    """What an append re-reads of the `read` bytes a cursor had read: their fingerprint."""
    return sum(stop - start for start, stop in reader.fingerprint_ranges(read))


@pytest.fixture
def three_sessions(homes: Homes) -> list[Path]:
    assert homes.claude is not None and homes.codex is not None
    return [
        write(homes.claude / "projects" / "p" / "a.jsonl", line(sessionId="a", tokens=5)),
        write(homes.claude / "projects" / "q" / "b.jsonl", line(sessionId="b", tokens=7)),
        write(homes.codex / "sessions" / "2026" / "r.jsonl", codex_line(id="c", tokens=9)),
    ]


def test_scan_returns_sorted_top_level_sessions(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path]
) -> None:
    summaries = tiny_store(homes, cache).scan(NOW)
    assert [s.path for s in summaries] == sorted(map(str, three_sessions))
    assert [(s.provider, s.session_id, s.context_tokens) for s in summaries] == [
        (Provider.CLAUDE, "a", 5),
        (Provider.CLAUDE, "b", 7),
        (Provider.CODEX, "c", 9),
    ]


def test_warm_start_from_the_cache_reads_nothing(
    homes: Homes, tmp_path: Path, three_sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    with SummaryCache(tmp_path / "cache", state_for=tiny_state_for) as cache:
        first = tiny_store(homes, cache).scan(NOW)
    with SummaryCache(tmp_path / "cache", state_for=tiny_state_for) as cache:
        store = tiny_store(homes, cache)
        counter = ReadCounter(monkeypatch)
        again = store.scan(NOW)
        assert (counter.opens, counter.preads) == (0, 0)  # not even a sniff
        assert store.stats.cold_reads == 0 and store.stats.from_cache == 3
        assert again == first
        store.scan(NOW)  # and from memory
        assert (counter.opens, counter.preads) == (0, 0)


def test_append_reads_only_the_appended_bytes(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tiny_store(homes, cache)
    store.scan(NOW)
    target = three_sessions[0]
    record = line(sessionId="a", tokens=500, pad="x" * 1000)
    before = target.stat().st_size
    append(target, record)
    counter = ReadCounter(monkeypatch)
    changed = store.update([str(target)], NOW)
    # ... and the fingerprint of the bytes read before, checked to be still there
    assert counter.bytes == len(record) + checked_bytes(before)
    assert [(s.path, s.context_tokens, s.records) for s in changed] == [(str(target), 500, 2)]
    assert store.update([str(target)], NOW) == []  # nothing new: nothing returned
    # A full scan after another append also reads just that append.
    before = target.stat().st_size
    append(target, record)
    counter.bytes = 0
    store.scan(NOW)
    assert counter.bytes == len(record) + checked_bytes(before)
    summary = store.get(str(target))
    assert summary is not None and summary.records == 3


def test_a_half_written_line_is_finished_by_the_next_append(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path]
) -> None:
    store = tiny_store(homes, cache)
    store.scan(NOW)
    target = three_sessions[1]
    record = line(sessionId="b", tokens=77)
    append(target, record[:10])
    (changed,) = store.update([str(target)], NOW)
    assert changed.torn_tail and changed.context_tokens == 7
    append(target, record[10:])
    (changed,) = store.update([str(target)], NOW)
    assert not changed.torn_tail and changed.context_tokens == 77 and changed.records == 2


def test_deleted_and_new_files_on_update(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path]
) -> None:
    assert homes.claude is not None
    store = tiny_store(homes, cache)
    store.scan(NOW)
    gone = three_sessions[0]
    gone.unlink()
    fresh = write(homes.claude / "projects" / "p" / "z.jsonl", line(sessionId="z", tokens=1))
    junk = write(homes.claude / "projects" / "p" / "log.jsonl", b'{"level":"info"}\n')
    changes = store.update_changes([str(gone), str(fresh), str(junk), "/elsewhere/x.jsonl"], NOW)
    assert changes.removed == [str(gone)]
    assert [s.session_id for s in changes.changed] == ["z"]
    assert [s.session_id for s in store.all()] == ["z", "b", "c"]  # sorted by path: p/z < q/b
    assert store.get(str(gone)) is None
    assert cache.get(str(gone)) is None


def test_replaced_file_is_read_again(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path]
) -> None:
    store = tiny_store(homes, cache)
    store.scan(NOW)
    target = three_sessions[0]
    replacement = target.with_name("tmp")
    replacement.write_bytes(line(sessionId="a", tokens=3) + line(sessionId="a", tokens=4))
    os.replace(replacement, target)  # a new inode, as an atomic rewrite gives
    (changed,) = store.update([str(target)], NOW)
    assert (changed.context_tokens, changed.records) == (4, 2)


def test_unreadable_file_is_skipped_not_fatal(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = str(three_sessions[1])

    def open_cursor(path: str, *args: Any) -> Any:
        if path == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_open_cursor(path, *args)

    monkeypatch.setattr("gobtui.adapters.sessions.store.open_cursor", open_cursor)
    store = tiny_store(homes, cache)
    summaries = store.scan(NOW)
    assert locked not in [s.path for s in summaries] and len(summaries) == 2
    assert store.skipped == 1


def test_a_reader_bug_skips_the_file_only(
    homes: Homes, cache: SummaryCache, three_sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = str(three_sessions[2])

    def open_cursor(path: str, *args: Any) -> Any:
        if path == bad:
            raise KeyError("payload")
        return real_open_cursor(path, *args)

    monkeypatch.setattr("gobtui.adapters.sessions.store.open_cursor", open_cursor)
    store = tiny_store(homes, cache)
    assert [s.session_id for s in store.scan(NOW)] == ["a", "b"]
    assert store.stats.errors == 1
    assert store.update([bad], NOW) == [] and store.stats.errors == 2


def test_age_filter(homes: Homes, cache: SummaryCache, three_sessions: list[Path]) -> None:
    os.utime(three_sessions[0], (NOW - 30 * 86400, NOW - 30 * 86400))
    store = SessionStore(homes, cache, max_age_secs=86400, state_for=tiny_state_for)
    assert [s.session_id for s in store.scan(NOW)] == ["b", "c"]
    store = SessionStore(homes, cache, max_age_secs=None, state_for=tiny_state_for)
    assert [s.session_id for s in store.scan(NOW)] == ["a", "b", "c"]


# -- nesting ---------------------------------------------------------------------------------


def test_claude_subagents_nest_under_their_parent(
    homes: Homes, tmp_path: Path, fixtures_dir: Path
) -> None:
    assert homes.claude is not None
    proj = homes.claude / "projects" / "-home-user-spotter"
    proj.mkdir(parents=True)
    shutil.copyfile(
        fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}.jsonl", proj / f"{SPOTTER}.jsonl"
    )
    shutil.copytree(fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}", proj / SPOTTER)
    shutil.copyfile(fixtures_dir / "claude" / "marot__spotter__short.jsonl", proj / "short.jsonl")
    with SummaryCache(tmp_path / "cache") as cache:
        store = SessionStore(homes, cache, max_age_secs=None)
        top = store.scan(NOW)
        assert [s.path for s in top] == [str(proj / f"{SPOTTER}.jsonl"), str(proj / "short.jsonl")]
        parent = top[0]
        assert parent.session_id == SPOTTER and not parent.is_subagent
        refs = {ref.agent_id: ref for ref in parent.subagents}
        assert sorted(refs) == ["a2898e3", "acompact-e1f845"]
        # The 297 kB subagent file is first read from its head and tail only ...
        assert 0 < refs["a2898e3"].records < 144 and refs["a2898e3"].context_tokens == 71258
        assert store.partial_paths()[0].endswith("agent-a2898e3.jsonl")
        # ... and completed on demand: every record counted, the parent handed back.
        changes = store.complete(store.partial_paths())
        assert [s.path for s in changes.changed] == [str(proj / f"{SPOTTER}.jsonl")]
        assert store.partial_paths() == []
        # Its whole read's state went to the cache: memory holds the cursor's head only.
        done = store.cursor(str(proj / SPOTTER / "subagents" / "agent-a2898e3.jsonl"))
        assert done is not None and done.body is not None and done.loaded().records == 144
        parent = store.all()[0]
        refs = {ref.agent_id: ref for ref in parent.subagents}
        assert refs["a2898e3"].records == 144 and refs["a2898e3"].context_tokens == 71258
        assert top[1].subagents == []
        # A changed subagent brings back its parent, with the refreshed list.
        sub = proj / SPOTTER / "subagents" / "agent-a2898e3.jsonl"
        last = sub.read_bytes().splitlines(keepends=True)[-1]
        append(sub, last)
        (changed,) = store.update([str(sub)], NOW)
        assert changed.path == parent.path
        assert {r.agent_id: r.records for r in changed.subagents}["a2898e3"] == 145
        # Without its parent a subagent is shown on its own.
        (proj / f"{SPOTTER}.jsonl").unlink()
        changes = store.update_changes([str(proj / f"{SPOTTER}.jsonl")], NOW)
        assert changes.removed == [parent.path]
        orphans = [s for s in store.all() if s.is_subagent]
        assert sorted(s.agent_id or "" for s in orphans) == ["a2898e3", "acompact-e1f845"]


def test_orphan_is_adopted_when_its_parent_appears(homes: Homes, cache: SummaryCache) -> None:
    assert homes.claude is not None
    proj = homes.claude / "projects" / "p"
    sub = write(proj / "s" / "subagents" / "agent-x.jsonl", line(sessionId="s", agentId="x"))
    store = tiny_store(homes, cache)
    assert [s.path for s in store.scan(NOW)] == [str(sub)]
    parent = write(proj / "s.jsonl", line(sessionId="s", tokens=3))
    changes = store.update_changes([str(parent)], NOW)
    assert changes.removed == [str(sub)]
    (top,) = changes.changed
    assert top.path == str(parent) and [r.agent_id for r in top.subagents] == ["x"]
    assert store.all() == [top]


def test_codex_children_nest_by_parent_session_id(homes: Homes, cache: SummaryCache) -> None:
    assert homes.codex is not None
    day = homes.codex / "sessions" / "2026" / "01" / "02"
    parent = write(day / "rollout-1.jsonl", codex_line(id="P", tokens=100))
    child = write(day / "rollout-2.jsonl", codex_line(id="K", agentId="K", parent="P", tokens=9))
    lost = write(day / "rollout-3.jsonl", codex_line(id="L", agentId="L", parent="gone"))
    store = tiny_store(homes, cache)
    top = store.scan(NOW)
    assert [s.path for s in top] == [str(parent), str(lost)]
    assert [(r.agent_id, r.path, r.context_tokens) for r in top[0].subagents] == [
        ("K", str(child), 9)
    ]


def test_real_codex_subagent_rollout_nests(homes: Homes, tmp_path: Path) -> None:
    assert homes.codex is not None
    day = homes.codex / "sessions" / "2026" / "01" / "02"

    def meta(**payload: Any) -> bytes:
        record = {"timestamp": "2026-01-02T00:00:00Z", "type": "session_meta", "payload": payload}
        return orjson.dumps(record) + b"\n"

    parent = write(day / "rollout-a.jsonl", meta(id="P1", cwd="/w", source="cli"))
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "P1"}}}
    write(day / "rollout-b.jsonl", meta(id="C1", cwd="/w", source=spawn))
    with SummaryCache(tmp_path / "cache") as cache:
        (top,) = SessionStore(homes, cache, max_age_secs=None).scan(NOW)
    assert top.path == str(parent) and [r.agent_id for r in top.subagents] == ["C1"]


def test_real_fixtures_in_both_homes(homes: Homes, tmp_path: Path, fixtures_dir: Path) -> None:
    assert homes.claude is not None and homes.codex is not None
    claude = homes.claude / "projects" / "-tmp-proj" / "0d2a.jsonl"
    codex = homes.codex / "sessions" / "2026" / "02" / "23" / "rollout.jsonl"
    for src, dst in [
        ("claude/marot__spotter__short.jsonl", claude),
        ("codex/kvsankar__agent-history__session_with_compaction.jsonl", codex),
    ]:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fixtures_dir / src, dst)
    with SummaryCache(tmp_path / "cache") as cache:
        top = SessionStore(homes, cache, max_age_secs=None).scan(NOW)
    assert [(s.provider, s.path) for s in top] == [
        (Provider.CLAUDE, str(claude)),
        (Provider.CODEX, str(codex)),
    ]
    assert top[1].session_id == "compact-codex-001"
    assert top[0].records == 15


# -- cold reads shared with a helper process ---------------------------------------------------


def real_home(homes: Homes, fixtures_dir: Path) -> None:
    """Every real fixture in the layout its provider writes (a main Claude session with its
    subagents, and Codex rollouts under sessions/YYYY/MM/DD)."""
    assert homes.claude is not None and homes.codex is not None
    for source in sorted((fixtures_dir / "claude").rglob("*.jsonl")):
        relative = source.relative_to(fixtures_dir / "claude")
        if len(relative.parts) == 1:
            target = homes.claude / "projects" / "-tmp-fixtures" / relative
        else:  # <session>/subagents/agent-*.jsonl, next to <session>.jsonl
            target = homes.claude / "projects" / "-tmp-fixtures" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    day = homes.codex / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    for source in sorted((fixtures_dir / "codex").glob("*.jsonl")):
        shutil.copyfile(source, day / source.name)


def many_tiny(homes: Homes, count: int) -> None:
    assert homes.claude is not None and homes.codex is not None
    for i in range(count):
        write(
            homes.claude / "projects" / f"p{i % 5}" / f"s{i}.jsonl",
            line(sessionId=f"s{i}", tokens=i),
        )
        write(homes.codex / "sessions" / "2026" / f"r{i}.jsonl", codex_line(id=f"r{i}", tokens=i))


def scan_all(store: SessionStore) -> list[Any]:
    store.scan(NOW)
    return [(path, store.get(path)) for path in store.paths()]


def test_a_reader_bug_on_a_cold_read_skips_the_file_only(
    homes: Homes, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    many_tiny(homes, 15)
    real = reader.open_cursor

    def broken(path: str, *args: Any, **kwargs: Any) -> Any:
        if path.endswith("s4.jsonl"):
            raise KeyError("a reader bug")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(reader, "open_cursor", broken)
    monkeypatch.setattr(store_module, "open_cursor", broken)
    store = tiny_store(homes, None)
    paths = [path for path, _ in scan_all(store)]
    assert len(paths) == 29 and not any(p.endswith("/s4.jsonl") for p in paths)
    assert (store.stats.errors, store.skipped) == (1, 1)
    assert caplog.text.count("s4.jsonl failed") == 1  # logged once


def test_cold_read_hints_skip_what_cannot_be_opened(tmp_path: Path) -> None:
    """The kernel hints before a cold read are only hints: a file gone or unreadable by then
    is left to its read, which reports it."""
    small = tmp_path / "small.jsonl"
    small.write_bytes(b'{"type":"user"}\n')
    big = tmp_path / "big.jsonl"
    big.write_bytes(b'{"type":"user"}\n' * 20_000)  # over FULL_READ_MAX_BYTES: head and tail
    missing = tmp_path / "gone.jsonl"
    before = len(os.listdir("/proc/self/fd"))
    reader.hint_cold_reads(str(p) for p in (small, missing, big, tmp_path))  # no raise, no leak
    assert len(os.listdir("/proc/self/fd")) == before
