"""`prune`: keep the newest snapshots of every stream, delete what nothing needs any more.

Runs under the exclusive vault lock, so no snapshot or reader is in flight. Every manifest is
verified (all its chunks re-hashed) before anything is deleted; the index is rewritten first
(retained lines byte for byte, in order), then manifests, then chunks are unlinked, so a crash
part way leaves only unreferenced files behind, never a reference to a deleted one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from adapters import vault_fs as fs
from core.limits import VAULT_PRUNE_KEEP_MAX
from core.vault_model import (
    PruneReport,
    VaultError,
    VaultErrorCode,
    require_sha256,
    retained_by_stream,
    stream_count,
)

if TYPE_CHECKING:
    from adapters.vault import Vault


def prune(
    vault: Vault, keep: int, *, dry_run: bool, extra_roots: Iterable[str] = ()
) -> PruneReport:
    """Keep the newest `keep` snapshots per (provider, path, session) stream.

    `extra_roots` are snapshot ids that must survive whatever the index says (e.g. pinned by
    a publication receipt). A dry run computes the same report and changes nothing.
    """
    if not 1 <= keep <= VAULT_PRUNE_KEEP_MAX:
        raise VaultError(
            VaultErrorCode.INVALID_INPUT, f"--keep must be 1..{VAULT_PRUNE_KEEP_MAX}, got {keep}"
        )
    pinned = {require_sha256(sha, "pinned snapshot") for sha in extra_roots}
    with vault.reading(exclusive=True) as reader:
        if not reader.exists:
            return _empty(keep, dry_run)
        original = reader.index_bytes()
        entries = reader.entries_in_order()
        kept = retained_by_stream(entries, keep)
        roots = {entries[i].sha256 for i in kept} | pinned
        manifests = fs.hex_names(vault.manifests_dir)
        chunks = fs.hex_names(vault.chunks_dir)
        temps = _temps(vault.tmp_dir)
        # Every entry, kept or dropped, must name a sound manifest: a dangling or edited
        # entry is damage to report, not garbage to drop (that would hide the evidence).
        reader.check_manifests(entries)
        for sha in sorted(pinned - manifests.keys()):
            reader.manifest(sha)  # raises: not found (a pin with no snapshot)
        dropped = {e.sha256 for i, e in enumerate(entries) if i not in kept} - roots
        remove_manifests = sorted(dropped & manifests.keys())
        needed: set[str] = set()
        # Every manifest is checked, retired ones and orphans too: a damaged vault is never
        # pruned. Orphan manifests (from an interrupted snapshot) are kept with their chunks.
        for sha in sorted(manifests):
            manifest = reader.manifest(sha)
            for _ in reader.chunks(sha, manifest):
                pass
            if sha not in dropped:
                needed.update(manifest.chunks)
        remove_chunks = sorted(chunks.keys() - needed)
        report = PruneReport(
            dry_run=dry_run,
            keep=keep,
            streams=stream_count(entries),
            kept_entries=len(kept),
            dropped_entries=len(entries) - len(kept),
            manifests_removed=len(remove_manifests),
            chunks_removed=len(remove_chunks),
            bytes_reclaimed=sum(chunks[sha] for sha in remove_chunks),
            temps_removed=len(temps),
        )
        if dry_run:
            return report
        if len(kept) < len(entries):
            _rewrite_index(vault, original, kept)
        _unlink_all(vault.manifests_dir, remove_manifests)
        _unlink_all(vault.chunks_dir, remove_chunks)
        for temp in temps:
            fs.unlink_quietly(temp)
        return report


def _empty(keep: int, dry_run: bool) -> PruneReport:
    return PruneReport(
        dry_run=dry_run, keep=keep, streams=0, kept_entries=0, dropped_entries=0,
        manifests_removed=0, chunks_removed=0, bytes_reclaimed=0, temps_removed=0,
    )  # fmt: skip


def _temps(directory: Path) -> list[Path]:
    """Temporary files left by interrupted writes (nothing else runs while prune holds the lock)."""
    if not fs.is_real_dir(directory):
        return []
    found = []
    with os.scandir(directory) as listing:
        for entry in listing:
            if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                raise VaultError(
                    VaultErrorCode.DAMAGED_LAYOUT, f"unexpected {entry.path} in the vault"
                )
            found.append(Path(entry.path))
    return found


def _rewrite_index(vault: Vault, original: bytes, kept: set[int]) -> None:
    lines = original[:-1].split(b"\n") if original else []
    retained = [line + b"\n" for position, line in enumerate(lines) if position in kept]
    fd, temp = fs.create_temp(vault.tmp_dir, "index")
    try:
        try:
            for line in retained:
                fs.write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, vault.index_path)
    finally:
        fs.unlink_quietly(temp)
    fs.fsync_dir(vault.root)


def _unlink_all(directory: Path, names: list[str]) -> None:
    if not names:
        return
    for name in names:
        fs.unlink_quietly(directory / name)
    fs.fsync_dir(directory)
