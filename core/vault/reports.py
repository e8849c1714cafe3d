"""The shapes of the vault's answers (the --json outputs): diffs, recall, search, record pages,
prune, stats, restore and repair reports."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from ..edits import DigestBlock
from ..model import Provider
from .errors import VaultErrorCode
from .index import Frozen, IndexEntry

CONTENT_TRUST = "untrusted_archived_data"
"""Archived text is history to look at, never an instruction to follow."""

RECOVERED_LABEL = "recovered"
"""The label `vault --repair` gives an entry it rebuilt from a manifest (no line survived)."""
UNKNOWN_PATH_DIR = "/unknown"
"""A rebuilt entry whose transcript cannot be found is recorded as /unknown/<sha>.jsonl: a
valid absolute path (the index needs one) where no transcript lives, so an undo beside it
fails instead of writing into some real directory; the hex name cannot climb out of it."""


class SnapshotDiff(Frozen):
    a: str
    b: str
    records_a: int
    records_b: int
    added: list[str]
    """Record hashes b holds more often than a (most: not at all), in b's order, each once."""
    removed: list[str]
    """Record hashes a holds more often than b, in a's order, each once."""
    records_added: int = 0
    """Records of b beyond those a has (a multiset difference)."""
    records_removed: int = 0
    """Records of a beyond those b has."""
    unchanged: int
    """Records of b matched by one of a (a multiset intersection)."""
    types_a: dict[str, int]
    types_b: dict[str, int]


class RecallHit(Frozen):
    snapshot_sha256: str
    ts: float
    provider: Provider
    session_id: str
    path: str
    record_index: int
    hits: int
    card: DigestBlock


class RecallResult(Frozen):
    query: str | None
    snapshots_scanned: int
    cards_matched: int
    truncated: bool
    results: list[RecallHit]


class SearchMatch(Frozen):
    record_index: int
    record_sha256: str
    record_bytes: int
    match_count: int


class SearchResult(Frozen):
    """References to matching records; never their content (nor the query)."""

    snapshot_sha256: str
    source_sha256: str
    matches: list[SearchMatch]
    matched_records: int
    unsearchable_records: int
    """Lines that are not valid JSON: not searched, and said so."""
    truncated: bool


class RecordPage(Frozen):
    snapshot_sha256: str
    source_sha256: str
    record_index: int
    record_sha256: str
    record_bytes: int
    offset: int
    next_offset: int | None
    content: str
    content_trust: Literal["untrusted_archived_data"] = "untrusted_archived_data"


class PruneReport(Frozen):
    dry_run: bool
    keep: int
    streams: int
    """Distinct (provider, path, session) streams in the index."""
    kept_entries: int
    dropped_entries: int
    manifests_removed: int
    chunks_removed: int
    bytes_reclaimed: int
    temps_removed: int
    """Leftovers of interrupted writes (only ever found when no other command runs)."""
    orphan_manifests: int = 0
    """Of manifests_removed, those neither the index nor a receipt names (left by a prune that
    was interrupted after rewriting the index, or by a snapshot that failed to append)."""
    index_torn_bytes: int = 0
    """An interrupted append at the end of the index, cut off."""


class DamagedSnapshot(Frozen):
    sha256: str
    code: VaultErrorCode
    message: str
    indexed: bool
    """Named by the index (False: a manifest no index line names)."""


class VaultStats(Frozen):
    snapshots: int
    sessions: int
    manifests: int
    chunks: int
    stored_bytes: int
    """Chunk bytes on disk, each chunk once."""
    logical_bytes: int
    """What the distinct snapshots would take as plain copies."""
    index_bytes: int
    oldest_ts: float | None
    newest_ts: float | None
    index_torn_bytes: int = 0
    """An interrupted append at the end of the index, ignored (the next writer cuts it off)."""
    unbound_entries: int = 0
    """Index lines written before lines carried a checksum."""
    unindexed_manifests: int = 0
    """Manifests no index line names (receipt pins, or leftovers prune removes)."""
    verification: Literal["manifests", "chunks"] = "manifests"
    """What was checked: `manifests` (index lines checksummed, manifests hash-checked, chunks
    present with the right sizes; chunk bytes NOT re-hashed), or `chunks` (--deep: every
    chunk re-hashed and every snapshot's source digest recomputed, manifests no line names
    included)."""
    chunks_rehashed: int = 0
    damaged: list[DamagedSnapshot] = []
    """--deep: each snapshot that failed, with why (the rest of the vault was still checked)."""


class RestoreReport(Frozen):
    snapshot_sha256: str
    source_sha256: str
    bytes: int
    path: str


class FieldSource(StrEnum):
    """Where `vault --repair` took a field of an index entry from."""

    MANIFEST = "manifest"
    """sha256, bytes and source_sha256: the verified manifest itself."""
    SNAPSHOT_RECORDS = "snapshot_records"
    """session_id and provider as the snapshot's own records name them; record_count counted."""
    MANIFEST_MTIME = "manifest_mtime"
    """ts: when the manifest file was written (the first snapshot of those bytes)."""
    SESSION_LINE = "session_line"
    """path: the one path the valid lines of that session (and provider) record."""
    DISCOVERED = "discovered_session"
    """path: the transcript of that session id in the provider homes."""
    PLACEHOLDER = "placeholder"
    """Nothing tells: a stand-in (path /unknown/<sha>.jsonl, session id unknown-<sha>)."""
    LABEL = "label"
    """strategy: `recovered`, so the listing says the entry was rebuilt."""


class RecoveredEntry(Frozen):
    entry: IndexEntry
    sources: dict[str, FieldSource]
    """Every field of the entry but line_sha256, and where it came from."""


class DroppedLine(Frozen):
    line: int
    sha256: str | None
    """The snapshot the line names, when that much of it could be read."""
    reason: str


class RepairReport(Frozen):
    dry_run: bool
    changed: bool
    """Whether the index is (or, in a dry run, would be) rewritten."""
    lines_read: int
    kept_lines: int
    legacy_lines_bound: int
    """Kept lines that had no checksum and get one now (their fields as they read)."""
    dropped: list[DroppedLine]
    torn_bytes: int
    recovered: list[RecoveredEntry]
    """Snapshots no valid line named, given an entry rebuilt from their manifest and bytes."""
    damaged: list[DamagedSnapshot]
    """Snapshots that fail verification: left out of the index, their files left in place."""
    entries: int
    """Lines of the repaired index."""
    backup: str | None
    """Where the old index was kept (None when there was none, or nothing changed)."""
