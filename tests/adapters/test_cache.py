"""SummaryCache: JSON-only diskcache (never unpickles), 0700, self-healing, version-checked."""

from __future__ import annotations

import os
import pickle
import sqlite3
import stat
from pathlib import Path
from typing import Any, ClassVar

import diskcache
import orjson
import pytest

from gobtui.adapters.files.jsonl import Loads
from gobtui.adapters.providers.interface import TailState
from gobtui.adapters.providers.reader import PARSER_VERSION, FileCursor, open_cursor
from gobtui.adapters.sessions import cache as cache_module
from gobtui.adapters.sessions.cache import JsonOnlyDisk, SummaryCache, encode_entry
from gobtui.core.model import Coverage, Provider, SessionSummary
from tests.builders.common import write_jsonl

# -- a tiny provider state, so these tests do not depend on the real adapters --------------


class TinyState:
    """Counts records; takes session id, tokens, agent and parent from flat fields."""

    provider: ClassVar[Provider] = Provider.CLAUDE
    tail_marker: ClassVar[tuple[bytes, ...]] = (b'"tokens"',)
    tail_loads: ClassVar[Loads] = staticmethod(orjson.loads)

    def __init__(self, path: str) -> None:
        self.path = path
        self.session_id: str | None = None
        self.tokens: int | None = None
        self.agent_id: str | None = None
        self.parent: str | None = None
        self.fed_bytes = 0

    def feed(self, record: dict[str, Any], line_len: int) -> None:
        body = record.get("payload", record)
        self.session_id = self.session_id or body.get("sessionId") or body.get("id")
        if isinstance(body.get("tokens"), int):
            self.tokens = body["tokens"]
        self.agent_id = self.agent_id or body.get("agentId")
        self.parent = self.parent or body.get("parent")
        self.fed_bytes += line_len

    @property
    def head_known(self) -> bool:  # (asked only of files too big to read whole)
        return self.session_id is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "tokens": self.tokens,
            "agent_id": self.agent_id,
            "parent": self.parent,
            "fed_bytes": self.fed_bytes,
        }

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> TinyState:
        state = cls(path)
        state.session_id = data["session_id"]
        state.tokens = data["tokens"]
        state.agent_id = data["agent_id"]
        state.parent = data["parent"]
        state.fed_bytes = int(data["fed_bytes"])
        return state

    def summary(
        self,
        *,
        path: str,
        size: int,
        mtime: float,
        coverage: Coverage,
        records: int,
        bad_reasons: dict[str, int],
        torn: bool,
    ) -> SessionSummary:
        return SessionSummary(
            provider=self.provider,
            session_id=self.session_id or Path(path).stem,
            path=path,
            context_tokens=self.tokens,
            records=records,
            bad_lines=sum(bad_reasons.values()),
            bad_reasons=bad_reasons,
            torn_tail=torn,
            bytes=size,
            mtime=mtime,
            coverage=coverage,
            agent_id=self.agent_id,
            parent_session_id=self.parent,
        )


class TinyCodexState(TinyState):
    provider: ClassVar[Provider] = Provider.CODEX


def tiny_state_for(provider: Provider) -> type[TailState]:
    return TinyState if provider is Provider.CLAUDE else TinyCodexState


def tiny_cursor(path: Path, lines: list[dict[str, Any]]) -> FileCursor:
    return open_cursor(str(write_jsonl(path, lines)), Provider.CLAUDE, TinyState)


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "cursors"


@pytest.fixture
def cursor(tmp_path: Path) -> FileCursor:
    return tiny_cursor(
        tmp_path / "s.jsonl", [{"sessionId": "s1", "tokens": 10}, {"sessionId": "s1", "tokens": 42}]
    )


# -- tests -----------------------------------------------------------------------------------


def test_round_trip(cache_path: Path, tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    path.write_bytes(b'{"sessionId":"s1","tokens":42}\n{"half')  # an unfinished line too
    cursor = open_cursor(str(path), Provider.CLAUDE, TinyState)
    assert cursor.lines.partial == b'{"half'
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.get(cursor.path) is None
        cache.put(cursor)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        back = cache.get(cursor.path)
        assert back is not None
        assert back.to_json() == cursor.to_json()
        assert back.summary() == cursor.summary()
        assert isinstance(back.state, TinyState) and back.state.tokens == 42
        cache.delete(cursor.path)
        assert cache.get(cursor.path) is None


def test_summary_travels_with_its_cursor(
    cache_path: Path, cursor: FileCursor, tmp_path: Path
) -> None:
    other = tiny_cursor(tmp_path / "other.jsonl", [{"sessionId": "o"}])
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put_many([(cursor, cursor.summary()), (other, cursor.summary())])
        entry = cache.get_entry(cursor.path)
        assert entry is not None and entry.summary == cursor.summary()
        mismatched = cache.get_entry(other.path)  # a summary of another file is not trusted
        assert mismatched is not None and mismatched.summary is None
        cache.put(other)
        plain = cache.get_entry(other.path)
        assert plain is not None and plain.summary is None


def test_round_trip_with_the_real_adapters(
    cache_path: Path, tmp_path: Path, fixtures_dir: Path
) -> None:
    from gobtui.adapters.providers.registry import state_class

    for provider, name in [
        (Provider.CLAUDE, "claude/marot__spotter__short.jsonl"),
        (Provider.CODEX, "codex/kvsankar__agent-history__session_with_compaction.jsonl"),
    ]:
        path = tmp_path / Path(name).name
        path.write_bytes((fixtures_dir / name).read_bytes())
        cold = open_cursor(str(path), provider, state_class(provider))
        with SummaryCache(cache_path) as cache:
            cache.put(cold)
        with SummaryCache(cache_path) as cache:
            back = cache.get(str(path))
        assert back is not None and back.summary() == cold.summary()


def test_directory_is_private(cache_path: Path) -> None:
    SummaryCache(cache_path).close()
    assert stat.S_IMODE(cache_path.stat().st_mode) == 0o700
    cache_path.chmod(0o755)
    SummaryCache(cache_path).close()
    assert stat.S_IMODE(cache_path.stat().st_mode) == 0o700


def test_the_directories_it_creates_above_it_are_private_too(tmp_path: Path) -> None:
    """$GOBTUI_CACHE_DIR/cursors: the cache dir gobtui makes is 0700 as well; a directory
    that was there already keeps its mode."""
    tmp_path.chmod(0o755)
    SummaryCache(tmp_path / "cache" / "cursors").close()
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache" / "cursors").stat().st_mode) == 0o700
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_default_directory_is_under_the_cache_dir() -> None:
    with SummaryCache() as cache:
        assert cache.directory == Path(os.environ["GOBTUI_CACHE_DIR"]) / "cursors"
        assert cache.enabled


# -- never through a symlink, never someone else's, files 0600 --------------------------------


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Where a planted symlink points (think /etc): its mode and contents must not change."""
    target = tmp_path / "victim"
    target.mkdir()
    target.chmod(0o755)
    return target


@pytest.mark.parametrize("level", ["cache", "cursors"])
def test_a_symlinked_cache_folder_is_not_followed(
    victim: Path, level: str, cursor: FileCursor, caplog: pytest.LogCaptureFixture
) -> None:
    """$GOBTUI_CACHE_DIR, or its `cursors`, pointing elsewhere: the cache is switched off and
    nothing is chmodded or written there (it used to chmod the target 0700 and make cache.db
    in it)."""
    top = Path(os.environ["GOBTUI_CACHE_DIR"])
    if level == "cache":
        top.parent.mkdir(parents=True, exist_ok=True)
        top.symlink_to(victim)
    else:
        top.mkdir(mode=0o700, parents=True)
        (top / "cursors").symlink_to(victim)
    with SummaryCache(state_for=tiny_state_for) as cache:
        assert not cache.enabled
        cache.put(cursor)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o755 and os.listdir(victim) == []
    [message] = [r.getMessage() for r in caplog.records]
    assert (
        message.startswith("cache disabled: ")
        and "is a symlink; gobtui does not follow it" in message
    )


def test_cache_files_are_0600_even_under_umask_000(cache_path: Path, cursor: FileCursor) -> None:
    old = os.umask(0)
    try:
        with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
            cache.put(cursor)
            names = sorted(os.listdir(cache_path))
            modes = {name: stat.S_IMODE((cache_path / name).stat().st_mode) for name in names}
    finally:
        os.umask(old)
    assert {"cache.db", "cache.db-wal", "cache.db-shm"} <= set(names)
    assert set(modes.values()) == {0o600}, modes
    assert stat.S_IMODE(cache_path.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache_path.parent.stat().st_mode) == 0o700


def test_an_old_0644_cache_db_is_tightened_and_said(
    cache_path: Path, cursor: FileCursor, caplog: pytest.LogCaptureFixture
) -> None:
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put(cursor)
    (cache_path / "cache.db").chmod(0o644)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.get(cursor.path) is not None
    assert stat.S_IMODE((cache_path / "cache.db").stat().st_mode) == 0o600
    db = cache_path / "cache.db"
    assert [r.getMessage() for r in caplog.records] == [
        f"cache file {db} was 0644; made it 0600 (private to you)"
    ]


def test_a_symlinked_cache_db_is_not_opened(
    cache_path: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache_path.mkdir(mode=0o700, parents=True)
    target = tmp_path / "passwd"
    target.write_bytes(b"root:x:0:0\n")
    (cache_path / "cache.db").symlink_to(target)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert not cache.enabled
    assert target.read_bytes() == b"root:x:0:0\n"
    assert (cache_path / "cache.db").is_symlink()  # not moved aside either: it is not damage
    assert "cache disabled: cache file" in caplog.text


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user's (chown) needs root")
def test_a_cache_folder_of_another_user_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    top = Path(os.environ["GOBTUI_CACHE_DIR"])
    top.mkdir(parents=True)
    top.chmod(0o755)
    os.chown(top, 65534, 65534)
    with SummaryCache(state_for=tiny_state_for) as cache:
        assert not cache.enabled
    assert stat.S_IMODE(top.stat().st_mode) == 0o755 and os.listdir(top) == []
    assert "is owned by uid 65534, not by you (uid 0)" in caplog.text


class Planted:
    """Unpickling this creates the file named by `marker`: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def test_pickled_value_is_refused_and_never_run(cache_path: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    live = tmp_path / "live"
    pickle.loads(pickle.dumps(Planted(live)))  # the payload is real: plain unpickling runs it
    assert live.exists()
    SummaryCache(cache_path).close()
    with diskcache.Cache(str(cache_path)) as plain:  # an attacker with write access
        plain.set("/some/session.jsonl", Planted(marker))
        plain.set("/big/session.jsonl", [Planted(marker), b"x" * 100_000])  # a value file
    assert not marker.exists()
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.get("/some/session.jsonl") is None
        assert cache.get("/big/session.jsonl") is None
    assert not marker.exists()
    with diskcache.Cache(str(cache_path)) as plain:  # and the rows were dropped
        assert "/some/session.jsonl" not in plain and "/big/session.jsonl" not in plain


def test_planted_value_file_row_reads_and_deletes_nothing(cache_path: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    SummaryCache(cache_path).close()
    db = sqlite3.connect(cache_path / "cache.db")
    with db:
        db.execute(
            "INSERT INTO Cache (key, raw, store_time, access_time, mode, filename, value)"
            " VALUES (?, 1, 0, 0, 2, ?, NULL)",
            ("/s.jsonl", os.path.relpath(victim, cache_path)),
        )
    db.close()
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.get("/s.jsonl") is None
    assert victim.read_text() == "precious"


def test_disk_refuses_to_pickle(cache_path: Path) -> None:
    cache_path.mkdir(parents=True)
    with diskcache.Cache(str(cache_path), disk=JsonOnlyDisk) as raw:
        with pytest.raises(TypeError):
            raw.set("k", {"a": 1})
        with pytest.raises(TypeError):
            raw.set(("tuple", "key"), b"v")
        raw.set("k", b"v")
        assert raw.get("k") == b"v"
    with pytest.raises(TypeError):
        pickle.dumps(JsonOnlyDisk(str(cache_path)).put(object()))


def test_garbage_database_is_moved_aside(cache_path: Path, cursor: FileCursor) -> None:
    cache_path.mkdir(parents=True)
    (cache_path / "cache.db").write_bytes(b"this is not sqlite" * 100)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.recovered and cache.enabled
        cache.put(cursor)
        assert cache.get(cursor.path) is not None
    bad = cache_path.with_name("cursors.bad")
    assert (bad / "cache.db").read_bytes().startswith(b"this is not sqlite")
    assert stat.S_IMODE(cache_path.stat().st_mode) == 0o700


def test_cache_path_that_is_a_file_switches_the_cache_off(
    cache_path: Path, cursor: FileCursor, caplog: pytest.LogCaptureFixture
) -> None:
    """Not a folder of gobtui's: left alone (not moved aside), and the cache is off."""
    cache_path.parent.mkdir(parents=True)
    cache_path.write_text("oops")
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert not cache.enabled and not cache.recovered
        cache.put(cursor)
        assert cache.get(cursor.path) is None
    assert cache_path.read_text() == "oops"
    assert [r.getMessage() for r in caplog.records] == [
        f"cache disabled: cache folder {cache_path} is not a directory"
    ]


def put_raw(cache_path: Path, key: str, value: bytes) -> None:
    with diskcache.Cache(str(cache_path), disk=JsonOnlyDisk) as raw:
        raw.set(key, value)


def test_other_parser_version_is_dropped(cache_path: Path, cursor: FileCursor) -> None:
    SummaryCache(cache_path).close()
    data = cursor.to_json() | {"parser_version": PARSER_VERSION + 1}
    put_raw(cache_path, cursor.path, orjson.dumps(data))
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.get(cursor.path) is None
    with diskcache.Cache(str(cache_path), disk=JsonOnlyDisk) as raw:
        assert cursor.path not in raw


@pytest.mark.parametrize(
    "value",
    [
        b"not json",
        b"[1, 2]",
        b'{"parser_version": 1}',
        orjson.dumps({"parser_version": PARSER_VERSION, "path": "/elsewhere"}),
    ],
)
def test_undecodable_values_are_misses(cache_path: Path, cursor: FileCursor, value: bytes) -> None:
    SummaryCache(cache_path).close()
    put_raw(cache_path, cursor.path, value)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert cache.get(cursor.path) is None


def test_inconsistent_offsets_are_misses(cache_path: Path, cursor: FileCursor) -> None:
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put(cursor)
    data = cursor.to_json()
    data["lines"]["offset"] = cursor.size + 10
    put_raw(cache_path, cursor.path + "\x00body", orjson.dumps(data))
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        # The head still matches the file, so the damage shows only when the body is
        # needed: it is dropped and the file read afresh, never trusted.
        restored = cache.get(cursor.path)
        assert restored is not None
        assert restored.lines.offset == cursor.lines.offset != cursor.size + 10
    with diskcache.Cache(str(cache_path), disk=JsonOnlyDisk) as raw:
        assert cursor.path + "\x00body" not in raw


def test_warm_entries_decode_their_body_only_when_needed(
    cache_path: Path, cursor: FileCursor
) -> None:
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put(cursor)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        entry = cache.get_entry(cursor.path)
        assert entry is not None and entry.cursor.body is not None
        assert (entry.cursor.inode, entry.cursor.size, entry.cursor.mtime_ns) == (
            cursor.inode,
            cursor.size,
            cursor.mtime_ns,
        )
        full = entry.cursor.loaded()
        assert full.body is None and full.to_json() == cursor.to_json()


def test_closed_cache_is_inert(cache_path: Path, cursor: FileCursor) -> None:
    cache = SummaryCache(cache_path, state_for=tiny_state_for)
    cache.close()
    assert not cache.enabled
    cache.put(cursor)
    assert cache.get(cursor.path) is None
    cache.delete(cursor.path)
    cache.clear()


# -- batched writes, every head in one query, rows made elsewhere -------------------------------


def three_cursors(tmp_path: Path) -> list[FileCursor]:
    return [
        tiny_cursor(tmp_path / f"{name}.jsonl", [{"sessionId": name, "tokens": n}])
        for name, n in (("a", 1), ("b", 2), ("c", 3))
    ]


def test_batched_writes_keep_diskcache_bookkeeping(cache_path: Path, tmp_path: Path) -> None:
    cursors = three_cursors(tmp_path)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put_many((c, c.summary()) for c in cursors)
        cache.put_many([(cursors[0], None)])  # an update in place
    with diskcache.Cache(str(cache_path), disk=JsonOnlyDisk) as raw:
        assert len(raw) == 6  # a head and a body each: the count trigger ran, once a row
        assert raw.check() == []  # diskcache's own consistency check (count, size, files)
        head, body = encode_entry(cursors[1], cursors[1].summary())
        assert raw.get(cursors[1].path) == head
        assert raw.get(cursors[1].path + "\x00body") == body
        assert b'"summary"' not in raw.get(cursors[0].path)  # the update took


def test_batched_writes_respect_the_size_limit(cache_path: Path, tmp_path: Path) -> None:
    with SummaryCache(cache_path, state_for=tiny_state_for, size_limit=1) as cache:
        cache.put_many((c, c.summary()) for c in three_cursors(tmp_path))
        assert cache.head_rows([str(tmp_path / "a.jsonl")]) == {}  # culled: nothing fits
        assert cache.enabled


def test_head_rows_are_the_heads_asked_for(
    cache_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cursors = three_cursors(tmp_path)
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put_many((c, c.summary()) for c in cursors)
        monkeypatch.setattr(cache_module, "_HEADS_BATCH", 2)  # (more than one query)
        asked = [c.path for c in cursors] + [str(tmp_path / "none.jsonl")]
        heads = cache.head_rows(asked)
        assert heads == {c.path: encode_entry(c, c.summary())[0] for c in cursors}
        assert cache.head_rows([cursors[1].path]) == {cursors[1].path: heads[cursors[1].path]}
        for cursor in cursors:
            entry = cache.get_entry(cursor.path, heads)
            assert entry is not None and entry.summary == cursor.summary()
            assert entry.cursor.loaded().to_json() == cursor.to_json()
        # a path the heads do not hold is a miss, without asking the database again
        cache.put(tiny_cursor(tmp_path / "late.jsonl", [{"sessionId": "late"}]))
        assert cache.get_entry(str(tmp_path / "late.jsonl"), heads) is None
        assert cache.get_entry(str(tmp_path / "late.jsonl")) is not None


def test_head_rows_refuse_and_drop_planted_rows(cache_path: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    good = tiny_cursor(tmp_path / "good.jsonl", [{"sessionId": "g"}])
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put(good)
    with diskcache.Cache(str(cache_path)) as plain:  # an attacker with write access
        plain.set("/pickled.jsonl", Planted(marker))
    db = sqlite3.connect(cache_path / "cache.db")
    with db:
        db.execute(
            "INSERT INTO Cache (key, raw, store_time, access_time, mode, filename, value)"
            " VALUES (?, 1, 0, 0, 2, ?, NULL)",
            ("/file.jsonl", os.path.relpath(victim, cache_path)),
        )
    db.close()
    asked = [good.path, "/pickled.jsonl", "/file.jsonl"]
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        assert list(cache.head_rows(asked)) == [good.path]
        assert list(cache.head_rows(asked)) == [good.path]  # (the planted rows are gone)
    assert not marker.exists() and victim.read_text() == "precious"
    with diskcache.Cache(str(cache_path), disk=JsonOnlyDisk) as raw:
        assert "/pickled.jsonl" not in raw and "/file.jsonl" not in raw


def test_a_damaged_summary_in_a_head_is_not_trusted(cache_path: Path, cursor: FileCursor) -> None:
    """The head's summary is checked field by field (no model validates it): a wrong type
    leaves the entry without a summary, to be made again from the cursor."""
    head, _ = encode_entry(cursor, cursor.summary())
    data = orjson.loads(head)
    assert data["summary"]["context_tokens"] == 42
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put_many([(cursor, cursor.summary())])
    for damage in ({"context_tokens": "42"}, {"turn": "asleep"}, {"usage_history": [["1", 2.0]]}):
        put_raw(cache_path, cursor.path, orjson.dumps(data | {"summary": data["summary"] | damage}))
        with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
            entry = cache.get_entry(cursor.path)
            assert entry is not None and entry.summary is None, damage
            assert entry.cursor.summary() == cursor.summary()  # made again from the body


def test_a_body_whose_state_makes_a_malformed_summary_is_a_miss(
    cache_path: Path, cursor: FileCursor
) -> None:
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        cache.put(cursor)
    data = cursor.to_json()
    data["state"]["tokens"] = "forty-two"  # restored as it is; the summary it makes is checked
    put_raw(cache_path, cursor.path + "\x00body", orjson.dumps(data))
    with SummaryCache(cache_path, state_for=tiny_state_for) as cache:
        restored = cache.get(cursor.path)
        assert restored is not None and restored.summary().context_tokens == 42  # read afresh
