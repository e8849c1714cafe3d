"""Claude Code: the incremental state, the items, the full parse and the rewrite half. This
module is the provider's face (adapters.providers.interface.ProviderPackage); each part
loads on first use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ....core.limits import CLAUDE_MAX_DEPTH
from ....core.model import Provider, Transcript
from ...files.jsonl import Record

if TYPE_CHECKING:
    from ....core.conversation import EntryWriter
    from ....core.verify import RecordChecks
    from ..interface import RewriteHalf, TailState
    from ..record_text import RecordText

PROVIDER = Provider.CLAUDE
BOUNDARY_MARKER = b'"compact_boundary"'


def state_class() -> type[TailState]:
    from .state import ClaudeState

    return ClaudeState


def parse_transcript(path: str) -> Transcript:
    from . import parse

    return parse.parse_transcript(path)


def parse_data(path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
    from . import parse

    return parse.parse_data(path, data, mtime_ns, part=part)


def is_boundary(record: Record) -> bool:
    """A main branch's compaction boundary: the live chain starts again here (no parent)."""
    return (
        record.get("type") == "system"
        and record.get("subtype") == "compact_boundary"
        and record.get("isSidechain") is not True
    )


SESSION_DIRS = ("projects",)
SESSION_MAX_DEPTH = CLAUDE_MAX_DEPTH


def file_layout(parts: tuple[str, ...]) -> tuple[bool, tuple[str, ...] | None, bool]:
    """<project>/<id>.jsonl (an old-layout agent-*.jsonl: a subagent of no known parent), or
    <project>/<id>/subagents/<agent>.jsonl under <project>/<id>.jsonl."""
    if len(parts) == 2:
        return parts[1].startswith("agent-"), None, True
    if len(parts) == 4 and parts[2] == "subagents":
        return True, (parts[0], parts[1] + ".jsonl"), True
    return False, None, False


SNIFF_KEYS = (b'"sessionId"', b'"parentUuid"')
_RECORD_TYPES = frozenset({"user", "assistant", "summary", "file-history-snapshot"})


def owns(record: Record) -> bool:
    """A session id or a parent link at the top level, or one of Claude Code's record types
    (an old summary record has neither)."""
    if "sessionId" in record or "session_id" in record or "parentUuid" in record:
        return True
    return record.get("type") in _RECORD_TYPES


def record_type(record: Record) -> tuple[str, str | None] | None:
    """Its type and subtype (("system", "compact_boundary"))."""
    kind, sub = record.get("type"), record.get("subtype")
    if not isinstance(kind, str) or not kind:
        return None
    return kind, sub if isinstance(sub, str) and sub else None


def session_identity(record: Record) -> tuple[str, bool] | None:
    """Its sessionId; a progress line's only until another record names one (as the parse
    reads it)."""
    sid = record.get("sessionId")
    if isinstance(sid, str) and sid:
        return sid, record.get("type") != "progress"
    return None


def live_head(_data: bytes) -> bytes:
    """Nothing before the boundary is needed to read what follows it."""
    return b""


def rewrite_half() -> RewriteHalf:
    from . import rewrite

    return rewrite


def fork_path(source: Path, session_id: str, _now: float) -> Path:
    """`<id>.jsonl` beside the source, as Claude Code names a session's file."""
    return source.with_name(f"{session_id}.jsonl")


def card_text(record: Record) -> str | None:
    """The state-card text `record` carries, or None (see .cards)."""
    from .cards import card_text as of

    return of(record)


def conversation_builder() -> EntryWriter:
    """A fresh builder of this provider's conversation entries (see .conversation)."""
    from .conversation import ClaudeConversation

    return ClaudeConversation()


def verify_checks() -> RecordChecks:
    """This provider's checks of its records for core.verify (see .verify)."""
    from .verify import CHECKS

    return CHECKS


def record_text() -> RecordText:
    """How this provider's records read in the vault views (see .vault_reading)."""
    from .vault_reading import READING

    return READING
