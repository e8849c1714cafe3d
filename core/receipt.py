"""Fork publication records: the deterministic operation identity and the copy receipt.

Pure: identities are digests of what was asked (provider, source path and digest, edits), so
the same apply twice names the same operation and the same fork, and a rerun can return the
first receipt instead of writing again.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

import orjson
from pydantic import BaseModel, ConfigDict, Field

from .edits import Edit, ElideEdit, InjectDigestEdit
from .model import Provider
from .projection import Projection

_HEX64 = r"^[0-9a-f]{64}$"


class OperationKind(StrEnum):
    APPLY = "apply"
    UNDO = "undo"
    FORK = "fork"


class ForkForm(StrEnum):
    """How an apply's fork carries what it cut. Closed vocabulary."""

    PORTABLE = "portable"
    """Stubs and a state card, records the client already knows."""
    COMPACTED_RECORD = "compacted_record"
    """The elided prefix and the card as one compaction record (--experimental-compacted)."""


def operation_id(
    kind: OperationKind,
    provider: Provider,
    canonical_path: str,
    source_sha256: str,
    edits: list[Edit] | None = None,
    extra: str = "",
) -> str:
    """sha256 over what the operation is: its kind, the source and (for apply) the edits."""
    payload = {
        "kind": kind.value,
        "provider": provider.value,
        "path": canonical_path,
        "source_sha256": source_sha256,
        "edits": [edit.model_dump(mode="json") for edit in edits or []],
        "extra": extra,
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def items_covered(edits: list[Edit]) -> int:
    lines = {line for edit in edits if isinstance(edit, ElideEdit) for line in edit.line_indexes}
    cards = sum(edit.digest.covers_items for edit in edits if isinstance(edit, InjectDigestEdit))
    return max(len(lines), cards)


class Receipt(BaseModel):
    """What an apply, fork or undo published (`apply --json`). Fields only ever get added."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    operation_id: str = Field(pattern=_HEX64)
    kind: OperationKind
    provider: Provider
    strategy: str = Field(max_length=128)
    source_path: str
    source_session_id: str
    path: str
    """The fork: a new file beside the source."""
    session_id: str
    source_sha256: str = Field(pattern=_HEX64)
    output_sha256: str = Field(pattern=_HEX64)
    snapshot_manifest_sha256: str = Field(pattern=_HEX64)
    bytes_before: int = Field(ge=0)
    bytes_after: int = Field(ge=0)
    reclaimed_bytes: int = Field(ge=0)
    context_tokens_before: int = Field(default=0, ge=0)
    context_tokens_after: int = Field(default=0, ge=0)
    projection: Projection | None = None
    """An apply's fork in the real client: its projected context, whether the client will
    compact it on resume, the calibration behind the figure."""
    completed: bool
    created_ts: float
    resume_command: str
    selected_strategy: str | None = None
    """The strategy `auto` chose (its plan's strategy is "auto"); None for any other."""
    resume_line: str | None = None
    """`cd <the session's directory> && <resume_command>`, when the directory is known (what
    the dashboard's `c` copies); None: resume_command alone."""
    form: ForkForm | None = None
    """An apply's fork: how it carries what it cut; None for undo and fork (copies), and in
    receipts written before the field."""

    @property
    def resume_text(self) -> str:
        """What to paste to resume the fork."""
        return self.resume_line or self.resume_command
