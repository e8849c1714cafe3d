"""The two recall verbs as the CLI, the hooks and the MCP server call them: read the archive,
pack it, and (delta) keep the caller's cursor."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from ...core.recall.delta import cursor_name, delta
from ...core.recall.model import (
    Arm,
    ContextPack,
    Delta,
    PackItem,
    Position,
    check_budget,
    parse_cursor_token,
    resolve_session,
    without_card_text,
)
from ...core.recall.pack import context_pack
from .archive import open_archive
from .cursors import store_cursor, stored_cursor


def pack(
    entities: Sequence[str],
    budget_tokens: int,
    *,
    include_private: bool = False,
    with_text: bool = True,
    root: Path | None = None,
) -> ContextPack:
    """`with_text=False` (MCP without --allow-transcript-content): cards show and match only
    what is not transcript text (their files, provider and count)."""
    check_budget(budget_tokens)  # before the vault is read
    with open_archive(root=root) as opened:
        archive = opened.archive if with_text else without_card_text(opened.archive)
        found = context_pack(archive, entities, budget_tokens, include_private)
        opened.check_named(_snapshots_named(found.items))
    return found


def _snapshots_named(items: Sequence[PackItem]) -> set[str]:
    return {item.ref for item in items if item.arm is not Arm.EVENTS}


def since_position(since: str | float | None, caller: str) -> Position | None:
    """`since` as a position: a cursor token (the caller's own), or a time in seconds."""
    if since is None:
        return None
    if isinstance(since, str):
        return parse_cursor_token(since, caller)
    return (since, "")


def heartbeat(
    session: str,
    caller: str,
    budget_tokens: int,
    *,
    since: str | float | None = None,
    include_private: bool = False,
    only_session: bool = False,
    with_text: bool = True,
    root: Path | None = None,
    now: float | None = None,
) -> Delta:
    """The caller's delta (core.recall.delta): what is new in the vault since its session's
    cursor, or (`only_session`) in that archived session's; the cursor is stored unless
    `since` was given. `with_text=False`: cards as in pack."""
    check_budget(budget_tokens)
    start = since_position(since, caller)
    now = time.time() if now is None else now
    with open_archive(root=root) as opened:
        archive = opened.archive if with_text else without_card_text(opened.archive)
        session_id = resolve_session(archive, session) if only_session else cursor_name(session)
        stored = None if start is not None else stored_cursor(caller, session_id, root)
        answer, cursor = delta(
            archive,
            session_id,
            caller,
            budget_tokens,
            now,
            stored,
            start,
            include_private,
            only_session=only_session,
        )
        opened.check_named(_snapshots_named(answer.items))
    if cursor is not None:
        store_cursor(cursor, now, root)
    return answer
