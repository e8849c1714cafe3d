"""core.recall: context packs and deltas over an archive built from values (the vault and
events adapters are tested on real files in tests/gobtui/test_cli_recall.py)."""

from __future__ import annotations

import hashlib
import random

import pytest

from gobtui.core.edits import DigestBlock
from gobtui.core.limits import CURSOR_IDLE_EXPIRY_SECS, DELTA_MAX_ITEMS
from gobtui.core.model import Provider
from gobtui.core.recall.delta import delta
from gobtui.core.recall.model import (
    LOCAL_CALLER,
    REMOTE_CALLER,
    Archive,
    Arm,
    CardSeen,
    Cursor,
    CursorStatus,
    Delta,
    Position,
    RecallError,
    RecallErrorCode,
    parse_cursor_token,
)
from gobtui.core.recall.pack import context_pack
from gobtui.core.recall.render import event_key
from gobtui.core.telemetry import EventAction, EventOutcome, TelemetryEvent
from gobtui.core.tokens import estimate_tokens
from gobtui.core.vault.index import IndexEntry

CLAUDE_ID = "11111111-aaaa-4000-8000-000000000001"
CODEX_ID = "22222222-bbbb-4000-8000-000000000002"
T0 = 1_790_000_000.0


def sha(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def entry(
    session: str, ts: float, provider: Provider = Provider.CLAUDE, label: str = "published"
) -> IndexEntry:
    return IndexEntry(
        ts=ts,
        sha256=sha("snapshot", session, ts),
        path=f"/home/dev/.claude/projects/-home-dev-acme/{session}.jsonl",
        session_id=session,
        provider=provider,
        bytes=1000,
        record_count=40,
        source_sha256=sha("source", session, ts),
        strategy=label,
    )


def card(**fields: object) -> DigestBlock:
    return DigestBlock.model_validate({"covers_items": 3, **fields})


def event(session: str, ts: float, provider: Provider = Provider.CLAUDE) -> TelemetryEvent:
    return TelemetryEvent(
        ts=ts,
        provider=provider,
        session_id=session,
        source_identity_sha256=sha("identity", session),
        strategy="structured",
        action=EventAction.TRANSCRIPT_COMPACT,
        outcome=EventOutcome.APPLIED,
        trigger_tokens=150_000,
        context_tokens_before=180_000,
        context_tokens_after=60_000,
        est_reclaimed_tokens=120_000,
        items_covered=30,
        duration_ms=12.0,
    )


def archive() -> Archive:
    old = entry(CLAUDE_ID, T0)
    new = entry(CLAUDE_ID, T0 + 600)
    codex = entry(CODEX_ID, T0 + 300, Provider.CODEX)
    cards = [
        CardSeen(
            old,
            5,
            card(
                goal="secret prompt of the user",
                open_tasks=["wire the acme retry"],
                errors=["E1: acme timeout"],
                decisions=["keep the acme client"],
            ),
        ),
        CardSeen(
            new,
            9,
            card(
                goal="secret prompt of the user",
                errors=["E2: acme 401"],
                decisions=["keep the acme client"],
                current_work="fixing auth",
            ),
        ),
        CardSeen(codex, 2, card(open_tasks=["ship the billing fix"], files_touched=["billing.py"])),
    ]
    events = [event(CLAUDE_ID, T0 + 601), event(CODEX_ID, T0 + 301, Provider.CODEX)]
    return Archive(entries=[new, codex, old], cards=cards, events=events)


def test_a_pack_fills_cards_first_and_its_text_is_exactly_what_it_packed() -> None:
    found = context_pack(archive(), ["acme"], 4_000)
    assert found.matched_sessions == 1 and found.dropped_count == 0
    arms = [item.arm for item in found.items]
    assert arms == sorted(arms, key=list(Arm).index) and arms[0] is Arm.CARDS
    (best,) = [item for item in found.items if item.arm is Arm.CARDS]
    assert "E2: acme 401" in best.text  # the newest card of the session, whole
    facts = [item.text for item in found.items if item.arm is Arm.FACTS]
    # the older card's entries the packed card does not already show, open task first
    assert facts[0].startswith("- todo: wire the acme retry") and len(facts) == 2
    assert not any("keep the acme client" in text for text in facts)
    for item in found.items:
        assert item.text in found.text
    assert estimate_tokens(len(found.text.encode())) <= found.budget_used <= found.budget_tokens


def test_a_pack_is_world_only_unless_a_local_caller_widens_every_arm() -> None:
    world = context_pack(archive(), ["acme", "billing"], 4_000)
    assert world.matched_sessions == 2
    assert "secret prompt" not in world.text and "/home/dev" not in world.text
    private = context_pack(archive(), ["acme"], 4_000, include_private=True)
    assert "goal: secret prompt of the user" in private.text
    pointers = [i for i in private.items if i.arm in (Arm.CARDS, Arm.SNAPSHOTS)]
    assert pointers and all("/home/dev/" in i.text for i in pointers)
    # matching follows what may be shown: a path names the project only privately
    assert context_pack(archive(), ["home-dev-acme"], 4_000).matched_sessions == 0
    assert context_pack(archive(), ["home-dev-acme"], 4_000, True).matched_sessions == 2


@pytest.mark.parametrize("budget", [40, 90, 150, 260])
def test_a_small_budget_packs_the_first_arms_and_counts_the_rest(budget: int) -> None:
    full = context_pack(archive(), ["acme", "billing"], 4_000)
    cut = context_pack(archive(), ["acme", "billing"], budget)
    assert cut.budget_used <= budget
    assert len(cut.items) + cut.dropped_count == len(full.items)
    assert all(item in full.items for item in cut.items)
    assert estimate_tokens(len(cut.text.encode()) or 1) <= max(cut.budget_used, 1)


def test_a_session_id_prefix_is_an_entity_and_nothing_matching_is_an_empty_pack() -> None:
    by_id = context_pack(archive(), [CODEX_ID[:8]], 4_000)
    assert by_id.matched_sessions == 1 and by_id.items[0].provider is Provider.CODEX
    nothing = context_pack(archive(), ["no-such-thing"], 4_000)
    assert nothing.items == [] and nothing.text == "" and nothing.budget_used == 0


@pytest.mark.parametrize(
    ("entities", "budget"), [(["acme"], 0), (["acme"], -5), (["x"], 100), ([" ", ""], 100)]
)
def test_bad_pack_input_is_refused(entities: list[str], budget: int) -> None:
    with pytest.raises(RecallError) as refused:
        context_pack(archive(), entities, budget)
    assert refused.value.code is RecallErrorCode.INVALID_INPUT


def test_hostile_card_text_never_reaches_the_pack_raw() -> None:
    snap = entry(CLAUDE_ID, T0)
    bad = card(errors=["acme \x1b]52;c;Zm9v\x07 \u202egnp.exe"], current_work="acme \x9b2J")
    found = context_pack(Archive([snap], [CardSeen(snap, 1, bad)], []), ["acme"], 1_000)
    assert found.items
    for char in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert char not in found.text


def delta_call(
    arch: Archive,
    stored: Cursor | None = None,
    budget: int = 4_000,
    now: float = T0 + 1_000,
    since: Position | None = None,
) -> tuple[Delta, Cursor | None]:
    """A delta narrowed to the Claude session's archive (these rules hold either way)."""
    return delta(arch, CLAUDE_ID[:8], LOCAL_CALLER, budget, now, stored, since, only_session=True)


def test_a_first_wake_of_any_session_id_establishes_its_cursor_over_the_whole_vault() -> None:
    """Seed 000: the id is the caller's own session; the vault's news come to it."""
    arch = archive()
    first, cursor = delta(arch, "my-agent-session", LOCAL_CALLER, 4_000, T0 + 1_000, None)
    assert first.cursor_status is CursorStatus.ESTABLISHED and cursor is not None
    assert {i.session_id for i in first.items} == {CLAUDE_ID, CODEX_ID}  # every session's
    assert "the vault, oldest first" in first.text
    assert [i.ts for i in first.items] == sorted(i.ts for i in first.items)
    again, _ = delta(arch, "my-agent-session", LOCAL_CALLER, 4_000, T0 + 1_001, cursor)
    assert again.cursor_status is CursorStatus.UNCHANGED and again.items == []
    later = entry(CODEX_ID, T0 + 900, Provider.CODEX)
    grown = Archive([later, *arch.entries], arch.cards, arch.events)
    news, _ = delta(grown, "my-agent-session", LOCAL_CALLER, 4_000, T0 + 1_002, cursor)
    assert news.cursor_status is CursorStatus.ADVANCED and [i.ref for i in news.items] == [
        later.sha256
    ]


def test_a_delta_establishes_then_advances_and_dedupes() -> None:
    arch = archive()
    first, cursor = delta_call(arch)
    assert first.cursor_status is CursorStatus.ESTABLISHED and not first.has_more
    assert [i.ts for i in first.items] == sorted(i.ts for i in first.items)
    assert [i.arm for i in first.items] == [Arm.SNAPSHOTS, Arm.SNAPSHOTS, Arm.EVENTS]
    assert "E2: acme 401" in first.items[1].text  # a snapshot comes with its card
    again, cursor2 = delta_call(arch, cursor)
    assert again.cursor_status is CursorStatus.UNCHANGED and again.items == []
    assert cursor2 is not None and cursor2.token() == first.cursor
    later = entry(CLAUDE_ID, T0 + 900)
    grown = Archive([later, *arch.entries], arch.cards, arch.events)
    news, _ = delta_call(grown, cursor2)
    assert news.cursor_status is CursorStatus.ADVANCED
    assert [i.ref for i in news.items] == [later.sha256]


def test_a_cut_delta_loses_nothing_over_successive_calls() -> None:
    entries = [entry(CLAUDE_ID, T0 + n) for n in range(30)]
    cards = [
        CardSeen(e, 1, card(errors=[f"error {n} " + "x" * (n * 7)])) for n, e in enumerate(entries)
    ]
    events = [event(CLAUDE_ID, T0 + n + 0.5) for n in range(30)]
    arch = Archive(entries, cards, events)
    dated = [(e.ts, e.sha256) for e in entries] + [
        (e.ts, event_key(e, n)) for n, e in enumerate(events)
    ]
    expected = [ref for _, ref in sorted(dated)]
    first, _ = delta_call(arch, budget=200_000)
    assert len(first.items) == DELTA_MAX_ITEMS and first.has_more  # the item limit cuts too
    rng = random.Random(7)
    delivered, cursor = [], None
    for _ in range(500):
        got, cursor = delta_call(arch, cursor, budget=rng.randint(40, 400))
        delivered += [i.ref for i in got.items]
        if not got.has_more and got.items == [] and cursor is not None and delivered:
            break
    assert delivered == expected  # in order, each once


def test_a_delta_item_too_big_for_the_budget_comes_as_a_reference() -> None:
    snap = entry(CLAUDE_ID, T0)
    arch = Archive([snap], [CardSeen(snap, 1, card(errors=["y" * 2_000]))], [])
    got, cursor = delta_call(arch, budget=60)
    (only,) = got.items
    assert only.truncated and "y" * 50 not in got.text and not got.has_more
    assert got.budget_used <= 60 and cursor is not None and cursor.key == "s:" + snap.sha256
    tiny, held = delta_call(arch, budget=5)
    assert tiny.items == [] and tiny.has_more and held is not None and held.key == ""


def test_an_idle_cursor_expires_and_starts_again_at_now() -> None:
    arch = archive()
    _, cursor = delta_call(arch, budget=50)  # part delivered
    assert cursor is not None
    late = T0 + 1_000 + CURSOR_IDLE_EXPIRY_SECS + 1
    got, renewed = delta_call(arch, cursor, now=late)
    assert got.cursor_status is CursorStatus.EXPIRED and got.items == [] and not got.has_more
    assert renewed is not None and renewed.ts == late


def test_since_reads_statelessly_and_a_cursor_belongs_to_its_caller() -> None:
    arch = archive()
    got, store = delta_call(arch, since=(T0 + 500, ""))
    assert got.cursor_status is CursorStatus.STATELESS and store is None
    assert [i.ts for i in got.items] == [T0 + 600, T0 + 601]
    position = parse_cursor_token(got.cursor, LOCAL_CALLER)
    assert position == (T0 + 601, got.items[-1].ref)
    with pytest.raises(RecallError) as foreign:
        parse_cursor_token(got.cursor, REMOTE_CALLER)
    assert foreign.value.code is RecallErrorCode.FOREIGN_CURSOR
    for bad in ("", "gc1:local:nan:x", "gc1:local", "nonsense:local:1:x"):
        with pytest.raises(RecallError) as refused:
            parse_cursor_token(bad, LOCAL_CALLER)
        assert refused.value.code is RecallErrorCode.BAD_CURSOR


def test_a_delta_narrowed_to_a_session_names_one_known_session() -> None:
    arch = archive()
    with pytest.raises(RecallError) as unknown:
        delta(arch, "99999999", LOCAL_CALLER, 100, T0, None, only_session=True)
    assert unknown.value.code is RecallErrorCode.UNKNOWN_SESSION
    twins = Archive([entry("abcd-1", T0), entry("abcd-2", T0)], [], [])
    with pytest.raises(RecallError) as ambiguous:
        delta(twins, "abcd", LOCAL_CALLER, 100, T0, None, only_session=True)
    assert ambiguous.value.code is RecallErrorCode.AMBIGUOUS_SESSION
    for name in ("", "   ", "x" * 201):  # a cursor needs a name
        with pytest.raises(RecallError) as unnamed:
            delta(arch, name, LOCAL_CALLER, 100, T0, None)
        assert unnamed.value.code is RecallErrorCode.INVALID_INPUT
    with pytest.raises(RecallError):
        delta(arch, CLAUDE_ID, LOCAL_CALLER, 0, T0, None)


def test_two_events_of_one_instant_are_both_delivered_across_a_cut() -> None:
    snap = entry(CLAUDE_ID, T0)
    twins = [event(CLAUDE_ID, T0 + 5), event(CLAUDE_ID, T0 + 5)]  # the same instant and stream
    arch = Archive([snap], [], twins)
    delivered, cursor = [], None
    for _ in range(6):
        got, cursor = delta_call(arch, cursor, budget=70)  # one item a call
        delivered += [i.ref for i in got.items]
    assert len(delivered) == 3 and len(set(delivered)) == 3


def test_a_snapshot_taken_twice_is_one_pointer() -> None:
    pre = entry(CLAUDE_ID, T0, label="pre-compact")
    post = pre.model_copy(update={"ts": T0 + 1, "strategy": "post-compact"})  # the same bytes
    found = context_pack(Archive([post, pre], [], []), [CLAUDE_ID[:8]], 4_000)
    assert [i.ref for i in found.items if i.arm is Arm.SNAPSHOTS] == [pre.sha256]


def test_a_card_without_transcript_text_keeps_its_files_provider_and_count() -> None:
    card = DigestBlock(
        goal="the prompt",
        summary="the prompt",
        files_touched=["src/app.py"],
        decisions=["we will round per line"],
        constraints=["never call prod"],
        errors=["HTTP/1.1 500 x-request-id: 7f3a"],
        open_tasks=["TODO: retry"],
        current_work="fixing it",
        context="provider: claude",
        covers_items=8,
    )
    assert card.without_transcript_text() == DigestBlock(
        files_touched=["src/app.py"], context="provider: claude", covers_items=8
    )
    forged = card.model_copy(update={"context": "x-request-id: 7f3a"})  # not what gobtui writes
    assert forged.without_transcript_text().context == ""
