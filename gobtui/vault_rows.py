"""What the vault screens show of snapshots and records, computed without Textual.

The record browser keeps one small RecordRow per record (index, type, size, hash prefix),
never the record itself, so a 100 MB snapshot costs a few MB of rows; content is read a page
at a time, on request, by the viewer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import orjson

from gobtui import format as fmt
from gobtui.adapters.vault.vault import Vault
from gobtui.core.model import Provider
from gobtui.core.vault_model import IndexEntry, SnapshotDiff
from gobtui.core.vault_records import record_type

HASH_PREFIX_CHARS = 12
PROVIDER_MARKS = {Provider.CLAUDE: "C", Provider.CODEX: "X"}
"""The board's provider letters (Claude Code, Codex)."""


@dataclass(frozen=True, slots=True)
class RecordRow:
    index: int
    kind: str
    size: int
    sha256_prefix: str


def record_row(index: int, line: bytes) -> RecordRow:
    try:
        kind = record_type(orjson.loads(line))
    except orjson.JSONDecodeError:
        kind = "unparsed"
    digest = hashlib.sha256(line).hexdigest()[:HASH_PREFIX_CHARS]
    return RecordRow(index, kind, len(line), digest)


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
