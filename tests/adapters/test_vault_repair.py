"""Repairing the index, deep stats and prune's leftovers, on real vaults in tmp_path."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

import gobtui.adapters.vault.prune
from gobtui.adapters.publish.operations import operations_dir, receipt_roots, write_receipt
from gobtui.adapters.vault.prune import prune, repair
from gobtui.adapters.vault.vault import Vault
from gobtui.core.model import Provider
from gobtui.core.receipt import OperationKind, Receipt
from gobtui.core.vault.errors import VaultErrorCode
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import RECOVERED_LABEL, FieldSource
from tests.adapters.vault_helpers import error_of, tree

SMALL = 1024
NOW = 1_795_000_000.0
CLAUDE_ID = "55604662-cf2a-4331-851a-ec234028f8ca"
CODEX_ID = "019c8a70-dda7-7f33-98ea-f30553347322"
SHORT = "claude/marot__spotter__short.jsonl"
CODEX = "codex/madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"

Copy = Callable[..., Path]


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault", chunk_bytes=SMALL, lock_wait_secs=0)


def grow(path: Path, text: str) -> None:
    with path.open("ab") as out:
        out.write(orjson.dumps({"type": "user", "message": {"content": text}}) + b"\n")


def flip_bit(path: Path, position: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 1 << bit
    path.write_bytes(bytes(data))


def chunks_of(vault: Vault, sha: str) -> list[str]:
    names: list[str] = orjson.loads((vault.manifests_dir / sha).read_bytes())["chunks"]
    return names


@pytest.fixture
def three(vault: Vault, fixture_copy: Copy) -> tuple[Vault, list[IndexEntry], Path]:
    """Two versions of a Claude transcript and one Codex rollout, oldest first."""
    claude, codex = fixture_copy(SHORT), fixture_copy(CODEX)
    first = vault.snapshot(claude, Provider.CLAUDE, CLAUDE_ID, "manual", NOW)
    grow(claude, "more")
    second = vault.snapshot(claude, Provider.CLAUDE, CLAUDE_ID, "elide", NOW + 1)
    third = vault.snapshot(codex, Provider.CODEX, CODEX_ID, "manual", NOW + 2)
    return vault, [first, second, third], claude


# --- (13) deep stats ------------------------------------------------------------------------


def test_a_flipped_chunk_byte_passes_the_listings_and_is_found_by_deep_stats(
    three: tuple[Vault, list[IndexEntry], Path],
) -> None:
    vault, (first, second, third), _ = three
    victim = chunks_of(vault, third.sha256)[0]
    flip_bit(vault.chunks_dir / victim, 100)
    # The listings say what they check: they do not read chunks, so they still list it.
    assert [e.sha256 for e in vault.entries()] == [third.sha256, second.sha256, first.sha256]
    shallow = vault.stats()
    assert shallow.verification == "manifests" and shallow.damaged == []
    assert shallow.chunks_rehashed == 0
    deep = vault.stats(deep=True)
    assert deep.verification == "chunks"
    assert [(d.sha256, d.code, d.indexed) for d in deep.damaged] == [
        (third.sha256, VaultErrorCode.DAMAGED_CHUNK, True)
    ]
    assert victim in deep.damaged[0].message
    assert deep.chunks_rehashed == len(
        {c for e in (first, second, third) for c in chunks_of(vault, e.sha256)}
    )
    assert deep.model_dump(exclude={"verification", "damaged", "chunks_rehashed"}) == (
        shallow.model_dump(exclude={"verification", "damaged", "chunks_rehashed"})
    )


def test_deep_stats_check_manifests_no_line_names_and_report_every_damaged_one(
    three: tuple[Vault, list[IndexEntry], Path], tmp_path: Path
) -> None:
    vault, (first, second, third), _ = three
    orphan = tmp_path / "orphan.jsonl"
    orphan.write_bytes(b'{"type":"user","sessionId":"o-1"}\n')
    kept = vault.snapshot(orphan, Provider.CLAUDE, "o-1", "manual", NOW + 3)
    lines = vault.index_path.read_bytes().splitlines(keepends=True)
    vault.index_path.write_bytes(b"".join(lines[:-1]))  # o-1's line gone, its manifest left
    os.unlink(vault.chunks_dir / chunks_of(vault, kept.sha256)[0])
    last = chunks_of(vault, first.sha256)[-1]  # the one piece the newer version does not share
    assert last not in chunks_of(vault, second.sha256)
    flip_bit(vault.chunks_dir / last, 5)
    deep = vault.stats(deep=True)
    assert {(d.sha256, d.indexed, d.code) for d in deep.damaged} == {
        (first.sha256, True, VaultErrorCode.DAMAGED_CHUNK),
        (kept.sha256, False, VaultErrorCode.MISSING_CHUNK),
    }
    assert deep.unindexed_manifests == 1 and third.sha256 not in {d.sha256 for d in deep.damaged}


# --- (3) (6) (7) repair --------------------------------------------------------------------


def test_repair_rebuilds_a_deleted_index_from_the_manifests(
    three: tuple[Vault, list[IndexEntry], Path],
) -> None:
    vault, entries, claude = three
    os.unlink(vault.index_path)
    assert error_of(vault.entries).code is VaultErrorCode.DAMAGED_INDEX
    before = tree(vault)
    planned = repair(vault, dry_run=True)
    assert tree(vault) == before  # a dry run writes nothing
    assert planned.changed and planned.entries == 3 and planned.lines_read == 0
    located = {(Provider.CLAUDE, CLAUDE_ID): str(claude)}
    report = repair(vault, dry_run=False, locate=lambda p, s: located.get((p, s)))
    assert report.model_dump(exclude={"dry_run", "recovered"}) == planned.model_dump(
        exclude={"dry_run", "recovered"}
    )
    assert report.backup is None  # there was no index to keep
    rebuilt = {r.entry.sha256: r for r in report.recovered}
    assert rebuilt.keys() == {e.sha256 for e in entries}
    for original in entries:
        item = rebuilt[original.sha256]
        again = item.entry
        same = ("sha256", "bytes", "source_sha256", "record_count", "provider", "session_id")
        assert {f: getattr(again, f) for f in same} == {f: getattr(original, f) for f in same}
        assert again.strategy == RECOVERED_LABEL and again.is_bound
        assert item.sources["session_id"] is FieldSource.SNAPSHOT_RECORDS
        assert item.sources["ts"] is FieldSource.MANIFEST_MTIME
        assert item.sources["bytes"] is FieldSource.MANIFEST
    claude_item = rebuilt[entries[0].sha256]
    assert claude_item.entry.path == str(claude)
    assert claude_item.sources["path"] is FieldSource.DISCOVERED
    codex_item = rebuilt[entries[2].sha256]
    assert codex_item.entry.path == f"/unknown/{entries[2].sha256}.jsonl"
    assert codex_item.sources["path"] is FieldSource.PLACEHOLDER
    listed = vault.entries()
    assert sorted(e.sha256 for e in listed) == sorted(e.sha256 for e in entries)
    for entry in listed:
        vault.read_bytes(entry.sha256)
    assert vault.stats(deep=True).damaged == []
    assert not repair(vault, dry_run=False).changed  # a sound index: nothing to do


def test_repair_keeps_valid_lines_drops_bad_ones_and_cuts_a_torn_tail(
    three: tuple[Vault, list[IndexEntry], Path],
) -> None:
    vault, (first, second, third), claude = three
    old = vault.index_path.read_bytes()
    lines = old.splitlines(keepends=True)
    bad = bytearray(lines[0])
    bad[bad.index(b'"session_id":"') + 15] ^= 0x01  # a flipped bit in line 1's session id
    torn = second.model_copy(update={"ts": NOW + 9}).to_line()[:40]
    damaged = bytes(bad) + lines[1] + lines[2] + torn
    vault.index_path.write_bytes(damaged)
    os.utime(vault.manifests_dir / first.sha256, (NOW, NOW))  # written when the line was
    assert error_of(vault.entries).message == (
        f"index line 1 fails its checksum (snapshot {first.sha256[:12]})"
    )
    report = repair(vault, dry_run=False)
    assert (report.lines_read, report.kept_lines, report.torn_bytes) == (3, 2, 40)
    assert [(d.line, d.sha256) for d in report.dropped] == [(1, first.sha256)]
    assert "fails its checksum" in report.dropped[0].reason
    [item] = report.recovered
    # Line 1's session id is read back from the snapshot, its path from line 2 (same session).
    assert item.entry.session_id == CLAUDE_ID and item.entry.path == str(claude)
    assert item.sources["path"] is FieldSource.SESSION_LINE
    assert report.backup is not None and Path(report.backup).read_bytes() == damaged
    listed = vault.entries()
    assert [e.sha256 for e in listed] == [third.sha256, second.sha256, first.sha256]
    assert listed[:2] == [third, second]  # kept lines byte for byte, in order


def test_repair_binds_legacy_lines_as_they_read(
    three: tuple[Vault, list[IndexEntry], Path],
) -> None:
    vault, entries, _ = three
    legacy = [orjson.loads(line) for line in vault.index_path.read_bytes().splitlines()]
    for record in legacy:
        del record["line_sha256"]
    vault.index_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in legacy))
    assert vault.stats().unbound_entries == 3
    report = repair(vault, dry_run=False)
    assert (report.kept_lines, report.legacy_lines_bound, report.recovered) == (3, 3, [])
    assert vault.entries() == entries[::-1] and vault.stats().unbound_entries == 0


def test_repair_leaves_a_damaged_snapshot_out_and_its_files_in_place(
    three: tuple[Vault, list[IndexEntry], Path],
) -> None:
    vault, (first, second, third), _ = three
    manifest = vault.manifests_dir / third.sha256
    flip_bit(manifest, 10)
    assert error_of(vault.entries).code is VaultErrorCode.DAMAGED_MANIFEST
    report = repair(vault, dry_run=False)
    assert [(d.sha256, d.code) for d in report.damaged] == [
        (third.sha256, VaultErrorCode.DAMAGED_MANIFEST)
    ]
    assert [d.reason for d in report.dropped] == ["its snapshot is damaged"]
    assert vault.entries() == [second, first] and manifest.exists()
    # prune still refuses to run over a damaged manifest, even one nothing names
    assert error_of(lambda: prune(vault, 1, False)).code is VaultErrorCode.DAMAGED_MANIFEST


def test_repair_names_an_unknown_session_with_a_stand_in(vault: Vault, tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"not json\n{}\n")
    entry = vault.snapshot(plain, Provider.CODEX, "x-1", "manual", NOW)
    vault.index_path.write_bytes(b"")
    [item] = repair(vault, dry_run=False).recovered
    assert item.entry.session_id == f"unknown-{entry.sha256[:12]}"
    assert item.sources["session_id"] is FieldSource.PLACEHOLDER
    assert item.entry.path == f"/unknown/{entry.sha256}.jsonl" and item.entry.record_count == 2


def test_repair_of_a_vault_that_does_not_exist_does_nothing(vault: Vault) -> None:
    report = repair(vault, dry_run=False)
    assert not report.changed and not vault.root.exists()


# --- (15) manifests nothing names are pruned, receipts' ones kept ---------------------------


def _receipt(data: Path, snapshot: str) -> None:
    op = hashlib.sha256(snapshot.encode()).hexdigest()
    receipt = Receipt(
        operation_id=op, kind=OperationKind.APPLY, provider=Provider.CLAUDE, strategy="elide",
        source_path="/s.jsonl", source_session_id=CLAUDE_ID, path="/f.jsonl", session_id="f",
        source_sha256="a" * 64, output_sha256="b" * 64, snapshot_manifest_sha256=snapshot,
        bytes_before=2, bytes_after=1, reclaimed_bytes=1, completed=True, created_ts=NOW,
        resume_command="claude --resume f",
    )  # fmt: skip
    write_receipt(operations_dir(data) / f"{op}.json", receipt)


def test_an_interrupted_prune_leaves_orphans_the_next_prune_removes(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "a.jsonl"
    versions = []
    for version in range(4):
        source.write_bytes(os.urandom(2 * SMALL) + b"v%d\n" % version)
        versions.append(vault.snapshot(source, Provider.CLAUDE, "a", "manual", NOW + version))
    data = tmp_path / "data"
    _receipt(data, versions[1].sha256)  # an apply made from version 1: its undo needs it
    roots = receipt_roots(data)
    assert roots == {versions[1].sha256}

    def crash(directory: Path, names: list[str]) -> None:
        raise KeyboardInterrupt  # the prune is killed after rewriting the index

    monkeypatch.setattr(gobtui.adapters.vault.prune, "_unlink_all", crash)
    with pytest.raises(KeyboardInterrupt):
        prune(vault, keep=1, dry_run=False, extra_roots=roots)
    monkeypatch.undo()
    assert [e.sha256 for e in vault.entries()] == [versions[3].sha256]
    assert len(os.listdir(vault.manifests_dir)) == 4  # retired manifests nothing names
    planned = prune(vault, keep=1, dry_run=True, extra_roots=roots)
    assert (planned.dropped_entries, planned.manifests_removed, planned.orphan_manifests) == (
        0, 2, 2)  # fmt: skip
    retired = [versions[0].sha256, versions[2].sha256]
    only_theirs = {c for sha in retired for c in chunks_of(vault, sha)} - {
        c for sha in (versions[1].sha256, versions[3].sha256) for c in chunks_of(vault, sha)
    }
    assert planned.chunks_removed == len(only_theirs) > 0
    report = prune(vault, keep=1, dry_run=False, extra_roots=roots)
    assert report.model_dump(exclude={"dry_run"}) == planned.model_dump(exclude={"dry_run"})
    assert sorted(os.listdir(vault.manifests_dir)) == sorted(
        [versions[1].sha256, versions[3].sha256]
    )
    assert not only_theirs & set(os.listdir(vault.chunks_dir))
    assert vault.read_bytes(versions[1].sha256)  # the receipt's snapshot still reads back
    again = prune(vault, keep=1, dry_run=False, extra_roots=roots)
    assert (again.manifests_removed, again.chunks_removed) == (0, 0)
