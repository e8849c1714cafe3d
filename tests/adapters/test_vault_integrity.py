"""The vault's index on real files: failed and interrupted appends, bound lines, a deleted or
emptied index. Every damage here is done to a real vault in tmp_path."""

from __future__ import annotations

import errno
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.vault.prune import prune
from gobtui.adapters.vault.vault import Vault
from gobtui.core.model import Provider
from gobtui.core.vault.errors import VaultErrorCode
from gobtui.core.vault.index import IndexEntry
from tests.adapters.vault_helpers import error_of, tree

SMALL = 1024
NOW = 1_795_000_000.0
SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"

Copy = Callable[..., Path]


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault", chunk_bytes=SMALL, lock_wait_secs=0)


def snap(vault: Vault, path: Path, session: str = SESSION, ts: float = NOW) -> IndexEntry:
    return vault.snapshot(path, Provider.CLAUDE, session, "manual", ts)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    record = {"type": "user", "sessionId": SESSION, "message": {"content": "hello"}}
    path.write_bytes(orjson.dumps(record) + b"\n")
    return path


def grow(path: Path, text: str) -> None:
    with path.open("ab") as out:
        out.write(orjson.dumps({"type": "user", "message": {"content": text}}) + b"\n")


# --- (3) a failed append leaves the index as it was -----------------------------------------


def tearing_writes(monkeypatch: pytest.MonkeyPatch, vault: Vault, fail: int) -> list[int]:
    """os.write on the index writes half of what it is given, then fails with `fail`.

    Only the index's descriptor is torn (the chunk writers run on other threads); returns
    the sizes written, so a test can see the tear really happened.
    """
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell the index's descriptor from the others")
    real_write = os.write
    torn: list[int] = []

    def write(fd: int, data: bytes | memoryview) -> int:
        if os.readlink(f"/proc/self/fd/{fd}") != str(vault.index_path):
            return real_write(fd, data)
        if torn:
            raise OSError(fail, os.strerror(fail))
        torn.append(real_write(fd, bytes(data)[: len(data) // 2]))
        return torn[-1]

    monkeypatch.setattr(os, "write", write)
    return torn


@pytest.mark.parametrize("fail", [errno.ENOSPC, errno.EIO])
def test_a_failed_index_write_is_truncated_back(
    vault: Vault, source: Path, monkeypatch: pytest.MonkeyPatch, fail: int
) -> None:
    first = snap(vault, source)
    before = vault.index_path.read_bytes()
    grow(source, "more")
    torn = tearing_writes(monkeypatch, vault, fail)
    error = error_of(lambda: snap(vault, source, ts=NOW + 1))
    assert torn and torn[0] > 0  # half a line did reach the file
    assert error.code is VaultErrorCode.IO and error.message.count("\n") == 0
    assert vault.index_path.read_bytes() == before
    monkeypatch.undo()
    assert vault.entries() == [first]
    second = snap(vault, source, ts=NOW + 2)
    assert vault.entries() == [second, first]


def test_a_failed_index_fsync_is_truncated_back(
    vault: Vault, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell the index's descriptor from the others")
    snap(vault, source)
    before = vault.index_path.read_bytes()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        index = os.readlink(f"/proc/self/fd/{fd}") == str(vault.index_path)
        if index and os.fstat(fd).st_size > len(before):  # the line is in, not yet durable
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    grow(source, "more")
    assert error_of(lambda: snap(vault, source, ts=NOW + 1)).code is VaultErrorCode.IO
    assert vault.index_path.read_bytes() == before


def test_a_first_snapshot_that_cannot_append_leaves_an_empty_vault(
    vault: Vault, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest is stored before the append fails: with the never-indexed marker the
    vault reads as empty (not as an emptied index), and the next snapshot just works."""
    tearing_writes(monkeypatch, vault, errno.ENOSPC)
    assert error_of(lambda: snap(vault, source)).code is VaultErrorCode.IO
    monkeypatch.undo()
    assert vault.index_path.read_bytes() == b""
    assert os.listdir(vault.manifests_dir) and vault.never_indexed_path.exists()
    assert vault.entries() == [] and vault.stats().unindexed_manifests == 1
    entry = snap(vault, source)
    assert vault.entries() == [entry] and not vault.never_indexed_path.exists()


def _mount_tmpfs(where: Path, size: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs root to mount a small tmpfs")
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    _mount_tmpfs(where, "256k")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(directory: Path) -> None:
    with (directory / "filler").open("wb", buffering=0) as out:
        for size in (4096, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC


def test_enospc_on_a_real_full_tmpfs_leaves_the_index_usable(
    small_disk: Path, source: Path
) -> None:
    vault = Vault(small_disk / "vault", chunk_bytes=SMALL, lock_wait_secs=0)
    entries = [snap(vault, source)]
    line = len(entries[0].to_line())
    page = 4096  # tmpfs allocates whole pages: only an append that crosses one needs space
    while vault.index_path.stat().st_size % page + line <= page:
        entries.insert(0, snap(vault, source, ts=NOW + len(entries)))
    before = vault.index_path.read_bytes()
    _fill(small_disk)
    # Same bytes: chunks and manifest are reused, so only the index needs a new page.
    error = error_of(lambda: snap(vault, source, ts=NOW + 99))
    assert error.code is VaultErrorCode.IO and "No space left on device" in error.message
    assert vault.index_path.read_bytes() == before
    assert vault.entries() == entries and vault.stats().index_torn_bytes == 0
    os.unlink(small_disk / "filler")
    newest = snap(vault, source, ts=NOW + 100)
    assert vault.entries() == [newest, *entries]


# --- (3) what an interrupted append left: ignored, then cut off ----------------------------


def test_a_torn_last_line_is_ignored_by_readers_and_cut_by_the_next_writer(
    vault: Vault, source: Path
) -> None:
    first = snap(vault, source)
    intact = vault.index_path.read_bytes()
    remnant = first.model_copy(update={"ts": NOW + 1}).to_line()[:57]  # a crash mid-append
    vault.index_path.write_bytes(intact + remnant)
    assert vault.entries() == [first] and vault.history(SESSION) == [first]
    assert vault.stats().index_torn_bytes == len(remnant)
    assert vault.read_bytes(first.sha256) == source.read_bytes()
    grow(source, "again")
    second = snap(vault, source, ts=NOW + 2)
    assert vault.index_path.read_bytes() == intact + second.to_line()
    vault.index_path.write_bytes(vault.index_path.read_bytes() + remnant)
    report = prune(vault, keep=5, dry_run=False)  # prune is a writer too
    assert report.index_torn_bytes == len(remnant)
    assert vault.index_path.read_bytes() == intact + second.to_line()


def test_a_whole_last_line_missing_only_its_newline_is_an_interrupted_append(
    vault: Vault, source: Path
) -> None:
    first = snap(vault, source)
    whole = first.model_copy(update={"ts": NOW + 1}).to_line()
    vault.index_path.write_bytes(first.to_line() + whole[:-1])
    assert vault.entries() == [first]


@pytest.mark.parametrize("stray", [b"\x0b", b"\x08", b"J", b"*"])
def test_a_flipped_last_newline_is_damage_not_an_interrupted_append(
    vault: Vault, source: Path, stray: bytes
) -> None:
    snap(vault, source)
    grow(source, "more")
    snap(vault, source, ts=NOW + 1)
    data = vault.index_path.read_bytes()
    vault.index_path.write_bytes(data[:-1] + stray)  # what a flipped bit makes of "\n"
    before = tree(vault)
    for call in (vault.entries, vault.stats, lambda: snap(vault, source, ts=NOW + 2)):
        error = error_of(call)
        assert error.code is VaultErrorCode.DAMAGED_INDEX
        assert error.message == "index line 2 has no newline and is not an interrupted append"
    assert tree(vault) == before


def test_a_complete_bad_line_before_a_torn_tail_still_fails_closed(
    vault: Vault, source: Path
) -> None:
    first = snap(vault, source)
    vault.index_path.write_bytes(first.to_line() + b"{garbage}\n" + first.to_line()[:20])
    before = tree(vault)
    for call in (vault.entries, lambda: snap(vault, source), lambda: prune(vault, 1, False)):
        error = error_of(call)
        assert error.code is VaultErrorCode.DAMAGED_INDEX and "index line 2 is invalid" in str(
            error
        )
    assert tree(vault) == before


# --- (6) every field of a line is bound -----------------------------------------------------


@pytest.fixture
def two(vault: Vault, source: Path) -> tuple[Vault, IndexEntry, IndexEntry]:
    first = snap(vault, source)
    grow(source, "more")
    second = snap(vault, source, ts=NOW + 1)
    return vault, first, second


def test_no_single_bit_flip_in_the_index_goes_unnoticed(
    two: tuple[Vault, IndexEntry, IndexEntry],
) -> None:
    """QA flipped 450 single bits of a real index and 188 went unnoticed; now none does.
    450 random bits over the whole file and every bit of line 1's session id and path, each
    flipped on its own in the real file (core's tests flip every bit of a line)."""
    vault, first, _ = two
    good = vault.index_path.read_bytes()
    rng = random.Random(188)
    flips = [(rng.randrange(len(good)), rng.randrange(8)) for _ in range(450)]
    for value in (first.session_id, first.path):
        start = good.index(orjson.dumps(value))
        flips += [(p, b) for p in range(start, start + len(value) + 2) for b in range(8)]
    for position, bit in flips:
        flipped = bytearray(good)
        flipped[position] ^= 1 << bit
        vault.index_path.write_bytes(bytes(flipped))
        error = error_of(vault.entries)
        assert error.damaged, (position, bit, error.message)
        assert error.message.startswith("index line "), error.message
    vault.index_path.write_bytes(good)
    assert len(vault.entries()) == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("session_id", "55604662-cf2a-4331-851a-ec234028f8cb"),
        ("path", "/etc/cron.d/s.jsonl"),
        ("provider", "codex"),
        ("strategy", "elide"),
        ("ts", NOW + 0.5),
        ("record_count", 7),
    ],
)
def test_an_edited_field_is_caught_on_every_read_naming_the_line(
    two: tuple[Vault, IndexEntry, IndexEntry], tmp_path: Path, field: str, value: object
) -> None:
    """An edited session id would make `show` print another session as verified, an edited
    path would send `undo` into another directory: both now fail closed."""
    vault, first, second = two
    lines = vault.index_path.read_bytes().split(b"\n")
    record = orjson.loads(lines[1])
    record[field] = value
    lines[1] = orjson.dumps(record)
    vault.index_path.write_bytes(b"\n".join(lines))
    before = tree(vault)
    target = tmp_path / "restored.jsonl"
    for call in (
        vault.entries,
        lambda: vault.history(SESSION),
        lambda: vault.find(second.sha256[:8]),
        lambda: vault.read_bytes(first.sha256),
        lambda: vault.restore_to(second.sha256, target),
        vault.stats,
        lambda: prune(vault, 1, False),
    ):
        error = error_of(call)
        assert error.code is VaultErrorCode.DAMAGED_INDEX
        assert error.message == f"index line 2 fails its checksum (snapshot {second.sha256[:12]})"
    assert tree(vault) == before and not target.exists()


def _strip_checksums(vault: Vault) -> None:
    lines = vault.index_path.read_bytes().splitlines()
    legacy = [orjson.loads(line) for line in lines]
    for record in legacy:
        del record["line_sha256"]
    vault.index_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in legacy))


def test_legacy_lines_stay_readable_unbound_and_are_not_rebound_by_a_snapshot(
    two: tuple[Vault, IndexEntry, IndexEntry], source: Path
) -> None:
    vault, first, second = two
    _strip_checksums(vault)
    legacy = vault.index_path.read_bytes()
    listed = vault.entries()
    assert [e.sha256 for e in listed] == [second.sha256, first.sha256]
    assert not any(e.is_bound for e in listed) and vault.stats().unbound_entries == 2
    grow(source, "third")
    third = snap(vault, source, ts=NOW + 2)
    assert vault.index_path.read_bytes() == legacy + third.to_line()
    assert [e.is_bound for e in vault.entries()] == [True, False, False]


# --- (7) a deleted or emptied index is damage -----------------------------------------------


@pytest.mark.parametrize("how", ["missing", "empty"])
def test_a_deleted_or_emptied_index_with_manifests_is_damage(
    two: tuple[Vault, IndexEntry, IndexEntry], source: Path, how: str
) -> None:
    vault, _, _ = two
    if how == "missing":
        os.unlink(vault.index_path)
    else:
        vault.index_path.write_bytes(b"")
    before = tree(vault)
    for call in (
        vault.entries,
        lambda: vault.history(SESSION),
        vault.stats,
        lambda: prune(vault, 1, dry_run=True),
        lambda: prune(vault, 1, dry_run=False),
        lambda: snap(vault, source, ts=NOW + 5),
    ):
        error = error_of(call)
        assert error.code is VaultErrorCode.DAMAGED_INDEX and error.damaged
        assert error.message == (
            f"the index is {how} but 2 manifests are present; gobtui vault --repair rebuilds it"
        )
    assert tree(vault) == before


def test_an_empty_vault_directory_is_still_an_empty_vault(vault: Vault, source: Path) -> None:
    entry = snap(vault, source)
    os.unlink(vault.index_path)
    for name in os.listdir(vault.manifests_dir):
        os.unlink(vault.manifests_dir / name)
    assert vault.entries() == []  # no manifest, nothing lost: an empty vault
    shutil.rmtree(vault.root)
    assert vault.entries() == []
    assert snap(vault, source).sha256 == entry.sha256
