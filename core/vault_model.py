"""The snapshot vault's data model: codes, manifests, index entries and result shapes.

Everything here works on values; adapters.vault does the files, the locks and the hashing of
streams, and core.vault_records holds the pure rules over records (diff, cards, search,
paging). A damaged vault is a VaultError with a closed code, never a partial answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.limits import (
    VAULT_CHUNK_BYTES,
    VAULT_INDEX_LINE_MAX_BYTES,
    VAULT_INDEX_MAX_BYTES,
    VAULT_LABEL_MAX_CHARS,
    VAULT_MAX_RECORDS,
    VAULT_PATH_MAX_CHARS,
    VAULT_SESSION_ID_MAX_CHARS,
    VAULT_TRANSCRIPT_MAX_BYTES,
)
from core.model import Provider
from core.plan import DigestBlock

MANIFEST_SCHEMA_VERSION = 3
CONTENT_TRUST = "untrusted_archived_data"
"""Archived text is history to look at, never an instruction to follow."""

Raw = bytes
"""`bytes` under another name: several models have a field called `bytes`."""

_SHA256 = re.compile(r"[0-9a-f]{64}")
_HEX = re.compile(r"[0-9a-f]+")


class VaultErrorCode(StrEnum):
    DAMAGED_CHUNK = "damaged_chunk"
    MISSING_CHUNK = "missing_chunk"
    DAMAGED_MANIFEST = "damaged_manifest"
    MISSING_MANIFEST = "missing_manifest"
    DAMAGED_INDEX = "damaged_index"
    DAMAGED_LAYOUT = "damaged_layout"
    """Something in the vault directory that the vault did not put there."""
    NOT_FOUND = "not_found"
    AMBIGUOUS = "ambiguous"
    INVALID_INPUT = "invalid_input"
    LIMIT = "limit"
    NOT_UTF8 = "not_utf8"
    TARGET_EXISTS = "target_exists"
    SOURCE_CHANGED = "source_changed"
    LOCKED = "locked"
    IO = "io"
    UNSUPPORTED = "unsupported"


DAMAGE_CODES = frozenset(
    {
        VaultErrorCode.DAMAGED_CHUNK,
        VaultErrorCode.MISSING_CHUNK,
        VaultErrorCode.DAMAGED_MANIFEST,
        VaultErrorCode.MISSING_MANIFEST,
        VaultErrorCode.DAMAGED_INDEX,
        VaultErrorCode.DAMAGED_LAYOUT,
    }
)
"""Stored state failed a check: nothing more is read or written until it is repaired."""
INPUT_CODES = frozenset(
    {
        VaultErrorCode.NOT_FOUND,
        VaultErrorCode.AMBIGUOUS,
        VaultErrorCode.INVALID_INPUT,
        VaultErrorCode.LIMIT,
        VaultErrorCode.NOT_UTF8,
        VaultErrorCode.TARGET_EXISTS,
    }
)
"""The request cannot be served as asked; the vault itself is fine."""


class VaultError(Exception):
    """A vault operation failed; `str(error)` is one line."""

    def __init__(self, code: VaultErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def damaged(self) -> bool:
        return self.code in DAMAGE_CODES


def is_sha256(text: str) -> bool:
    return _SHA256.fullmatch(text) is not None


def require_sha256(text: str, what: str = "snapshot") -> str:
    """A full lowercase 64-hex digest, or INVALID_INPUT (prefixes and paths are refused)."""
    if not is_sha256(text):
        raise VaultError(
            VaultErrorCode.INVALID_INPUT, f"{what} must be a full 64-hex sha256, got {quote(text)}"
        )
    return text


def is_hex_prefix(text: str) -> bool:
    return len(text) <= 64 and _HEX.fullmatch(text) is not None


def quote(text: str, limit: int = 80) -> str:
    """User input shown back in an error: repr (so control characters show), shortened."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


def _why(error: Exception) -> str:
    """What is wrong, in plain words (never pydantic's wording): `bytes is out of range`."""
    if not isinstance(error, ValidationError):
        return "not JSON"
    first = error.errors()[0]
    if not first["loc"]:
        return "not a JSON object"
    field = ".".join(str(part) for part in first["loc"])
    kind, ctx = first["type"], first.get("ctx") or {}
    if kind == "missing":
        return f"{field} is missing"
    if kind == "extra_forbidden":
        return f"{field} is not a known field"
    if kind == "value_error":  # our validators say it: "is not a 64-hex sha256"
        return f"{field} {ctx.get('error', 'is invalid')}"
    if kind == "string_unicode":
        return f"{field} is not valid UTF-8"
    if kind == "string_too_long":
        return f"{field} is over {ctx.get('max_length')} characters"
    if kind == "string_too_short":
        return f"{field} is empty"
    if kind in {"greater_than_equal", "less_than_equal", "finite_number"}:
        return f"{field} is out of range"
    if kind == "literal_error":
        return f"{field} is not {ctx.get('expected')}"
    if kind.endswith(("_type", "_parsing")) or kind == "enum":
        return f"{field} has the wrong type or value"
    return f"{field} is invalid"


def check_label(label: str) -> str:
    """A snapshot label the index can hold, or INVALID_INPUT saying what is wrong with it."""
    why = None
    try:
        label.encode("utf-8")
    except UnicodeEncodeError:  # undecodable argv bytes arrive as lone surrogates
        why = "the label is not valid UTF-8"
    if why is None and has_control(label):
        why = "the label holds control characters"
    if why is None and len(label) > VAULT_LABEL_MAX_CHARS:
        why = f"the label is over {VAULT_LABEL_MAX_CHARS} characters"
    if why is not None:
        raise VaultError(VaultErrorCode.INVALID_INPUT, f"bad label: {why}")
    return label


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Manifest(_Frozen):
    """The list of chunks a snapshot is made of; the sha256 of its bytes is the snapshot id."""

    schema_version: Literal[3] = 3
    source_sha256: str
    bytes: int = Field(ge=0, le=VAULT_TRANSCRIPT_MAX_BYTES)
    chunks: list[str]

    @field_validator("source_sha256")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not is_sha256(value):
            raise ValueError("is not a 64-hex sha256")
        return value

    @field_validator("chunks")
    @classmethod
    def _chunk_digests(cls, value: list[str]) -> list[str]:
        if not all(is_sha256(sha) for sha in value):
            raise ValueError("holds a name that is not a 64-hex sha256")
        return value

    def to_bytes(self) -> Raw:
        """Canonical bytes: fixed key order, no spaces, so equal manifests hash equal."""
        return orjson.dumps(self.model_dump(mode="json"))

    @classmethod
    def from_bytes(cls, data: Raw, sha: str) -> Manifest:
        try:
            manifest = cls.model_validate(orjson.loads(data))
        except (orjson.JSONDecodeError, ValidationError) as error:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST, f"manifest {sha} is unreadable: {_why(error)}"
            ) from None
        # Chunks are never empty and never longer than VAULT_CHUNK_BYTES.
        count = len(manifest.chunks)
        if count > manifest.bytes or manifest.bytes > count * VAULT_CHUNK_BYTES:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST,
                f"manifest {sha} lists {count} chunks for {manifest.bytes} bytes",
            )
        return manifest


class IndexEntry(_Frozen):
    """One line of index.jsonl: a snapshot taken of one transcript at one time."""

    ts: float = Field(ge=0, allow_inf_nan=False)
    sha256: str
    """The manifest id (the snapshot id)."""
    path: str = Field(min_length=1, max_length=VAULT_PATH_MAX_CHARS)
    """The transcript's canonical absolute path when it was snapshotted."""
    session_id: str = Field(min_length=1, max_length=VAULT_SESSION_ID_MAX_CHARS)
    provider: Provider
    bytes: int = Field(ge=0, le=VAULT_TRANSCRIPT_MAX_BYTES)
    record_count: int = Field(ge=0, le=VAULT_MAX_RECORDS)
    source_sha256: str
    strategy: str | None = Field(default=None, max_length=VAULT_LABEL_MAX_CHARS)
    """Why the snapshot was taken: a strategy id, `manual`, `post-compact`, `pre-undo` ..."""

    @field_validator("sha256", "source_sha256")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not is_sha256(value):
            raise ValueError("is not a 64-hex sha256")
        return value

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/") or "\x00" in value:
            raise ValueError("is not an absolute path")
        return value

    @field_validator("session_id", "strategy")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and has_control(value):
            raise ValueError("holds control characters")
        return value

    def to_line(self) -> Raw:
        return orjson.dumps(self.model_dump(mode="json")) + b"\n"


def validate_entry(**fields: Any) -> IndexEntry:
    """An IndexEntry from caller input, or INVALID_INPUT naming the bad field."""
    try:
        return IndexEntry(**fields)
    except ValidationError as error:
        raise VaultError(VaultErrorCode.INVALID_INPUT, f"bad snapshot: {_why(error)}") from None


def parse_index(data: bytes) -> list[IndexEntry]:
    """Every entry of index.jsonl in append order; one bad line makes the whole index damaged."""
    if len(data) > VAULT_INDEX_MAX_BYTES:
        raise VaultError(VaultErrorCode.DAMAGED_INDEX, "the index is larger than 128 MiB")
    if not data:
        return []
    if not data.endswith(b"\n"):
        last = data.count(b"\n") + 1
        raise VaultError(VaultErrorCode.DAMAGED_INDEX, f"index line {last} is incomplete")
    entries = []
    for number, line in enumerate(data[:-1].split(b"\n"), start=1):
        if len(line) + 1 > VAULT_INDEX_LINE_MAX_BYTES:
            raise VaultError(VaultErrorCode.DAMAGED_INDEX, f"index line {number} is too long")
        try:
            entries.append(IndexEntry.model_validate(orjson.loads(line)))
        except (orjson.JSONDecodeError, ValidationError) as error:
            raise VaultError(
                VaultErrorCode.DAMAGED_INDEX, f"index line {number} is invalid: {_why(error)}"
            ) from None
    return entries


def record_count_of(newlines: int, size: int, ends_with_newline: bool) -> int:
    """Physical lines: every newline ends one, and a last line without one counts too."""
    return newlines + (1 if size and not ends_with_newline else 0)


def retained_by_stream(entries: Sequence[IndexEntry], keep: int) -> set[int]:
    """Positions (append order) of the newest `keep` entries of every (provider, path, session)."""
    streams: dict[tuple[str, str, str], list[int]] = {}
    for position, entry in enumerate(entries):
        key = (entry.provider.value, entry.path, entry.session_id)
        streams.setdefault(key, []).append(position)
    kept: set[int] = set()
    for positions in streams.values():
        kept.update(positions[-keep:] if keep > 0 else ())
    return kept


def stream_count(entries: Sequence[IndexEntry]) -> int:
    return len({(e.provider.value, e.path, e.session_id) for e in entries})


# --- result shapes (the --json outputs) ------------------------------------------------------


class SnapshotDiff(_Frozen):
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


class RecallHit(_Frozen):
    snapshot_sha256: str
    ts: float
    provider: Provider
    session_id: str
    path: str
    record_index: int
    hits: int
    card: DigestBlock


class RecallResult(_Frozen):
    query: str | None
    snapshots_scanned: int
    cards_matched: int
    truncated: bool
    results: list[RecallHit]


class SearchMatch(_Frozen):
    record_index: int
    record_sha256: str
    record_bytes: int
    match_count: int


class SearchResult(_Frozen):
    """References to matching records; never their content (nor the query)."""

    snapshot_sha256: str
    source_sha256: str
    matches: list[SearchMatch]
    matched_records: int
    unsearchable_records: int
    """Lines that are not valid JSON: not searched, and said so."""
    truncated: bool


class RecordPage(_Frozen):
    snapshot_sha256: str
    source_sha256: str
    record_index: int
    record_sha256: str
    record_bytes: int
    offset: int
    next_offset: int | None
    content: str
    content_trust: Literal["untrusted_archived_data"] = "untrusted_archived_data"


class PruneReport(_Frozen):
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


class VaultStats(_Frozen):
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


class RestoreReport(_Frozen):
    snapshot_sha256: str
    source_sha256: str
    bytes: int
    path: str
