"""context_pack: what the archive knows about named entities, highest-priority arm first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ..edits import DigestBlock
from ..limits import PACK_EVENTS_PER_SESSION, PACK_MAX_FACTS, PACK_SNAPSHOTS_PER_SESSION
from ..sanitize import terminal_safe
from ..telemetry import TelemetryEvent
from ..vault.index import IndexEntry
from .model import (
    Archive,
    Arm,
    CardSeen,
    ContextPack,
    PackItem,
    check_budget,
    parse_entities,
)
from .render import (
    FACT_FIELDS,
    card_text,
    event_key,
    event_text,
    fill,
    head_line,
    item,
    render,
    snapshot_line,
    when,
    who,
)


def _hits(haystack: str, entities: Sequence[str]) -> int:
    folded = haystack.casefold()
    return sum(folded.count(e.casefold()) for e in entities)


def _card_hits(card: DigestBlock, entities: Sequence[str], include_private: bool) -> int:
    # What a world pack cannot show, it does not match on either.
    fields = [getattr(card, name) for _, name in FACT_FIELDS]
    text = [entry for entries in fields for entry in entries] + [card.current_work]
    if include_private:
        text.append(card.goal)
    return _hits("\n".join(text), entities)


def _matching(
    archive: Archive, names: Sequence[str], include_private: bool
) -> tuple[set[str], dict[str, list[tuple[int, CardSeen]]]]:
    """The sessions an entity names, and their cards with each card's hits."""
    matched = {e.session_id for e in archive.events if _hits(e.session_id, names)}
    for entry in archive.entries:
        where = entry.session_id + ("\n" + entry.path if include_private else "")
        if _hits(where, names):
            matched.add(entry.session_id)
    hits = [(_card_hits(seen.card, names, include_private), seen) for seen in archive.cards]
    matched |= {seen.snapshot.session_id for count, seen in hits if count}
    by_session: dict[str, list[tuple[int, CardSeen]]] = {}
    for count, seen in hits:
        if seen.snapshot.session_id in matched:
            by_session.setdefault(seen.snapshot.session_id, []).append((count, seen))
    for found in by_session.values():
        # The newest card is where the session left off; older ones give facts.
        found.sort(key=lambda pair: (-pair[1].snapshot.ts, -pair[1].record_index))
    return matched, by_session


def _facts(
    by_session: dict[str, list[tuple[int, CardSeen]]], shown: set[str], include_private: bool
) -> list[PackItem]:
    """Entries of the cards not packed whole, each once, that no packed card already shows:
    (privately, earlier goals,) open tasks, errors, decisions, files; newest first in each."""
    ranked: list[tuple[tuple[int, float], PackItem]] = []
    for sid, found in by_session.items():
        for _, other in found[1:]:
            snap = other.snapshot
            goal = [other.card.goal] if include_private and other.card.goal else []
            for rank, (prefix, name) in enumerate((("goal", ""), *FACT_FIELDS)):
                for entry in getattr(other.card, name) if name else goal:
                    line = terminal_safe(f"{prefix}: {entry}")
                    if line.casefold() in shown:
                        continue
                    shown.add(line.casefold())
                    text = f"- {line} ({who(snap.provider, sid)}, {when(snap.ts)})"
                    fact = item(Arm.FACTS, snap.provider, sid, snap.ts, snap.sha256, text)
                    ranked.append(((rank, -snap.ts), fact))
    ranked.sort(key=lambda pair: pair[0])
    return [fact for _, fact in ranked]


def context_pack(
    archive: Archive, entities: Sequence[str], budget_tokens: int, include_private: bool = False
) -> ContextPack:
    """The cards, facts, snapshots and events about `entities`, packed into the budget.

    A session matches when an entity is part of its id (or, privately, its transcript path),
    or when one of its cards names an entity. Each matching session offers its newest card
    (sessions named most first); entries of its other cards become facts; its newest snapshots
    and events are pointers. Items are taken in arm order while they fit; one that does not
    is left out (dropped_count) and smaller ones after it may still go in.
    """
    names = parse_entities(entities)
    budget = check_budget(budget_tokens)
    matched, by_session = _matching(archive, names, include_private)
    # Sessions the entities name most come first, then the most recent.
    best = sorted(
        by_session.values(),
        key=lambda found: (-sum(hits for hits, _ in found), -found[0][1].snapshot.ts),
    )
    cards = [
        item(
            Arm.CARDS,
            s.snapshot.provider,
            s.snapshot.session_id,
            s.snapshot.ts,
            s.snapshot.sha256,
            card_text(s, include_private),
        )
        for (_, s), *_ in best
    ]
    shown = {line.strip().casefold() for c in cards for line in c.text.split("\n")[1:]}
    facts = _facts(by_session, shown, include_private)
    # One pointer per snapshot: the same bytes taken twice (pre- and post-compact) are one.
    newest: dict[str, IndexEntry] = {}
    for entry in archive.entries:
        held = newest.get(entry.sha256)
        if entry.session_id in matched and (held is None or entry.ts > held.ts):
            newest[entry.sha256] = entry
    snapshots = _newest_per_session(
        list(newest.values()),
        PACK_SNAPSHOTS_PER_SESSION,
        lambda e: item(
            Arm.SNAPSHOTS,
            e.provider,
            e.session_id,
            e.ts,
            e.sha256,
            snapshot_line(e, include_private),
        ),
    )
    keys = {id(e): event_key(e, n) for n, e in enumerate(archive.events) if e.session_id in matched}
    events = _newest_per_session(
        [e for e in archive.events if e.session_id in matched],
        PACK_EVENTS_PER_SESSION,
        lambda e: item(Arm.EVENTS, e.provider, e.session_id, e.ts, keys[id(e)], event_text(e)),
    )
    offered = [*cards, *facts[:PACK_MAX_FACTS], *snapshots, *events]
    head = head_line("context pack", ", ".join(terminal_safe(n) for n in names))
    packed, used = fill(offered, budget, head)
    return ContextPack(
        entities=names,
        budget_tokens=budget,
        budget_used=used,
        dropped_count=len(offered) - len(packed) + max(0, len(facts) - PACK_MAX_FACTS),
        include_private=include_private,
        matched_sessions=len(matched),
        items=packed,
        text=render(packed, head),
    )


_Dated = TypeVar("_Dated", IndexEntry, TelemetryEvent)


def _newest_per_session(
    found: Sequence[_Dated], limit: int, make: Callable[[_Dated], PackItem]
) -> list[PackItem]:
    """At most `limit` of each session's newest, as items, newest first over all."""
    kept: dict[str, int] = {}
    items: list[PackItem] = []
    for value in sorted(found, key=lambda v: -v.ts):
        if kept.get(value.session_id, 0) < limit:
            kept[value.session_id] = kept.get(value.session_id, 0) + 1
            items.append(make(value))
    return items
