"""The events.jsonl record: one numeric line per apply or undo (schema
`gobtui/compaction-events-v1`). Numbers, ids and closed codes only: never content or paths."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .model import Provider
from .policy import TuneReason

EVENTS_SCHEMA = "gobtui/compaction-events-v1"


class EventAction(StrEnum):
    PROVIDER_COMPACT = "provider_compact"
    TRANSCRIPT_COMPACT = "transcript_compact"
    UNDO = "undo"
    NONE = "none"


class EventOutcome(StrEnum):
    APPLIED = "applied"
    PLANNED = "planned"
    FAILED = "failed"
    SKIPPED = "skipped"


class TelemetryEvent(BaseModel):
    schema_: Literal["gobtui/compaction-events-v1"] = Field(
        default="gobtui/compaction-events-v1", alias="schema"
    )
    ts: float
    provider: Provider
    session_id: str = Field(max_length=256)
    source_identity_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    strategy: str = Field(max_length=128)
    action: EventAction
    outcome: EventOutcome
    trigger_tokens: int = Field(ge=0)
    context_tokens_before: int = Field(ge=0)
    context_tokens_after: int = Field(ge=0)
    est_reclaimed_tokens: int = Field(ge=0)
    items_covered: int = Field(ge=0)
    bytes_before: int = Field(default=0, ge=0)
    bytes_after: int = Field(default=0, ge=0)
    duration_ms: float = Field(ge=0)
    error_code: str | None = Field(default=None, max_length=64)
    tune_reasons: list[TuneReason] = Field(default_factory=list, max_length=8)
    """What the adaptive tuner moved for this decision (`trigger_tokens` is the tuned one)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


def source_identity(provider: Provider, session_id: str, canonical_path: str) -> str:
    """The stream an event belongs to, without naming it: sha256 of provider, id and path."""
    joined = "\x00".join((provider.value, session_id, canonical_path))
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()


def recent_reductions(events: list[TelemetryEvent], identity: str) -> list[tuple[int, int]]:
    """(before, reclaimed) of this stream's applied transcript compactions, oldest first:
    the tuner's low-yield input."""
    return [
        (event.context_tokens_before, event.est_reclaimed_tokens)
        for event in events
        if event.source_identity_sha256 == identity
        and event.outcome is EventOutcome.APPLIED
        and event.action is EventAction.TRANSCRIPT_COMPACT
    ]
