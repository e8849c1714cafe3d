"""Codex: the incremental state, the items, the full parse and the rewrite half. This module
is the provider's face (adapters.providers.interface.ProviderPackage); each part loads on
first use."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ....core.limits import CODEX_MAX_DEPTH
from ....core.model import Provider, Transcript
from ...files.jsonl import Record, decode_line

if TYPE_CHECKING:
    from ....core.conversation import EntryWriter
    from ....core.verify import RecordChecks
    from ..interface import RewriteHalf, TailState
    from ..record_text import RecordText

PROVIDER = Provider.CODEX
BOUNDARY_MARKER = b'"compacted"'
_ROLLOUT_STAMP = re.compile(r"rollout-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-")


def state_class() -> type[TailState]:
    from .state import CodexState

    return CodexState


def parse_transcript(path: str) -> Transcript:
    from . import parse

    return parse.parse_transcript(path)


def parse_data(path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
    from . import parse

    return parse.parse_data(path, data, mtime_ns, part=part)


def is_boundary(record: Record) -> bool:
    """A compaction: its replacement history and what follows are the whole context."""
    return record.get("type") == "compacted" and type(record.get("payload")) is dict


SESSION_DIRS = ("sessions", "archived_sessions")
SESSION_MAX_DEPTH = CODEX_MAX_DEPTH


def file_layout(_parts: tuple[str, ...]) -> tuple[bool, tuple[str, ...] | None, bool]:
    """Rollouts anywhere below (sessions/<yyyy>/<mm>/<dd>/, or flat when archived)."""
    return False, None, True


SNIFF_KEYS = (b'"payload"',)


def owns(record: Record) -> bool:
    """A rollout line: a `type` naming its kind and the `payload` it carries."""
    return "payload" in record and isinstance(record.get("type"), str)


def record_type(record: Record) -> tuple[str, str | None] | None:
    """Its type and its payload's (("response_item", "message"))."""
    kind, payload = record.get("type"), record.get("payload")
    if not isinstance(kind, str) or not kind:
        return None
    sub = payload.get("type") if isinstance(payload, dict) else None
    return kind, sub if isinstance(sub, str) and sub else None


def session_identity(record: Record) -> tuple[str, bool] | None:
    """The session_meta's payload id (the session's own)."""
    if record.get("type") != "session_meta":
        return None
    payload = record.get("payload")
    sid = payload.get("id") or payload.get("session_id") if isinstance(payload, dict) else None
    return (sid, True) if isinstance(sid, str) and sid else None


def live_head(data: bytes) -> bytes:
    """The session_meta line (the session's id and folder), which the live part needs."""
    end = data.find(b"\n")
    line = data[: end + 1] if end >= 0 else b""
    record = decode_line(line.strip())
    return line if type(record) is dict and record.get("type") == "session_meta" else b""


def rewrite_half() -> RewriteHalf:
    from . import rewrite

    return rewrite


def fork_path(source: Path, session_id: str, now: float) -> Path:
    """`rollout-<stamp>-<id>.jsonl` with the source's own stamp, so the same operation names
    the same file whenever it runs (a wall-clock stamp made a rerun without its receipt
    publish a second copy of one session). A fork that already exists under another stamp is
    found and adopted."""
    found = _ROLLOUT_STAMP.match(source.name)
    if found is not None:
        stamp = found.group(1)
    else:  # a rollout named otherwise: the time it was forked (the glob below finds reruns)
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime(now))
    for existing in sorted(source.parent.glob(f"rollout-*-{session_id}.jsonl")):
        if existing.is_file() and not existing.is_symlink():
            return existing
    return source.with_name(f"rollout-{stamp}-{session_id}.jsonl")


def card_text(record: Record) -> str | None:
    """The state-card text `record` carries, or None (see .cards)."""
    from .cards import card_text as of

    return of(record)


def conversation_builder() -> EntryWriter:
    """A fresh builder of this provider's conversation entries (see .conversation)."""
    from .conversation import CodexConversation

    return CodexConversation()


def verify_checks() -> RecordChecks:
    """This provider's checks of its records for core.verify (see .verify)."""
    from .verify import CHECKS

    return CHECKS


def record_text() -> RecordText:
    """How this provider's records read in the vault views (see .vault_reading)."""
    from .vault_reading import READING

    return READING
