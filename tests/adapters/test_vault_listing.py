"""Listing (entries, history, stats) and prune check every entry against its manifest.

A real transcript is snapshotted, appended to and snapshotted again, then one piece of the
vault is damaged: the listings fail closed naming the piece, and prune changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.vault.prune import prune
from gobtui.adapters.vault.vault import Vault
from gobtui.core.model import Provider
from gobtui.core.vault.errors import VaultError, VaultErrorCode
from gobtui.core.vault.index import IndexEntry

SMALL = 1024
TOOL_HEAVY = "claude/marot__spotter__tool_heavy.jsonl"
APPENDED = b'{"type":"user","message":{"role":"user","content":"one more"}}\n'

Copy = Callable[..., Path]
Damage = Callable[[Vault, IndexEntry, IndexEntry], str]
"""Damages the vault holding (first, second) and returns what the message must name."""


@pytest.fixture
def two(tmp_path: Path, fixture_copy: Copy) -> tuple[Vault, IndexEntry, IndexEntry]:
    vault = Vault(tmp_path / "vault", chunk_bytes=SMALL, lock_wait_secs=0)
    source = fixture_copy(TOOL_HEAVY)
    first = vault.snapshot(source, Provider.CLAUDE, "s-1", "manual", 1.0)
    with source.open("ab") as out:
        out.write(APPENDED)
    second = vault.snapshot(source, Provider.CLAUDE, "s-1", "manual", 2.0)
    assert first.sha256 != second.sha256
    return vault, first, second


def _edit_index_line(vault: Vault, number: int, edit: Callable[[bytes], bytes]) -> None:
    lines = vault.index_path.read_bytes().split(b"\n")
    lines[number - 1] = edit(lines[number - 1])
    vault.index_path.write_bytes(b"\n".join(lines))


def _other_sha(sha: str) -> str:
    return ("0" if sha[0] != "0" else "1") + sha[1:]


def dangling_sha(vault: Vault, first: IndexEntry, _: IndexEntry) -> str:
    """QA's repro: the first hex digit of line 1's sha256 changed. The line's checksum
    catches the edit itself."""
    wrong = _other_sha(first.sha256)
    _edit_index_line(vault, 1, lambda line: line.replace(first.sha256.encode(), wrong.encode()))
    return f"index line 1 fails its checksum (snapshot {wrong[:12]})"


def dangling_rebound_sha(vault: Vault, first: IndexEntry, _: IndexEntry) -> str:
    """The same edit with the checksum worked out again: the missing manifest is named."""
    wrong = _other_sha(first.sha256)
    forged = first.model_copy(update={"sha256": wrong}).to_line()
    _edit_index_line(vault, 1, lambda _line: forged.rstrip(b"\n"))
    return f"manifest {wrong} is missing (named by index line 1)"


def flipped_manifest_byte(vault: Vault, first: IndexEntry, _: IndexEntry) -> str:
    path = vault.manifests_dir / first.sha256
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01
    path.write_bytes(bytes(data))
    return f"manifest {first.sha256} fails its hash check"


def deleted_manifest(vault: Vault, _: IndexEntry, second: IndexEntry) -> str:
    os.unlink(vault.manifests_dir / second.sha256)
    return f"manifest {second.sha256} is missing (named by index line 2)"


def manifest_is_a_directory(vault: Vault, first: IndexEntry, _: IndexEntry) -> str:
    path = vault.manifests_dir / first.sha256
    os.unlink(path)
    os.mkdir(path)
    return first.sha256  # "manifest ... is not a plain file", or "unexpected .../<sha>"


def edited_bytes_field(vault: Vault, _: IndexEntry, second: IndexEntry) -> str:
    forged = second.model_copy(update={"bytes": second.bytes - 1}).to_line()
    _edit_index_line(vault, 2, lambda _line: forged.rstrip(b"\n"))
    return f"index line 2 (snapshot {second.sha256[:12]}) does not match its manifest (bytes)"


def edited_source_digest(vault: Vault, first: IndexEntry, _: IndexEntry) -> str:
    forged = first.model_copy(update={"source_sha256": "f" * 64}).to_line()
    _edit_index_line(vault, 1, lambda _line: forged.rstrip(b"\n"))
    return f"index line 1 (snapshot {first.sha256[:12]}) does not match its manifest"


Codes = set[VaultErrorCode]
DAMAGE: dict[str, tuple[Damage, Codes]] = {
    "dangling sha": (dangling_sha, {VaultErrorCode.DAMAGED_INDEX}),
    "dangling re-bound sha": (dangling_rebound_sha, {VaultErrorCode.MISSING_MANIFEST}),
    "flipped manifest byte": (flipped_manifest_byte, {VaultErrorCode.DAMAGED_MANIFEST}),
    "deleted manifest": (deleted_manifest, {VaultErrorCode.MISSING_MANIFEST}),
    # stats and prune list the directory first, and find there what the vault never put
    "manifest is a directory": (
        manifest_is_a_directory,
        {VaultErrorCode.DAMAGED_MANIFEST, VaultErrorCode.DAMAGED_LAYOUT},
    ),
    "edited bytes": (edited_bytes_field, {VaultErrorCode.DAMAGED_INDEX}),
    "edited source digest": (edited_source_digest, {VaultErrorCode.DAMAGED_INDEX}),
}


def _tree(vault: Vault) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(vault.root)): p.read_bytes() if p.is_file() else None
        for p in vault.root.rglob("*")
    }


def _error(call: Callable[[], object]) -> VaultError:
    with pytest.raises(VaultError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize("name", DAMAGE)
def test_listings_and_prune_fail_closed_naming_the_piece(
    two: tuple[Vault, IndexEntry, IndexEntry], name: str
) -> None:
    vault, first, second = two
    damage, codes = DAMAGE[name]
    piece = damage(vault, first, second)
    before = _tree(vault)
    for call in (
        vault.entries,
        lambda: vault.history("s-1"),
        vault.stats,
        lambda: prune(vault, keep=1, dry_run=True),
        lambda: prune(vault, keep=1, dry_run=False),  # would drop line 1, keep line 2
        lambda: prune(vault, keep=2, dry_run=False),  # would keep both
    ):
        error = _error(call)
        assert error.code in codes and error.damaged, name
        assert piece in error.message, error.message
    assert _tree(vault) == before  # prune deleted nothing, rewrote nothing


def test_a_session_listing_checks_only_the_entries_it_lists(
    two: tuple[Vault, IndexEntry, IndexEntry], tmp_path: Path
) -> None:
    vault, first, _ = two
    other = tmp_path / "other.jsonl"
    other.write_bytes(APPENDED)
    vault.snapshot(other, Provider.CLAUDE, "s-2", "manual", 3.0)
    deleted_manifest(vault, first, first)  # s-1's first snapshot is gone
    assert [e.session_id for e in vault.history("s-2")] == ["s-2"]
    assert _error(lambda: vault.history("s-1")).code is VaultErrorCode.MISSING_MANIFEST
    assert len(vault.entries(checked=False)) == 3  # a plain look-up of ids still answers


def test_stats_find_a_missing_or_short_chunk_without_hashing_chunks(
    two: tuple[Vault, IndexEntry, IndexEntry],
) -> None:
    vault, _, second = two
    chunks: list[str] = orjson.loads((vault.manifests_dir / second.sha256).read_bytes())["chunks"]
    last = vault.chunks_dir / chunks[-1]
    data = last.read_bytes()
    last.write_bytes(data[:-1])
    error = _error(vault.stats)
    assert error.code is VaultErrorCode.DAMAGED_MANIFEST and second.sha256 in error.message
    os.unlink(last)
    error = _error(vault.stats)
    assert error.code is VaultErrorCode.MISSING_CHUNK
    assert f"chunk {chunks[-1]} is missing" in error.message
