"""The snapshot vault's data model: codes, manifests, index entries and result shapes.

Everything here works on values; adapters.vault.vault does the files, the locks and the hashing of
streams, and core.vault_records holds the pure rules over records (diff, cards, search,
paging). A damaged vault is a VaultError with a closed code, never a partial answer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..edits import DigestBlock
from ..limits import (
    VAULT_CHUNK_BYTES,
    VAULT_INDEX_LINE_MAX_BYTES,
    VAULT_INDEX_MAX_BYTES,
    VAULT_LABEL_MAX_CHARS,
    VAULT_MAX_RECORDS,
    VAULT_PATH_MAX_CHARS,
    VAULT_SESSION_ID_MAX_CHARS,
    VAULT_TRANSCRIPT_MAX_BYTES,
)
from ..model import Provider

MANIFEST_SCHEMA_VERSION = 3
CONTENT_TRUST = "untrusted_archived_data"
"""Archived text is history to look at, never an instruction to follow."""

RECOVERED_LABEL = "recovered"
"""The label `vault --repair` gives an entry it rebuilt from a manifest (no line survived)."""
UNKNOWN_PATH_DIR = "/unknown"
"""A rebuilt entry whose transcript cannot be found is recorded as /unknown/<sha>.jsonl: a
valid absolute path (the index needs one) where no transcript lives, so an undo beside it
fails instead of writing into some real directory; the hex name cannot climb out of it."""

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


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""Unicode category Cc is exactly these: C0, DEL and C1 (a regex, not a loop over chars)."""


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


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

    line_sha256: str | None = None
    """sha256 of the canonical JSON of every other field (binding()), so an edit to any of
    them, not only those the manifest can check, is caught on read. None on a line written
    before lines were bound: such a line is read as it stands, and said to be unbound."""
    # Unbound lines are not bound by the next append: binding a line today would certify
    # whatever it says today (a bit flipped since it was written included) as if it had been
    # checked when written. Only `vault --repair`, asked to, binds them, and says so.

    @field_validator("line_sha256")
    @classmethod
    def _line_digest(cls, value: str | None) -> str | None:
        if value is not None and not is_sha256(value):
            raise ValueError("is not a 64-hex sha256")
        return value

    @property
    def is_bound(self) -> bool:
        return self.line_sha256 is not None

    def binding(self) -> str:
        """The digest this entry's line must carry: fixed key order, no spaces."""
        body = self.model_dump(mode="json", exclude={"line_sha256"})
        return hashlib.sha256(orjson.dumps(body)).hexdigest()

    def bound(self) -> IndexEntry:
        return self.model_copy(update={"line_sha256": self.binding()})

    def to_line(self) -> Raw:
        """The index line of these fields, bound: the checksum is worked out afresh from them,
        never carried over from an earlier line."""
        return orjson.dumps(self.bound().model_dump(mode="json")) + b"\n"


def validate_entry(**fields: Any) -> IndexEntry:
    """An IndexEntry from caller input, or INVALID_INPUT naming the bad field."""
    try:
        return IndexEntry(**fields)
    except ValidationError as error:
        raise VaultError(VaultErrorCode.INVALID_INPUT, f"bad snapshot: {_why(error)}") from None


@dataclass(frozen=True, slots=True)
class IndexView:
    """index.jsonl as read: its entries, and how its bytes divide."""

    entries: list[IndexEntry]
    intact: int
    """Bytes of the complete (newline-terminated) lines."""
    torn: int
    """Bytes after them: what an interrupted append left. Ignored by readers; the next writer
    cuts them off under the index's exclusive lock."""

    @property
    def unbound(self) -> int:
        """Entries on lines written before lines were bound (no line_sha256)."""
        return sum(1 for entry in self.entries if not entry.is_bound)


def read_index(data: bytes) -> IndexView:
    """index.jsonl in append order; one bad complete line makes the whole index damaged.

    An unterminated last line is an interrupted append (a full disk, a crash) when it can be
    one: a prefix of a JSON object, or one whole object with only its newline missing. The
    snapshot that wrote it never succeeded, so it is left out rather than fatal. Anything
    else there (say, a whole line followed by a stray byte: a flipped newline) is damage.
    """
    if len(data) > VAULT_INDEX_MAX_BYTES:
        raise VaultError(VaultErrorCode.DAMAGED_INDEX, "the index is larger than 128 MiB")
    body, tail = split_tail(data)
    entries = [parse_index_line(number, line) for number, line in _numbered(body)]
    return IndexView(entries=entries, intact=len(body), torn=len(tail))


def parse_index(data: bytes) -> list[IndexEntry]:
    """The entries of index.jsonl (read_index), in append order."""
    return read_index(data).entries


def split_tail(data: bytes) -> tuple[bytes, bytes]:
    """(the complete lines, an interrupted append after them); DAMAGED_INDEX when what follows
    the last newline cannot be what an append of ours left."""
    cut = data.rfind(b"\n") + 1
    body, tail = data[:cut], data[cut:]
    if tail and (len(tail) >= VAULT_INDEX_LINE_MAX_BYTES or not _append_remnant(tail)):
        number = body.count(b"\n") + 1
        raise VaultError(
            VaultErrorCode.DAMAGED_INDEX,
            f"index line {number} has no newline and is not an interrupted append",
        )
    return body, tail


def scan_index(data: bytes) -> tuple[list[tuple[int, bytes, IndexEntry | VaultError]], int]:
    """Every complete line (number, bytes, and its entry or the error that line alone
    raises) and the number of torn bytes at the end: what `vault --repair` can still use of
    a damaged index. A tail that is not an interrupted append is reported as a line."""
    data = data[:VAULT_INDEX_MAX_BYTES]
    try:
        body, tail = split_tail(data)
        damaged_tail = None
    except VaultError as error:
        body = data[: data.rfind(b"\n") + 1]
        tail, damaged_tail = data[len(body) :], error
    lines: list[tuple[int, bytes, IndexEntry | VaultError]] = []
    number = 0
    for number, line in _numbered(body):
        try:
            lines.append((number, line, parse_index_line(number, line)))
        except VaultError as error:
            lines.append((number, line, error))
    if damaged_tail is not None:
        lines.append((number + 1, tail, damaged_tail))
        return lines, 0
    return lines, len(tail)


def parse_index_line(number: int, line: bytes) -> IndexEntry:
    """One line (without its newline), checked: valid, and matching its checksum if bound."""
    if len(line) + 1 > VAULT_INDEX_LINE_MAX_BYTES:
        raise VaultError(VaultErrorCode.DAMAGED_INDEX, f"index line {number} is too long")
    try:
        entry = IndexEntry.model_validate(orjson.loads(line))
    except (orjson.JSONDecodeError, ValidationError) as error:
        raise VaultError(
            VaultErrorCode.DAMAGED_INDEX, f"index line {number} is invalid: {_why(error)}"
        ) from None
    if entry.line_sha256 is not None and entry.line_sha256 != entry.binding():
        raise VaultError(
            VaultErrorCode.DAMAGED_INDEX,
            f"index line {number} fails its checksum (snapshot {entry.sha256[:12]})",
        )
    return entry


def _numbered(body: bytes) -> list[tuple[int, bytes]]:
    return list(enumerate(body[:-1].split(b"\n"), start=1)) if body else []


def _append_remnant(tail: bytes) -> bool:
    """True when `tail` is a prefix of one JSON object, or one whole object and nothing else.

    Index lines are flat objects written in one piece, so a torn append is a prefix of one;
    bytes after an object's closing brace (a newline with a flipped bit) never are.
    """
    if tail[:1] != b"{":
        return False
    depth = 0
    in_string = escaped = False
    for position, byte in enumerate(tail):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):  # { [
            depth += 1
        elif byte in (0x7D, 0x5D):  # } ]
            depth -= 1
            if depth == 0:
                return position == len(tail) - 1
    return True


def record_count_of(newlines: int, size: int, ends_with_newline: bool) -> int:
    """Physical lines: every newline ends one, and a last line without one counts too."""
    return newlines + (1 if size and not ends_with_newline else 0)


class IdentityScan:
    """The provider and session id a transcript's own records name, for `vault --repair`.

    Codex: the first session_meta's payload id. Claude: the first sessionId of a record that
    is not a progress line (as the Claude adapter reads it), else of any record.
    """

    __slots__ = ("fallback", "found")

    def __init__(self) -> None:
        self.found: tuple[Provider, str] | None = None
        self.fallback: tuple[Provider, str] | None = None

    def feed(self, record: object) -> bool:
        """Look at one parsed record; True once the identity is known."""
        if self.found is not None:
            return True
        if not isinstance(record, dict):
            return False
        if record.get("type") == "session_meta":
            payload = record.get("payload")
            sid = (
                payload.get("id") or payload.get("session_id")
                if isinstance(payload, dict)
                else None
            )
            if isinstance(sid, str) and sid:
                self.found = (Provider.CODEX, sid)
            return self.found is not None
        sid = record.get("sessionId")
        if isinstance(sid, str) and sid:
            if record.get("type") != "progress":
                self.found = (Provider.CLAUDE, sid)
            elif self.fallback is None:
                self.fallback = (Provider.CLAUDE, sid)
        return self.found is not None

    @property
    def identity(self) -> tuple[Provider, str] | None:
        return self.found or self.fallback


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
    orphan_manifests: int = 0
    """Of manifests_removed, those neither the index nor a receipt names (left by a prune that
    was interrupted after rewriting the index, or by a snapshot that failed to append)."""
    index_torn_bytes: int = 0
    """An interrupted append at the end of the index, cut off."""


class DamagedSnapshot(_Frozen):
    sha256: str
    code: VaultErrorCode
    message: str
    indexed: bool
    """Named by the index (False: a manifest no index line names)."""


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


class RestoreReport(_Frozen):
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


class RecoveredEntry(_Frozen):
    entry: IndexEntry
    sources: dict[str, FieldSource]
    """Every field of the entry but line_sha256, and where it came from."""


class DroppedLine(_Frozen):
    line: int
    sha256: str | None
    """The snapshot the line names, when that much of it could be read."""
    reason: str


class RepairReport(_Frozen):
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
