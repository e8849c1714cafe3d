"""The snapshot vault on real files: exact round trips, chunk sharing, damage, modes, prune."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.adapters.vault import fs as vault_fs
from gobtui.adapters.vault.prune import prune
from gobtui.adapters.vault.reader import VaultReader
from gobtui.adapters.vault.vault import Vault
from gobtui.core.limits import VAULT_CHUNK_BYTES, VAULT_MAX_RECORDS
from gobtui.core.model import Provider
from gobtui.core.vault.errors import VaultError, VaultErrorCode
from gobtui.core.vault.index import IndexEntry

SMALL = 1024
"""The chunk size most tests use, so boundaries are cheap to cross."""
SPOTTER = "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
NOW = 1_795_000_000.0

Copy = Callable[..., Path]


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault", chunk_bytes=SMALL, lock_wait_secs=0)


def snap(vault: Vault, path: Path, session: str = "s-1", ts: float = NOW, **kw: str) -> IndexEntry:
    return vault.snapshot(path, Provider.CLAUDE, session, kw.get("label", "manual"), ts)


def chunk_files(vault: Vault) -> set[str]:
    return set(os.listdir(vault.chunks_dir))


def expected_records(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return [] if not data else lines


def errors_of(fn: Callable[[], object]) -> VaultError:
    with pytest.raises(VaultError) as caught:
        fn()
    return caught.value


BOUNDARY_SIZES = [
    0,
    1,
    SMALL - 1,
    SMALL,
    SMALL + 1,
    2 * SMALL - 1,
    2 * SMALL,
    2 * SMALL + 1,
    5 * SMALL + 17,
]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    size=st.sampled_from(BOUNDARY_SIZES),
    seed=st.binary(min_size=1, max_size=64),
    newline_every=st.integers(min_value=1, max_value=300),
)
def test_snapshot_reconstructs_byte_identical_around_chunk_boundaries(
    tmp_path: Path, size: int, seed: bytes, newline_every: int
) -> None:
    body = bytearray((seed * (size // len(seed) + 1))[:size])
    for i in range(newline_every - 1, size, newline_every):
        body[i] = 0x0A
    data = bytes(body)
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        work = Path(scratch)
        source = work / "s.jsonl"
        source.write_bytes(data)
        vault = Vault(work / "vault", chunk_bytes=SMALL)
        entry = snap(vault, source)
        assert vault.read_bytes(entry.sha256) == data
        assert [line for _, line in vault.iter_records(entry.sha256)] == expected_records(data)
        assert entry.bytes == size and entry.record_count == len(expected_records(data))
        assert entry.source_sha256 == hashlib.sha256(data).hexdigest()
        restored = work / "restored.jsonl"
        report = vault.restore_to(entry.sha256, restored)
        assert restored.read_bytes() == data and report.bytes == size
        sizes = sorted(os.path.getsize(vault.chunks_dir / c) for c in chunk_files(vault))
        assert all(0 < n <= SMALL for n in sizes)
        assert len(os.listdir(vault.tmp_dir)) == 0


def test_records_split_exactly_for_every_short_layout(vault: Vault) -> None:
    """Every string of 'a' and newline up to 8 bytes, streamed in chunks of 1 to 4 bytes:
    lines spanning chunks, one-byte pieces at a chunk's end, blank lines on boundaries."""
    reader = VaultReader(vault, exists=False)
    for length in range(9):
        for n in range(2**length):
            data = bytes(b"a\n"[(n >> bit) & 1] for bit in range(length))
            for size in (1, 2, 3, 4):
                pieces = [data[i : i + size] for i in range(0, len(data), size)]
                with patch.object(reader, "chunks", return_value=iter(pieces)):
                    got = [line for _, line in reader.records("0" * 64)]
                assert got == expected_records(data), (data, size)


def test_real_chunk_size_on_a_real_transcript(fixture_copy: Copy, tmp_path: Path) -> None:
    source = fixture_copy(SPOTTER)
    data = source.read_bytes()
    vault = Vault(tmp_path / "vault")
    seen: list[tuple[int, int]] = []
    entry = vault.snapshot(
        source, Provider.CLAUDE, "4d5611e5", "manual", NOW, lambda d, t: seen.append((d, t))
    )
    assert vault.read_bytes(entry.sha256) == data
    assert entry.record_count == data.count(b"\n") == 1512
    sizes = sorted(os.path.getsize(vault.chunks_dir / c) for c in chunk_files(vault))
    assert sizes == sorted([VAULT_CHUNK_BYTES] * 3 + [len(data) - 3 * VAULT_CHUNK_BYTES])
    assert seen[-1] == (len(data), len(data)) and len(seen) == 4
    assert entry.path == str(source.resolve())


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    size=st.integers(min_value=0, max_value=6 * SMALL),
    appended=st.integers(min_value=1, max_value=SMALL),
)
def test_an_append_adds_at_most_two_chunks(tmp_path: Path, size: int, appended: int) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        work = Path(scratch)
        source = work / "s.jsonl"
        source.write_bytes(os.urandom(size))
        vault = Vault(work / "vault", chunk_bytes=SMALL)
        first = snap(vault, source)
        before = chunk_files(vault)
        with source.open("ab") as out:
            out.write(os.urandom(appended))
        second = snap(vault, source)
        assert 1 <= len(chunk_files(vault) - before) <= 2
        assert vault.read_bytes(second.sha256) == source.read_bytes()
        assert vault.read_bytes(first.sha256) == source.read_bytes()[:size]


def test_identical_content_reuses_everything_but_appends_an_entry(
    vault: Vault, fixture_copy: Copy
) -> None:
    source = fixture_copy("claude/marot__spotter__short.jsonl")
    first = snap(vault, source, ts=1.0)
    chunks = chunk_files(vault)
    second = snap(vault, source, ts=2.0, label="again")
    assert first.sha256 == second.sha256 and chunk_files(vault) == chunks
    assert [e.strategy for e in vault.entries()] == ["again", "manual"]
    assert len(os.listdir(vault.manifests_dir)) == 1


def test_entries_are_newest_first_by_append_order_not_clock(
    vault: Vault, fixture_copy: Copy
) -> None:
    a = fixture_copy("claude/marot__spotter__short.jsonl")
    b = fixture_copy("claude/kvsankar__agent-history__session-01.jsonl")
    snap(vault, a, "one", ts=300.0)
    snap(vault, b, "two", ts=100.0)  # the clock went back: append order still wins
    snap(vault, a, "one", ts=200.0)
    assert [(e.session_id, e.ts) for e in vault.entries()] == [
        ("one", 200.0), ("two", 100.0), ("one", 300.0)]  # fmt: skip
    assert [e.ts for e in vault.history("one")] == [200.0, 300.0]
    assert vault.history("absent") == []


def test_concurrent_snapshots_all_land_in_a_valid_index(vault: Vault, tmp_path: Path) -> None:
    sources = []
    for i in range(6):
        source = tmp_path / f"s{i}.jsonl"
        source.write_bytes(os.urandom(3 * SMALL) + b"shared tail\n" * 50)
        sources.append(source)
    with ThreadPoolExecutor(6) as pool:
        entries = list(pool.map(lambda i: snap(vault, sources[i], f"s{i}", ts=float(i)), range(6)))
    listed = vault.entries()
    assert sorted(e.session_id for e in listed) == [f"s{i}" for i in range(6)]
    for entry, source in zip(entries, sources, strict=True):
        assert vault.read_bytes(entry.sha256) == source.read_bytes()


def test_modes_are_private_even_with_a_permissive_umask(vault: Vault, fixture_copy: Copy) -> None:
    source = fixture_copy("claude/marot__spotter__short.jsonl")
    old = os.umask(0)
    try:
        snap(vault, source)
    finally:
        os.umask(old)
    for directory in (vault.root, vault.chunks_dir, vault.manifests_dir, vault.tmp_dir):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700, directory
    files = [vault.index_path]
    files += [vault.chunks_dir / n for n in os.listdir(vault.chunks_dir)]
    files += [vault.manifests_dir / n for n in os.listdir(vault.manifests_dir)]
    for path in files:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


def test_reading_an_absent_vault_is_empty_and_creates_nothing(vault: Vault) -> None:
    assert vault.entries() == [] and vault.history("x") == []
    assert vault.stats().snapshots == 0
    assert prune(vault, keep=1, dry_run=False).dropped_entries == 0
    assert errors_of(lambda: vault.read_bytes("a" * 64)).code is VaultErrorCode.NOT_FOUND
    assert not vault.root.exists()


def test_bad_input_is_refused_before_anything_is_written(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"{}\n")
    for session, label in (("", "manual"), ("s" * 257, "manual"), ("s", "x" * 129)):
        error = errors_of(partial(snap, vault, source, session, label=label))
        assert error.code is VaultErrorCode.INVALID_INPUT
    missing = errors_of(lambda: snap(vault, tmp_path / "absent.jsonl"))
    assert missing.code is VaultErrorCode.NOT_FOUND
    assert errors_of(lambda: snap(vault, tmp_path)).code is VaultErrorCode.INVALID_INPUT
    assert not vault.root.exists()


def test_limits_on_bytes_and_records(tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"x" * 100)
    small = Vault(tmp_path / "v1", max_bytes=99)
    assert errors_of(lambda: snap(small, source)).code is VaultErrorCode.LIMIT
    source.write_bytes(b"\n" * (VAULT_MAX_RECORDS + 1))
    error = errors_of(lambda: snap(Vault(tmp_path / "v2"), source))
    assert error.code is VaultErrorCode.LIMIT and "records" in str(error)
    source.write_bytes(b"\n" * VAULT_MAX_RECORDS)
    assert snap(Vault(tmp_path / "v3"), source).record_count == VAULT_MAX_RECORDS


def test_a_source_that_shrinks_mid_snapshot_is_refused(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"y" * (3 * SMALL))

    def shrink(done: int, total: int) -> None:
        if done == SMALL:
            os.truncate(source, SMALL + 10)

    error = errors_of(lambda: vault.snapshot(source, Provider.CODEX, "s", "m", NOW, shrink))
    assert error.code is VaultErrorCode.SOURCE_CHANGED
    assert vault.entries() == []


# --- damage ----------------------------------------------------------------------------------


@pytest.fixture
def stored(vault: Vault, fixture_copy: Copy) -> tuple[Vault, IndexEntry, Path]:
    source = fixture_copy("claude/marot__spotter__tool_heavy.jsonl")
    return vault, snap(vault, source), source


def _manifest_chunks(vault: Vault, sha: str) -> list[str]:
    chunks: list[str] = orjson.loads((vault.manifests_dir / sha).read_bytes())["chunks"]
    return chunks


def test_a_flipped_byte_in_a_chunk_fails_closed_everywhere(
    stored: tuple[Vault, IndexEntry, Path], tmp_path: Path
) -> None:
    vault, entry, source = stored
    victim = _manifest_chunks(vault, entry.sha256)[3]
    path = vault.chunks_dir / victim
    data = bytearray(path.read_bytes())
    data[100] ^= 0x01
    path.write_bytes(bytes(data))
    target = tmp_path / "restored.jsonl"
    readers: list[Callable[[], object]] = [
        lambda: vault.read_bytes(entry.sha256),
        lambda: list(vault.iter_records(entry.sha256)),
        lambda: vault.restore_to(entry.sha256, target),
        lambda: vault.diff(entry.sha256, entry.sha256),
        lambda: prune(vault, keep=1, dry_run=True),
        lambda: snap(vault, source),  # reusing a damaged chunk is refused too
    ]
    for read in readers:
        error = errors_of(read)
        assert error.code is VaultErrorCode.DAMAGED_CHUNK and error.damaged
        assert victim in str(error)
    assert not target.exists()
    assert os.listdir(tmp_path / "vault" / "tmp") == []


def test_a_missing_chunk_is_named(stored: tuple[Vault, IndexEntry, Path]) -> None:
    vault, entry, _ = stored
    victim = _manifest_chunks(vault, entry.sha256)[-1]
    os.unlink(vault.chunks_dir / victim)
    error = errors_of(lambda: vault.read_bytes(entry.sha256))
    assert error.code is VaultErrorCode.MISSING_CHUNK and victim in str(error)


def test_a_truncated_or_missing_manifest_is_named(stored: tuple[Vault, IndexEntry, Path]) -> None:
    vault, entry, _ = stored
    path = vault.manifests_dir / entry.sha256
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    error = errors_of(lambda: vault.read_bytes(entry.sha256))
    assert error.code is VaultErrorCode.DAMAGED_MANIFEST and entry.sha256 in str(error)
    os.unlink(path)
    error = errors_of(lambda: vault.read_bytes(entry.sha256))
    assert error.code is VaultErrorCode.MISSING_MANIFEST and entry.sha256 in str(error)


@pytest.mark.parametrize("lie", ["source_sha256", "bytes"])
def test_a_well_formed_manifest_that_lies_is_caught_at_the_end(
    stored: tuple[Vault, IndexEntry, Path], lie: str
) -> None:
    vault, entry, _ = stored
    manifest = orjson.loads((vault.manifests_dir / entry.sha256).read_bytes())
    manifest[lie] = "0" * 64 if lie == "source_sha256" else manifest["bytes"] - 1
    forged = orjson.dumps(manifest)
    sha = hashlib.sha256(forged).hexdigest()  # stored under its own name: the hash checks out
    (vault.manifests_dir / sha).write_bytes(forged)
    error = errors_of(lambda: vault.read_bytes(sha))
    assert error.code is VaultErrorCode.DAMAGED_MANIFEST and sha in str(error)
    with pytest.raises(VaultError):
        list(vault.iter_records(sha))


def test_a_garbage_index_line_stops_every_command(stored: tuple[Vault, IndexEntry, Path]) -> None:
    vault, entry, source = stored
    with vault.index_path.open("ab") as out:
        out.write(b"{garbage}\n")
    damaged = vault.index_path.read_bytes()
    for call in (
        vault.entries,
        lambda: vault.history(entry.session_id),
        lambda: vault.read_bytes(entry.sha256),
        lambda: snap(vault, source),
        lambda: prune(vault, keep=1, dry_run=False),
    ):
        error = errors_of(call)
        assert error.code is VaultErrorCode.DAMAGED_INDEX and "index line 2" in str(error)
    assert vault.index_path.read_bytes() == damaged


def test_an_index_entry_that_disagrees_with_its_manifest_is_damage(
    stored: tuple[Vault, IndexEntry, Path],
) -> None:
    vault, entry, _ = stored
    forged = entry.model_copy(update={"bytes": entry.bytes + 1})
    vault.index_path.write_bytes(forged.to_line())
    error = errors_of(lambda: vault.read_bytes(entry.sha256))
    assert error.code is VaultErrorCode.DAMAGED_INDEX


def test_stray_files_in_the_object_directories_are_damage(
    stored: tuple[Vault, IndexEntry, Path],
) -> None:
    vault, _, _ = stored
    (vault.chunks_dir / "notes.txt").write_text("hello")
    for call in (vault.stats, lambda: prune(vault, keep=1, dry_run=True)):
        assert errors_of(call).code is VaultErrorCode.DAMAGED_LAYOUT


# --- find, restore, diff, stats --------------------------------------------------------------


def test_find_by_prefix_unique_ambiguous_missing_invalid(vault: Vault, tmp_path: Path) -> None:
    shas = ["abcd" + "0" * 60, "abcd" + "1" * 60, "abce" + "2" * 60]
    vault.root.mkdir()
    lines = [
        IndexEntry(ts=float(i), sha256=sha, path="/s.jsonl", session_id="s", provider=Provider.CODEX,
                   bytes=0, record_count=0, source_sha256=sha).to_line()
        for i, sha in enumerate(shas)
    ]  # fmt: skip
    vault.index_path.write_bytes(b"".join(lines))
    assert vault.find("ABCE").sha256 == shas[2]
    assert vault.find(shas[0]).sha256 == shas[0]
    ambiguous = errors_of(lambda: vault.find("abcd"))
    assert ambiguous.code is VaultErrorCode.AMBIGUOUS
    assert shas[0][:16] in str(ambiguous) and shas[1][:16] in str(ambiguous)
    assert errors_of(lambda: vault.find("ffff")).code is VaultErrorCode.NOT_FOUND
    for bad in ("abc", "xyz1", "../etc"):
        assert errors_of(partial(vault.find, bad)).code is VaultErrorCode.INVALID_INPUT


def test_restore_never_overwrites(stored: tuple[Vault, IndexEntry, Path], tmp_path: Path) -> None:
    vault, entry, source = stored
    target = tmp_path / "existing.jsonl"
    target.write_bytes(b"keep me")
    error = errors_of(lambda: vault.restore_to(entry.sha256, target))
    assert error.code is VaultErrorCode.TARGET_EXISTS
    assert target.read_bytes() == b"keep me"
    fresh = tmp_path / "fresh.jsonl"
    vault.restore_to(entry.sha256, fresh)
    assert fresh.read_bytes() == source.read_bytes()
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o600


def test_diff_of_an_appended_transcript(vault: Vault, fixture_copy: Copy) -> None:
    source = fixture_copy("claude/marot__spotter__short.jsonl")
    first = snap(vault, source)
    lines = source.read_bytes().splitlines(keepends=True)
    extra = b'{"type":"user","message":{"content":"again"}}\n'
    source.write_bytes(b"".join(lines[1:]) + extra)  # first line gone, one record added
    second = snap(vault, source)
    diff = vault.diff(first.sha256, second.sha256)
    assert diff.added == [hashlib.sha256(extra[:-1]).hexdigest()]
    assert diff.removed == [hashlib.sha256(lines[0][:-1]).hexdigest()]
    assert (diff.records_a, diff.records_b, diff.unchanged) == (15, 15, 14)
    assert diff.types_b["user"] == diff.types_a["user"] + 1
    assert (
        diff.types_a["file-history-snapshot"] == 1 and "file-history-snapshot" not in diff.types_b
    )


def test_stats_count_shared_chunks_once(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"a" * (3 * SMALL))  # three identical chunks: stored once
    snap(vault, source)
    stats = vault.stats()
    assert (stats.snapshots, stats.manifests, stats.chunks) == (1, 1, 1)
    assert stats.stored_bytes == SMALL and stats.logical_bytes == 3 * SMALL
    assert stats.index_bytes == vault.index_path.stat().st_size


# --- prune -----------------------------------------------------------------------------------


@pytest.fixture
def streams(vault: Vault, tmp_path: Path) -> Iterator[tuple[Vault, Path, Path]]:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for version in range(3):
        a.write_bytes(os.urandom(2 * SMALL) + b"v%d" % version)
        snap(vault, a, "stream-a", ts=float(version))
    b.write_bytes(os.urandom(SMALL))
    snap(vault, b, "stream-b", ts=9.0)
    yield vault, a, b


def _tree(vault: Vault) -> dict[str, bytes]:
    return {
        str(p.relative_to(vault.root)): p.read_bytes() for p in vault.root.rglob("*") if p.is_file()
    }


def test_prune_dry_run_changes_nothing(streams: tuple[Vault, Path, Path]) -> None:
    vault, _, _ = streams
    before = _tree(vault)
    report = prune(vault, keep=1, dry_run=True)
    assert (report.dry_run, report.streams, report.kept_entries, report.dropped_entries) == (
        True, 2, 2, 2)  # fmt: skip
    assert report.manifests_removed == 2 and report.chunks_removed == 6
    assert report.bytes_reclaimed == 4 * SMALL + 2 * 2  # two versions of 1024 + 1024 + 2 bytes
    assert _tree(vault) == before


def test_prune_keeps_the_newest_of_each_stream_and_reclaims_the_rest(
    streams: tuple[Vault, Path, Path], tmp_path: Path
) -> None:
    vault, a, b = streams
    planned = prune(vault, keep=1, dry_run=True)
    with (vault.tmp_dir / ".left.123.tmp").open("wb") as leftover:
        leftover.write(b"partial")
    report = prune(vault, keep=1, dry_run=False)
    assert report.model_dump(exclude={"dry_run", "temps_removed"}) == planned.model_dump(
        exclude={"dry_run", "temps_removed"}
    )
    assert report.temps_removed == 1 and os.listdir(vault.tmp_dir) == []
    entries = vault.entries()
    assert [(e.session_id, e.ts) for e in entries] == [("stream-b", 9.0), ("stream-a", 2.0)]
    for entry, source in zip(entries, (b, a), strict=True):
        assert vault.read_bytes(entry.sha256) == source.read_bytes()
    assert len(os.listdir(vault.manifests_dir)) == 2
    on_disk = chunk_files(vault)
    needed = {c for e in entries for c in _manifest_chunks(vault, e.sha256)}
    assert on_disk == needed
    assert prune(vault, keep=1, dry_run=False).dropped_entries == 0


def test_prune_keeps_a_manifest_still_shared_with_a_kept_entry(
    vault: Vault, tmp_path: Path
) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(b"shared\n")
    b.write_bytes(b"shared\n")
    shared = snap(vault, a, "a").sha256
    snap(vault, b, "b")
    a.write_bytes(b"shared\nnew\n")
    snap(vault, a, "a")
    report = prune(vault, keep=1, dry_run=False)
    assert (report.dropped_entries, report.manifests_removed) == (1, 0)
    assert vault.read_bytes(shared) == b"shared\n"


def test_prune_refuses_a_damaged_vault_without_deleting(
    streams: tuple[Vault, Path, Path],
) -> None:
    vault, _, _ = streams
    newest = vault.entries()[0]
    (vault.manifests_dir / newest.sha256).write_bytes(b"{broken")
    before = _tree(vault)
    error = errors_of(lambda: prune(vault, keep=1, dry_run=False))
    assert error.code is VaultErrorCode.DAMAGED_MANIFEST
    assert _tree(vault) == before


def test_prune_waits_for_readers_and_gives_up_with_locked(
    streams: tuple[Vault, Path, Path],
) -> None:
    vault, _, _ = streams
    with vault.reading():
        error = errors_of(lambda: prune(vault, keep=1, dry_run=False))
        assert error.code is VaultErrorCode.LOCKED
    with vault.reading(exclusive=True):  # prune running: a snapshot or reader waits, then fails
        assert errors_of(vault.entries).code is VaultErrorCode.LOCKED
    assert len(vault.entries()) == 4
    assert errors_of(lambda: prune(vault, keep=0)).code is VaultErrorCode.INVALID_INPUT


def test_a_symlinked_vault_root_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    vault = Vault(tmp_path / "link")
    assert errors_of(vault.entries).code is VaultErrorCode.DAMAGED_LAYOUT
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"{}\n")
    assert errors_of(lambda: snap(vault, source)).code is VaultErrorCode.DAMAGED_LAYOUT
    shutil.rmtree(real)


def test_store_new_never_replaces(tmp_path: Path) -> None:
    final = tmp_path / "f"
    final.write_bytes(b"old")
    assert vault_fs.store_new(final, (b"new",), tmp_path) is False
    assert final.read_bytes() == b"old" and os.listdir(tmp_path) == ["f"]
