"""The vault's stored shapes: a snapshot's manifest, the entries of index.jsonl, and reading
that index (whole, or line by line for `vault --repair`).

Everything here works on values; adapters.vault does the files, the locks and the hashing of
streams.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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
from .errors import VaultError, VaultErrorCode, has_control, is_sha256, why

MANIFEST_SCHEMA_VERSION = 3

Raw = bytes
"""`bytes` under another name: several models have a field called `bytes`."""


class Frozen(BaseModel):
    """The base of the vault's stored and reported shapes: no unknown field, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Manifest(Frozen):
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
                VaultErrorCode.DAMAGED_MANIFEST, f"manifest {sha} is unreadable: {why(error)}"
            ) from None
        # Chunks are never empty and never longer than VAULT_CHUNK_BYTES.
        count = len(manifest.chunks)
        if count > manifest.bytes or manifest.bytes > count * VAULT_CHUNK_BYTES:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST,
                f"manifest {sha} lists {count} chunks for {manifest.bytes} bytes",
            )
        return manifest


class IndexEntry(Frozen):
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
        raise VaultError(VaultErrorCode.INVALID_INPUT, f"bad snapshot: {why(error)}") from None


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
            VaultErrorCode.DAMAGED_INDEX, f"index line {number} is invalid: {why(error)}"
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
