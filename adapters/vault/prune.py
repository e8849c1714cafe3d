"""`prune` and `repair`: the two commands that rewrite the index, under the exclusive lock.

prune keeps the newest snapshots of every stream and deletes what nothing needs any more.
No snapshot or reader is in flight meanwhile. Every manifest is verified (all its chunks
re-hashed) before anything is deleted; the index is rewritten first (retained lines byte for
byte, in order), then manifests, then chunks are unlinked, so a crash part way leaves only
unreferenced files behind, never a reference to a deleted one, and the next prune removes
those (manifests neither the index nor a receipt names, and the chunks only they name).

repair rebuilds a usable index from the manifests: every snapshot that verifies in full gets
a line, from a surviving valid line when there is one, else rebuilt from the manifest and the
snapshot's own records; damaged snapshots are reported and left out, their files in place.
The old index is kept beside the new one.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

import orjson

from ...core.limits import VAULT_INDEX_MAX_BYTES, VAULT_PRUNE_KEEP_DEFAULT, VAULT_PRUNE_KEEP_MAX
from ...core.model import Provider
from ...core.vault.errors import VaultError, VaultErrorCode, require_sha256
from ...core.vault.index import IndexEntry, Manifest, scan_index, validate_entry
from ...core.vault.reports import (
    RECOVERED_LABEL,
    UNKNOWN_PATH_DIR,
    DamagedSnapshot,
    DroppedLine,
    FieldSource,
    PruneReport,
    RecoveredEntry,
    RepairReport,
)
from ...core.vault.streams import retained_by_stream, stream_count
from ..files.atomic import fsync_dir, write_all
from ..providers.registry import IdentityScan
from . import fs
from .reader import VaultReader
from .vault import Locate, Vault


def prune(
    vault: Vault,
    keep: int = VAULT_PRUNE_KEEP_DEFAULT,
    dry_run: bool = True,
    extra_roots: Iterable[str] = (),
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
        view = reader.index_view()  # a damaged, deleted or emptied index stops us here
        original = reader.index_bytes()[: view.intact]
        entries = view.entries
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
        # Manifests nothing names: retired by a prune that stopped after rewriting the
        # index, or stored by a snapshot whose append failed. With the lock held exclusively
        # no snapshot is between storing its manifest and appending its line, so nothing is
        # about to name them; a receipt's snapshot is a root and stays.
        orphans = manifests.keys() - {e.sha256 for e in entries} - pinned
        remove_manifests = sorted((dropped & manifests.keys()) | orphans)
        removing = set(remove_manifests)
        needed: set[str] = set()
        # Every manifest is checked, retired ones and orphans too: a damaged vault is never
        # pruned, and a chunk is removed only once no surviving manifest names it.
        for sha in sorted(manifests):
            manifest = reader.manifest(sha)
            for _ in reader.chunks(sha, manifest):
                pass
            if sha not in removing:
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
            orphan_manifests=len(orphans),
            index_torn_bytes=view.torn,
        )
        if dry_run:
            return report
        if len(kept) < len(entries) or view.torn:
            lines = original[:-1].split(b"\n") if original else []
            _replace_index(vault, [line + b"\n" for i, line in enumerate(lines) if i in kept])
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


def _replace_index(vault: Vault, lines: list[bytes]) -> None:
    """A new index with `lines`, in one rename (readers see the old one or the new one)."""
    fd, temp = fs.create_temp(vault.tmp_dir, "index")
    try:
        try:
            for line in lines:
                write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, vault.index_path)
    finally:
        fs.unlink_quietly(temp)
    fsync_dir(vault.root)


def _unlink_all(directory: Path, names: list[str]) -> None:
    if not names:
        return
    for name in names:
        fs.unlink_quietly(directory / name)
    fsync_dir(directory)


# --- repair ----------------------------------------------------------------------------------


def repair(vault: Vault, *, dry_run: bool = True, locate: Locate | None = None) -> RepairReport:
    """Rebuild index.jsonl from the manifests, losing no snapshot that still reads back.

    Lines that are valid, bound or legacy, and agree with a sound manifest are kept, in
    order, and bound. A sound manifest no such line names gets a rebuilt entry: sha256,
    bytes and source digest from the manifest; provider and session id from the snapshot's
    records; record count counted; ts from the manifest file's time; the path from
    `locate` (the session in the homes), else a stand-in under /unknown. A dry run reports
    the same and writes nothing; so does a run that would change nothing.
    """
    with vault.reading(exclusive=True) as reader:
        if not reader.exists:
            return _nothing(dry_run)
        data = _raw_index(vault)
        lines, torn = scan_index(data or b"")
        manifests = fs.hex_names(vault.manifests_dir)
        valid = {item.sha256 for _, _, item in lines if isinstance(item, IndexEntry)}
        sound: dict[str, Manifest] = {}
        found: dict[str, tuple[tuple[Provider, str] | None, int]] = {}
        damaged: list[DamagedSnapshot] = []
        for sha in sorted(manifests):
            try:
                sound[sha] = reader.read_manifest(sha)
                if sha in valid:
                    for _ in reader.chunks(sha, sound[sha]):
                        pass
                else:
                    found[sha] = _identity(reader, sha, sound[sha])
            except VaultError as error:
                if not error.damaged:
                    raise
                sound.pop(sha, None)
                damaged.append(
                    DamagedSnapshot(
                        sha256=sha, code=error.code, message=error.message, indexed=sha in valid
                    )
                )
        kept, dropped = _kept_lines(lines, sound, {d.sha256 for d in damaged})
        named = {entry.sha256 for entry in kept}
        paths: dict[tuple[Provider, str], set[str]] = {}
        for entry in kept:
            paths.setdefault((entry.provider, entry.session_id), set()).add(entry.path)
        recovered = []
        for sha in sorted(sound.keys() - named):
            identity, records = found.get(sha) or _identity(reader, sha, sound[sha])
            recorded = paths.get(identity, set()) if identity is not None else set()
            known = next(iter(recorded)) if len(recorded) == 1 else None
            recovered.append(_rebuilt(vault, sha, sound[sha], identity, records, known, locate))
        final = _merged(kept, [r.entry for r in recovered])
        new_data = b"".join(entry.to_line() for entry in final)
        changed = new_data != (data or b"")
        backup = None
        if changed and not dry_run:
            backup = _keep_old(vault, data)
            _replace_index(vault, [entry.to_line() for entry in final])
            if final:
                fs.unlink_quietly(vault.never_indexed_path)
                fsync_dir(vault.root)
        return RepairReport(
            dry_run=dry_run,
            changed=changed,
            lines_read=len(lines),
            kept_lines=len(kept),
            legacy_lines_bound=sum(1 for entry in kept if not entry.is_bound),
            dropped=dropped,
            torn_bytes=torn,
            recovered=recovered,
            damaged=damaged,
            entries=len(final),
            backup=str(backup) if backup is not None else None,
        )


def _nothing(dry_run: bool) -> RepairReport:
    return RepairReport(
        dry_run=dry_run, changed=False, lines_read=0, kept_lines=0, legacy_lines_bound=0,
        dropped=[], torn_bytes=0, recovered=[], damaged=[], entries=0, backup=None,
    )  # fmt: skip


def _raw_index(vault: Vault) -> bytes | None:
    """The index as it is, damaged or not; None when there is none."""
    try:
        return fs.read_small(vault.index_path, VAULT_INDEX_MAX_BYTES)
    except FileNotFoundError:
        return None
    except fs.NotRegular:
        raise VaultError(
            VaultErrorCode.DAMAGED_LAYOUT,
            f"{vault.index_path} is not a plain file; move it away, then repair",
        ) from None


def _kept_lines(
    lines: list[tuple[int, bytes, IndexEntry | VaultError]],
    sound: dict[str, Manifest],
    damaged: set[str],
) -> tuple[list[IndexEntry], list[DroppedLine]]:
    kept: list[IndexEntry] = []
    dropped: list[DroppedLine] = []
    for number, raw, item in lines:
        if isinstance(item, VaultError):
            dropped.append(DroppedLine(line=number, sha256=_named_sha(raw), reason=item.message))
            continue
        manifest = sound.get(item.sha256)
        why = (
            "its snapshot is damaged" if item.sha256 in damaged
            else "its manifest is missing" if manifest is None
            else "its bytes differ from the manifest's" if item.bytes != manifest.bytes
            else "its source digest differs from the manifest's"
            if item.source_sha256 != manifest.source_sha256
            else None
        )  # fmt: skip
        if why is None:
            kept.append(item)
        else:
            dropped.append(DroppedLine(line=number, sha256=item.sha256, reason=why))
    return kept, dropped


def _named_sha(raw: bytes) -> str | None:
    """The snapshot a damaged line still names, when its sha256 field reads as one."""
    try:
        value = orjson.loads(raw).get("sha256")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) and len(value) == 64 else None


def _identity(
    reader: VaultReader, sha: str, manifest: Manifest
) -> tuple[tuple[Provider, str] | None, int]:
    """(provider and session id the records name, physical record count), the whole snapshot
    verified on the way."""
    scan = IdentityScan()
    count = 0
    for _, line in reader.records(sha, manifest):
        count += 1
        if scan.found is None:
            with suppress(orjson.JSONDecodeError):  # a line that is not JSON tells nothing
                scan.feed(orjson.loads(line))
    return scan.identity, count


def _rebuilt(
    vault: Vault,
    sha: str,
    manifest: Manifest,
    identity: tuple[Provider, str] | None,
    records: int,
    recorded_path: str | None,
    locate: Locate | None,
) -> RecoveredEntry:
    """An entry for a sound manifest no valid line names, saying where each field came from.

    The path is the one the session's surviving lines record, else the session's file in the
    homes (`locate`), else a stand-in that names no directory.
    """
    stand_in = f"unknown-{sha[:12]}"
    provider, session_id = identity if identity is not None else (Provider.CLAUDE, stand_in)
    fields = {
        "ts": os.lstat(vault.manifests_dir / sha).st_mtime,
        "sha256": sha,
        "path": f"{UNKNOWN_PATH_DIR}/{sha}.jsonl",
        "session_id": session_id,
        "provider": provider,
        "bytes": manifest.bytes,
        "record_count": records,
        "source_sha256": manifest.source_sha256,
        "strategy": RECOVERED_LABEL,
    }
    told = identity is not None
    try:
        entry = validate_entry(**fields)
    except VaultError:  # the records name an id the index cannot hold
        told = False
        entry = validate_entry(**(fields | {"session_id": stand_in}))
    where = FieldSource.PLACEHOLDER
    if told:
        path, where = recorded_path, FieldSource.SESSION_LINE
        if path is None and locate is not None:
            path, where = locate(provider, session_id), FieldSource.DISCOVERED
        try:
            if path is None:
                raise VaultError(VaultErrorCode.NOT_FOUND, "no path")
            entry = validate_entry(**(entry.model_dump() | {"path": path}))
        except VaultError:  # none found, or one the index cannot hold: keep the stand-in
            where = FieldSource.PLACEHOLDER
    who = FieldSource.SNAPSHOT_RECORDS if told else FieldSource.PLACEHOLDER
    sources = {
        "ts": FieldSource.MANIFEST_MTIME,
        "sha256": FieldSource.MANIFEST,
        "path": where,
        "session_id": who,
        "provider": who,
        "bytes": FieldSource.MANIFEST,
        "record_count": FieldSource.SNAPSHOT_RECORDS,
        "source_sha256": FieldSource.MANIFEST,
        "strategy": FieldSource.LABEL,
    }
    return RecoveredEntry(entry=entry.bound(), sources=sources)


def _merged(kept: list[IndexEntry], rebuilt: list[IndexEntry]) -> list[IndexEntry]:
    """Kept lines in their order, each rebuilt entry before the first kept one newer than it
    (append order is what prune's retention goes by)."""
    out: list[IndexEntry] = []
    pending = sorted(rebuilt, key=lambda entry: entry.ts)
    for entry in kept:
        while pending and pending[0].ts < entry.ts:
            out.append(pending.pop(0))
        out.append(entry)
    return out + pending


def _keep_old(vault: Vault, data: bytes | None) -> Path | None:
    """The old index, saved beside the new one under a name from its digest (never replaced)."""
    if not data:
        return None
    name = f"index.jsonl.{hashlib.sha256(data).hexdigest()[:16]}.before-repair"
    fs.store_new(vault.root / name, (data,), vault.tmp_dir)
    return vault.root / name
