"""The vault's closed error codes, and the checks of caller input and stored text that raise
them. A damaged vault is a VaultError with a damage code, never a partial answer."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import ValidationError

from ..limits import VAULT_LABEL_MAX_CHARS

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


def why(error: Exception) -> str:
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
