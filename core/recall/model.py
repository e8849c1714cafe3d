"""What recall packs are made of and answer with; the checks on what a caller asks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from ..edits import DigestBlock
from ..limits import (
    PACK_ENTITY_MAX_CHARS,
    PACK_ENTITY_MIN_CHARS,
    PACK_MAX_BUDGET_TOKENS,
    PACK_MAX_ENTITIES,
)
from ..model import Provider
from ..sanitize import terminal_safe
from ..telemetry import TelemetryEvent
from ..vault.index import IndexEntry
from ..vault.reports import CONTENT_TRUST

LOCAL_CALLER = "local"
"""The trusted lane: the CLI and the hooks, run by the user."""
REMOTE_CALLER = "remote"
"""Every MCP client: stdio clients are not authenticated, so they share one namespace."""
CURSOR_TOKEN_PREFIX = "gc1"


class RecallErrorCode(StrEnum):
    INVALID_INPUT = "invalid_input"
    UNKNOWN_SESSION = "unknown_session"
    AMBIGUOUS_SESSION = "ambiguous_session"
    BAD_CURSOR = "bad_cursor"
    FOREIGN_CURSOR = "foreign_cursor"


class RecallError(ValueError):
    def __init__(self, code: RecallErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class Arm(StrEnum):
    CARDS = "cards"
    FACTS = "facts"
    SNAPSHOTS = "snapshots"
    EVENTS = "events"


@dataclass(frozen=True)
class CardSeen:
    """A state card found in a snapshot's records."""

    snapshot: IndexEntry
    record_index: int
    card: DigestBlock


@dataclass(frozen=True)
class Archive:
    """What the vault and events.jsonl hold, in any order."""

    entries: Sequence[IndexEntry]
    cards: Sequence[CardSeen]
    events: Sequence[TelemetryEvent]


def without_card_text(archive: Archive) -> Archive:
    """The archive with each card reduced to what is not transcript text (a caller not given
    it is neither shown a card's other fields nor matched against them)."""
    cards = [replace(seen, card=seen.card.without_transcript_text()) for seen in archive.cards]
    return replace(archive, cards=cards)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class PackItem:
    """An item a pack or delta offers, and delivers when it fits. A plain dataclass: a pack
    over a thousand snapshots makes thousands and keeps a few (the answer validates those)."""

    arm: Arm
    provider: Provider
    session_id: str
    ts: float
    ref: str
    """The snapshot id (cards, facts, snapshots) or the event's key."""
    text: str
    tokens: int
    truncated: bool = False
    """Delta: delivered as a reference only, its card left out for the budget."""


class ContextPack(_Frozen):
    entities: list[str]
    budget_tokens: int
    budget_used: int
    dropped_count: int
    include_private: bool
    matched_sessions: int
    items: list[PackItem]
    text: str
    content_trust: str = CONTENT_TRUST


class CursorStatus(StrEnum):
    ESTABLISHED = "established"
    """The first call for this caller and session: everything so far, oldest first."""
    ADVANCED = "advanced"
    UNCHANGED = "unchanged"
    """Nothing new since the cursor."""
    EXPIRED = "expired"
    """Idle over 7 days: started afresh at now, nothing delivered (catch up with `since`)."""
    STATELESS = "stateless"
    """`since` was given: the stored cursor was neither read nor moved."""


class Cursor(_Frozen):
    caller: str
    session_id: str
    ts: float
    key: str
    touched: float

    def token(self) -> str:
        return f"{CURSOR_TOKEN_PREFIX}:{self.caller}:{self.ts!r}:{self.key}"


class Delta(_Frozen):
    session_id: str
    budget_tokens: int
    budget_used: int
    dropped_count: int
    has_more: bool
    cursor_status: CursorStatus
    cursor: str
    """Where the next call starts; pass it as `since` for a stateless read from there."""
    items: list[PackItem]
    text: str
    content_trust: str = CONTENT_TRUST


Position = tuple[float, str]


# --- input checks ----------------------------------------------------------------------------


def check_budget(budget_tokens: int) -> int:
    if not 1 <= budget_tokens <= PACK_MAX_BUDGET_TOKENS:
        raise RecallError(
            RecallErrorCode.INVALID_INPUT,
            f"the budget must be 1 to {PACK_MAX_BUDGET_TOKENS} tokens, got {budget_tokens}",
        )
    return budget_tokens


def parse_entities(names: Iterable[str]) -> list[str]:
    """Entities as given, stripped and deduplicated (case-folded), each checked."""
    found: list[str] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        if not PACK_ENTITY_MIN_CHARS <= len(name) <= PACK_ENTITY_MAX_CHARS:
            raise RecallError(
                RecallErrorCode.INVALID_INPUT,
                f"an entity is {PACK_ENTITY_MIN_CHARS} to {PACK_ENTITY_MAX_CHARS} characters",
            )
        if terminal_safe(name) != name:
            raise RecallError(RecallErrorCode.INVALID_INPUT, "an entity holds control characters")
        if name.casefold() not in {f.casefold() for f in found}:
            found.append(name)
    if not found:
        raise RecallError(RecallErrorCode.INVALID_INPUT, "name at least one entity")
    if len(found) > PACK_MAX_ENTITIES:
        raise RecallError(
            RecallErrorCode.INVALID_INPUT, f"at most {PACK_MAX_ENTITIES} entities a pack"
        )
    return found


def parse_cursor_token(token: str, caller: str) -> Position:
    """A cursor token's position; refused when it is malformed or another caller's."""
    parts = token.strip().split(":", 3)
    if len(parts) != 4 or parts[0] != CURSOR_TOKEN_PREFIX:
        raise RecallError(RecallErrorCode.BAD_CURSOR, "not a cursor this tool gave out")
    if parts[1] != caller:
        raise RecallError(
            RecallErrorCode.FOREIGN_CURSOR, "that cursor belongs to another caller: use your own"
        )
    try:
        ts = float(parts[2])
    except ValueError:
        raise RecallError(RecallErrorCode.BAD_CURSOR, "not a cursor this tool gave out") from None
    if ts != ts or ts in (float("inf"), float("-inf")):
        raise RecallError(RecallErrorCode.BAD_CURSOR, "not a cursor this tool gave out")
    return (ts, parts[3])


def resolve_session(archive: Archive, session: str) -> str:
    """The one session id the archive knows that is `session` or starts with it."""
    wanted = session.strip()
    if not wanted:
        raise RecallError(RecallErrorCode.INVALID_INPUT, "name a session id")
    known = {e.session_id for e in archive.entries} | {e.session_id for e in archive.events}
    if wanted in known:
        return wanted
    matches = sorted(s for s in known if s.startswith(wanted))
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise RecallError(
            RecallErrorCode.AMBIGUOUS_SESSION,
            f"{terminal_safe(wanted)!r} matches {len(matches)} sessions: give more of the id",
        )
    raise RecallError(
        RecallErrorCode.UNKNOWN_SESSION,
        f"no snapshot or event of session {terminal_safe(wanted)!r} in the vault",
    )
