"""A transcript rewritten in place (same path and inode, new bytes, as long or longer) is read
again from the start, not tailed from the old offset, in memory and across a restart; a pure
append is still tailed. Real transcripts from the fixture corpus, the real store and cache."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import diskcache
import orjson
import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.sessions.cache import AS_READ, JsonOnlyDisk, SummaryCache
from gobtui.adapters.sessions.store import SessionStore, StoreStats
from gobtui.core.limits import FINGERPRINT_WINDOW_BYTES, FULL_READ_MAX_BYTES
from gobtui.core.model import Coverage, SessionSummary
from tests.adapters.test_store import ReadCounter, checked_bytes

NOW = 1_800_000_000.0
SHORT = "claude/marot__spotter__short.jsonl"
TOOL_HEAVY = "claude/marot__spotter__tool_heavy.jsonl"
BIG = "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"

Copy = Callable[[str], Path]


@pytest.fixture
def homes(tmp_path: Path) -> Homes:
    return Homes(claude=tmp_path / "claude", codex=tmp_path / "codex")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[SummaryCache]:
    with SummaryCache(tmp_path / "cache") as c:
        yield c


def session_path(homes: Homes) -> Path:
    assert homes.claude is not None
    path = homes.claude / "projects" / "-home-dev-spotter" / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def padded(line: bytes, pad: int = 40) -> bytes:
    """The record with one more field: longer, and the same to a reader of what it holds."""
    record = orjson.loads(line)
    record["zzPad"] = "p" * pad
    return orjson.dumps(record) + b"\n"


def rewrite_in_place(path: Path, data: bytes, mtime: float = NOW + 60) -> None:
    """New bytes through the same inode (as an editor saving in place, or a client rewriting
    its file), never a rename."""
    inode = path.stat().st_ino
    with path.open("r+b") as handle:
        handle.write(data)
        handle.truncate()
    os.utime(path, (mtime, mtime))
    assert path.stat().st_ino == inode


def store_over(homes: Homes, cache: SummaryCache | None) -> SessionStore:
    return SessionStore(homes, cache, max_age_secs=None)


def fresh_read(homes: Homes, path: Path) -> SessionSummary:
    """The file read from its first byte: a store without a cache."""
    summary = store_over(homes, None).scan(NOW)
    (found,) = [s for s in summary if s.path == str(path)]
    return found


def only(summaries: list[SessionSummary], path: Path) -> SessionSummary:
    (found,) = [s for s in summaries if s.path == str(path)]
    return found


# -- the rewrites ---------------------------------------------------------------------------


def _other_fixture(copy: Copy) -> tuple[bytes, bytes]:
    """The short session, then the tool-heavy one's lines at the same path."""
    return copy(SHORT).read_bytes(), copy(TOOL_HEAVY).read_bytes()


def _short_middle_line(copy: Copy) -> tuple[bytes, bytes]:
    """A line in the middle longer: the old offset lands inside a line of the new file."""
    old = copy(SHORT).read_bytes()
    lines = lines_of(old)
    lines[len(lines) // 2] = padded(lines[len(lines) // 2])
    return old, b"".join(lines)


def _short_same_size(copy: Copy) -> tuple[bytes, bytes]:
    """Not one byte longer: the project's name spelt otherwise, byte for byte as long."""
    old = copy(SHORT).read_bytes()
    assert b"spotter" in old
    return old, old.replace(b"spotter", b"spotted")


def _long_head(copy: Copy) -> tuple[bytes, bytes]:
    """A file longer than two fingerprint windows, its first line changed."""
    old = copy(TOOL_HEAVY).read_bytes()
    assert len(old) > 2 * FINGERPRINT_WINDOW_BYTES
    lines = lines_of(old)
    return old, padded(lines[0]) + b"".join(lines[1:])


def _long_before_the_offset(copy: Copy) -> tuple[bytes, bytes]:
    """A file longer than two fingerprint windows, its last line (just before where the
    cursor stopped) changed, and a line more after it."""
    old = copy(TOOL_HEAVY).read_bytes()
    lines = lines_of(old)
    return old, b"".join(lines[:-1]) + padded(lines[-1]) + lines[-2]


REWRITES = {
    "another_fixture": _other_fixture,
    "a_middle_line_longer": _short_middle_line,
    "same_size": _short_same_size,
    "long_file_head": _long_head,
    "long_file_before_the_offset": _long_before_the_offset,
}


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_a_rewrite_in_place_is_read_again(
    name: str, homes: Homes, cache: SummaryCache, fixture_copy: Copy
) -> None:
    old, new = REWRITES[name](fixture_copy)
    assert old != new and len(new) >= len(old)
    path = session_path(homes)
    path.write_bytes(old)
    os.utime(path, (NOW, NOW))
    store = store_over(homes, cache)
    first = only(store.scan(NOW), path)
    assert first == fresh_read(homes, path)

    rewrite_in_place(path, new)
    (changed,) = store.update([str(path)], NOW)
    expected = fresh_read(homes, path)
    assert (changed.records, changed.bad_lines) == (expected.records, expected.bad_lines)
    assert changed == expected
    assert expected.bad_lines == 0 and expected.records == len(lines_of(new))
    # and the cursor it stored goes on from there: an append after it is tailed as usual
    assert only(store.scan(NOW), path) == expected


def test_the_short_session_rewritten_counts_its_own_lines(
    homes: Homes, cache: SummaryCache, fixture_copy: Copy
) -> None:
    """The bug as seen: a 15-line file counted 19 records and a bad line."""
    old, new = _short_middle_line(fixture_copy)
    path = session_path(homes)
    path.write_bytes(old)
    store = store_over(homes, cache)
    store.scan(NOW)
    rewrite_in_place(path, new)
    (changed,) = store.update([str(path)], NOW)
    assert (changed.records, changed.bad_lines, changed.torn_tail) == (15, 0, False)


@pytest.mark.parametrize("name", ["another_fixture", "a_middle_line_longer", "long_file_head"])
def test_a_rewrite_in_place_is_read_again_after_a_restart(
    name: str, homes: Homes, tmp_path: Path, fixture_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = REWRITES[name](fixture_copy)
    path = session_path(homes)
    path.write_bytes(old)
    os.utime(path, (NOW, NOW))
    with SummaryCache(tmp_path / "cache") as cache:
        store_over(homes, cache).scan(NOW)
    rewrite_in_place(path, new)  # while gobtui was not running

    with SummaryCache(tmp_path / "cache") as cache:  # a restart: the cursor comes from disk
        store = store_over(homes, cache)
        again = only(store.scan(NOW), path)
        assert store.stats.from_cache == 1
    expected = fresh_read(homes, path)
    assert (again.records, again.bad_lines) == (expected.records, expected.bad_lines)
    assert again == expected

    with SummaryCache(tmp_path / "cache") as cache:  # and what it stored then is right
        store = store_over(homes, cache)
        counter = ReadCounter(monkeypatch)
        assert only(store.scan(NOW), path) == expected
        assert (counter.opens, counter.preads, store.stats.from_cache) == (0, 0, 1)


# -- appends ----------------------------------------------------------------------------------


def _cut(copy: Copy) -> tuple[bytes, bytes]:
    """The tool-heavy session cut mid-line past two fingerprint windows (so the check reads
    less than the whole): (what is there, what follows)."""
    data = copy(TOOL_HEAVY).read_bytes()
    cut = data.rfind(b"\n", 0, len(data) * 15 // 16) + 17  # a partial line is carried too
    assert 2 * FINGERPRINT_WINDOW_BYTES < cut < len(data)
    return data[:cut], data[cut:]


def test_a_pure_append_is_still_tailed(
    homes: Homes, cache: SummaryCache, fixture_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    head, rest = _cut(fixture_copy)
    path = session_path(homes)
    path.write_bytes(head)
    store = store_over(homes, cache)
    store.scan(NOW)
    with path.open("ab") as handle:
        handle.write(rest)
    counter = ReadCounter(monkeypatch)
    (changed,) = store.update([str(path)], NOW)
    # only the appended bytes, and the fingerprint of those read before
    assert counter.bytes == len(rest) + checked_bytes(len(head)) < len(head) + len(rest)
    assert store.stats.cold_reads == 1 and store.stats.advanced == 1
    assert changed == fresh_read(homes, path)


def _scan_after_restart(
    homes: Homes, folder: Path, path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[SessionSummary, int, StoreStats]:
    """A new store over the cache in `folder` scans: the file's summary, the bytes it read,
    the store's counters."""
    with SummaryCache(folder) as cache:
        store = store_over(homes, cache)
        counter = ReadCounter(monkeypatch)
        summary = only(store.scan(NOW), path)
        return summary, counter.bytes, store.stats


def test_a_pure_append_is_still_tailed_after_a_restart(
    homes: Homes, tmp_path: Path, fixture_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, second = _cut(fixture_copy)
    head = whole[: whole.rfind(b"\n", 0, len(whole) - 1) + 1]  # less its last line,
    first = whole[len(head) :]  # appended and tailed before the restart
    path = session_path(homes)
    path.write_bytes(head)
    with SummaryCache(tmp_path / "cache") as cache:
        store = store_over(homes, cache)
        store.scan(NOW)
        with path.open("ab") as handle:
            handle.write(first)
        store.update([str(path)], NOW)  # tailed: a cursor a cold read would not make again
    with path.open("ab") as handle:
        handle.write(second)
    again, read, stats = _scan_after_restart(homes, tmp_path / "cache", path, monkeypatch)
    assert read == len(second) + checked_bytes(len(head) + len(first))
    assert (stats.cold_reads, stats.advanced) == (0, 1)
    assert again == fresh_read(homes, path)


def test_a_cursor_as_a_cold_read_made_it_is_kept_without_its_body(
    homes: Homes, tmp_path: Path, fixture_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first start writes thousands of cursors: those a cold read of the file makes again
    # are kept as their head (and summary); a change to the file reads it again.
    head, rest = _cut(fixture_copy)
    path = session_path(homes)
    path.write_bytes(head)
    with SummaryCache(tmp_path / "cache") as cache:
        store_over(homes, cache).scan(NOW)
    with diskcache.Cache(str(tmp_path / "cache"), disk=JsonOnlyDisk) as raw:
        assert raw.get(str(path) + "\x00body") == AS_READ
    unchanged, read, _ = _scan_after_restart(homes, tmp_path / "cache", path, monkeypatch)
    assert read == 0  # unchanged: the head answers
    assert unchanged == fresh_read(homes, path)
    with path.open("ab") as handle:
        handle.write(rest)
    again, read, _ = _scan_after_restart(homes, tmp_path / "cache", path, monkeypatch)
    assert read >= len(head) + len(rest)  # (a small file: read whole)
    assert again == fresh_read(homes, path)


# -- a big file, summarised from its head and tail --------------------------------------------


def test_a_big_head_and_tail_file_rewritten_in_place_is_read_again(
    homes: Homes, cache: SummaryCache, fixtures_dir: Path
) -> None:
    old = (fixtures_dir / BIG).read_bytes()
    assert len(old) > FULL_READ_MAX_BYTES
    lines = lines_of(old)
    new = padded(lines[0]) + b"".join(lines[1:])
    path = session_path(homes)
    path.write_bytes(old)
    store = store_over(homes, cache)
    assert only(store.scan(NOW), path).coverage is Coverage.HEAD_TAIL
    rewrite_in_place(path, new)
    (changed,) = store.update([str(path)], NOW)
    assert changed == fresh_read(homes, path)
    # appended to, it is tailed again (the middle is still read only by `complete`)
    with path.open("ab") as handle:
        handle.write(lines[-1])
    (grown,) = store.update([str(path)], NOW)
    assert grown == fresh_read(homes, path) and grown.records == changed.records + 1
