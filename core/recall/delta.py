"""delta: what is new in the vault since its caller last woke, oldest first.

The session id names the caller's own session (seed 000): its cursor. The first wake of an
unseen id establishes it and delivers what the vault holds; each wake after that delivers what
came since. With `only_session` the id names an archived session (or a prefix of one) and
only that session's snapshots and events are read.

Delivery is at least once: items arrive oldest first, and when the budget or the item limit
cuts the list, has_more is set and the cursor moves only to the newest item delivered, so
the rest comes on the next call. A snapshot whose card does not fit is delivered as a
reference alone (truncated) rather than holding the cursor back; an item that cannot fit
even so ends the delivery. The cursor is kept per (caller, session): another caller's
cursor is refused, and one idle past its expiry is started afresh with nothing delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..limits import CURSOR_IDLE_EXPIRY_SECS, CURSOR_NAME_MAX_CHARS, DELTA_MAX_ITEMS
from .model import (
    Archive,
    Arm,
    CardSeen,
    Cursor,
    CursorStatus,
    Delta,
    PackItem,
    Position,
    RecallError,
    RecallErrorCode,
    check_budget,
    resolve_session,
)
from .render import (
    card_body,
    event_key,
    event_text,
    head_line,
    item,
    render,
    snapshot_line,
    tokens,
    who,
)

START: Position = (0.0, "")
"""Before every item (all are dated at or after the epoch and have a non-empty key)."""


@dataclass(frozen=True)
class _Pending:
    position: Position
    full: PackItem
    short: PackItem


def cursor_name(session: str) -> str:
    """A caller's session id as its cursor's name: any non-empty id of bounded length."""
    name = session.strip()
    if not name or len(name) > CURSOR_NAME_MAX_CHARS:
        raise RecallError(
            RecallErrorCode.INVALID_INPUT,
            f"name a session id of 1 to {CURSOR_NAME_MAX_CHARS} characters",
        )
    return name


def _pending(archive: Archive, session_id: str | None, include_private: bool) -> list[_Pending]:
    """The items of one session, or (None) of every session, oldest first."""
    newest_card: dict[str, CardSeen] = {}
    for seen in archive.cards:
        held = newest_card.get(seen.snapshot.sha256)
        if held is None or seen.record_index > held.record_index:
            newest_card[seen.snapshot.sha256] = seen
    found: list[_Pending] = []
    for entry in archive.entries:
        if session_id is not None and entry.session_id != session_id:
            continue
        line = snapshot_line(entry, include_private)
        owner = entry.session_id
        short = item(Arm.SNAPSHOTS, entry.provider, owner, entry.ts, entry.sha256, line)
        card = newest_card.get(entry.sha256)
        body = card_body(card.card, include_private) if card is not None else []
        full = (
            short
            if not body
            else item(
                Arm.SNAPSHOTS,
                entry.provider,
                owner,
                entry.ts,
                entry.sha256,
                "\n".join([line, *body]),
            )
        )
        found.append(_Pending((entry.ts, "s:" + entry.sha256), full, short))
    for ordinal, event in enumerate(archive.events):
        if session_id is None or event.session_id == session_id:
            key = event_key(event, ordinal)
            owner = event.session_id
            shown = item(Arm.EVENTS, event.provider, owner, event.ts, key, event_text(event))
            found.append(_Pending((event.ts, key), shown, shown))
    found.sort(key=lambda p: p.position)
    return found


def delta(
    archive: Archive,
    session: str,
    caller: str,
    budget_tokens: int,
    now: float,
    stored: Cursor | None,
    since: Position | None = None,
    include_private: bool = False,
    only_session: bool = False,
) -> tuple[Delta, Cursor | None]:
    """The delta, and the cursor to store (None: leave the stored one as it is).

    `since` (a time as (ts, ""), or a cursor token's position) reads statelessly from there.
    """
    budget = check_budget(budget_tokens)
    session_id = resolve_session(archive, session) if only_session else cursor_name(session)
    expired = stored is not None and now - stored.touched > CURSOR_IDLE_EXPIRY_SECS
    if since is not None:
        start = since
    elif stored is None:
        start = START
    else:
        start = (now, "") if expired else (stored.ts, stored.key)
    scope = session_id if only_session else None
    pending = [p for p in _pending(archive, scope, include_private) if p.position > start]
    if expired and since is None:
        pending = []
    subject = who(pending[0].full.provider, session_id) if pending and only_session else "the vault"
    head = head_line("delta", f"{subject}, oldest first") if pending else ""
    delivered: list[PackItem] = []
    used = 0
    last = start
    for offer in pending[:DELTA_MAX_ITEMS]:
        first = 0 if delivered else tokens(head)
        if used + first + offer.full.tokens <= budget:
            chosen = offer.full
        elif used + first + offer.short.tokens <= budget:
            chosen = replace(offer.short, truncated=True)
        else:
            break
        delivered.append(chosen)
        used += first + chosen.tokens
        last = offer.position
    if since is not None:
        status = CursorStatus.STATELESS
    elif expired:
        status = CursorStatus.EXPIRED
    elif stored is None:
        status = CursorStatus.ESTABLISHED
    else:
        status = CursorStatus.ADVANCED if delivered else CursorStatus.UNCHANGED
    cursor = Cursor(caller=caller, session_id=session_id, ts=last[0], key=last[1], touched=now)
    answer = Delta(
        session_id=session_id,
        budget_tokens=budget,
        budget_used=used,
        dropped_count=len(pending) - len(delivered),
        has_more=len(delivered) < len(pending),
        cursor_status=status,
        cursor=cursor.token(),
        items=delivered,
        text=render(delivered, head, headings=False),
    )
    return answer, (None if since is not None else cursor)
