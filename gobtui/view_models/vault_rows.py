"""What the vault screens show of snapshots and records, computed without Textual.

The record browser keeps one small RecordRow per record (index, type, size, hash prefix and
a one-line preview of at most PREVIEW_MAX_CHARS), never the record itself, so a 100 MB
snapshot costs a few MB of rows; a record's content is read whole, on request, by the viewer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import orjson

from gobtui.adapters.providers.registry import record_type
from gobtui.adapters.vault.vault import Vault
from gobtui.core.sanitize import one_line
from gobtui.core.vault.errors import VaultError, VaultErrorCode
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import SnapshotDiff
from gobtui.view_models import format as fmt
from gobtui.view_models.vault_text import preview, preview_of

HASH_PREFIX_CHARS = 12


@dataclass(frozen=True, slots=True)
class RecordRow:
    index: int
    kind: str
    size: int
    sha256_prefix: str
    preview: str = ""
    """Who and the start of what (vault_text.preview): already safe to show."""


def record_row(index: int, line: bytes, digest: str | None = None) -> RecordRow:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        kind, shown = "unparsed", preview(line)
    else:
        kind, shown = one_line(record_type(value)), preview_of(value)
    digest = digest or hashlib.sha256(line).hexdigest()
    return RecordRow(index, kind, len(line), digest[:HASH_PREFIX_CHARS], shown)


def scan_records(
    vault: Vault,
    sha: str,
    *,
    progress: Callable[[int], None] | None = None,
    every: int = 1,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[RecordRow] | None:
    """Every record's row, streamed from the verified snapshot; None when cancelled.

    A damaged snapshot raises VaultError, possibly after many rows: the caller shows rows
    only once this returns, so a damaged snapshot never shows a partial list.
    """
    rows: list[RecordRow] = []
    records = vault.iter_records(sha)
    try:
        for index, line in records:
            rows.append(record_row(index, line))
            if len(rows) % every == 0:
                if cancelled():
                    return None
                if progress is not None:
                    progress(len(rows))
    finally:
        close = getattr(records, "close", None)  # a generator stopped early releases the lock
        if close is not None:
            close()
    return rows


def age(now: float, ts: float) -> str:
    """`3m ago` against the app's clock (a snapshot from the future reads `0s ago`)."""
    return f"{fmt.duration(now - ts)} ago"


def project_of(entry: IndexEntry, projects: Mapping[str, str]) -> str | None:
    """The board's project name for the snapshot's file or session, when the board knows it."""
    return projects.get(entry.path) or projects.get(entry.session_id)


def entry_matches(entry: IndexEntry, text: str, project: str | None) -> bool:
    """Case-insensitive match of the filter text on project, session, label, provider, path
    and snapshot id."""
    needle = text.strip().casefold()
    if not needle:
        return True
    fields = (
        project or "",
        entry.session_id,
        entry.strategy or "",
        entry.provider.value,
        entry.path,
        entry.sha256,
    )
    return any(needle in value.casefold() for value in fields)


def diff_order(marked: Iterable[int], entries: list[IndexEntry]) -> tuple[IndexEntry, IndexEntry]:
    """The two marked positions (of the newest-first list) as (older, newer)."""
    first, second = sorted(marked, reverse=True)  # a larger position is an older snapshot
    return entries[first], entries[second]


@dataclass(frozen=True, slots=True)
class TypeCount:
    kind: str
    a: int
    b: int

    @property
    def delta(self) -> int:
        return self.b - self.a


def type_counts(diff: SnapshotDiff) -> list[TypeCount]:
    """Per record type, the count in each snapshot; changed types first, then by name."""
    kinds = sorted(set(diff.types_a) | set(diff.types_b))
    rows = [TypeCount(k, diff.types_a.get(k, 0), diff.types_b.get(k, 0)) for k in kinds]
    return sorted(rows, key=lambda row: (row.delta == 0, row.kind))


def read_whole(vault: Vault, sha: str, record: int, max_bytes: int) -> bytes | None:
    """Record `record` of the verified snapshot, whole; None when it is over `max_bytes`
    (the caller pages it with read_record instead). The snapshot is read to its end, so its
    source digest is checked before anything of it is shown."""
    wanted: bytes | None = None
    found = False
    total = 0
    for index, line in _records(vault, sha, lambda: False):
        total = index + 1
        if index == record:
            found, wanted = True, line if len(line) <= max_bytes else None
    if not found:
        raise VaultError(
            VaultErrorCode.NOT_FOUND,
            f"record {record} is out of range: snapshot {sha[:12]} has {total} records",
        )
    if wanted is not None:
        try:
            wanted.decode("utf-8")
        except UnicodeDecodeError:
            raise VaultError(
                VaultErrorCode.NOT_UTF8, f"record {record} is not valid UTF-8"
            ) from None
    return wanted


@dataclass(frozen=True, slots=True)
class ChangedRecords:
    """The records a diff counts as added (rows of b) and removed (rows of a)."""

    added: list[RecordRow]
    removed: list[RecordRow]
    added_total: int
    removed_total: int


def rows_at(vault: Vault, sha: str, numbers: set[int]) -> dict[int, RecordRow]:
    """The rows of the records numbered so (1-based, as core.fork_changes numbers them)."""
    found: dict[int, RecordRow] = {}
    if not numbers:
        return found
    for index, line in vault.iter_records(sha):
        if index + 1 in numbers:
            found[index + 1] = record_row(index, line)
    return found


def changed_records(
    vault: Vault,
    diff: SnapshotDiff,
    *,
    limit: int,
    cancelled: Callable[[], bool] = lambda: False,
) -> ChangedRecords | None:
    """The rows of the records behind a diff's counts (the first `limit` of each side), or
    None when cancelled. A hash b holds more often than a: its occurrences in b past a's
    count are the added records (and the other way round for removed), as the diff counts."""
    added, removed = set(diff.added), set(diff.removed)
    seen_a: dict[str, int] = {}
    candidates: list[tuple[int, RecordRow, str]] = []  # (occurrence in a, row, hash)
    for index, line in _records(vault, diff.a, cancelled):
        digest = hashlib.sha256(line).hexdigest()
        if digest in added or digest in removed:
            seen_a[digest] = seen_a.get(digest, 0) + 1
            if digest in removed:
                candidates.append((seen_a[digest], record_row(index, line, digest), digest))
    if cancelled():
        return None
    seen_b: dict[str, int] = {}
    rows_b: list[RecordRow] = []
    added_total = 0
    for index, line in _records(vault, diff.b, cancelled):
        digest = hashlib.sha256(line).hexdigest()
        if digest in added or digest in removed:
            seen_b[digest] = seen_b.get(digest, 0) + 1
            if digest in added and seen_b[digest] > seen_a.get(digest, 0):
                added_total += 1
                if len(rows_b) < limit:
                    rows_b.append(record_row(index, line, digest))
    if cancelled():
        return None
    gone = [row for seen, row, digest in candidates if seen > seen_b.get(digest, 0)]
    return ChangedRecords(rows_b, gone[:limit], added_total, len(gone))


def _records(vault: Vault, sha: str, cancelled: Callable[[], bool]) -> Iterable[tuple[int, bytes]]:
    records = vault.iter_records(sha)
    try:
        for item in records:
            if cancelled():
                return
            yield item
    finally:
        close = getattr(records, "close", None)
        if close is not None:
            close()
