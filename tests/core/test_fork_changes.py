"""core.fork_changes: a fork's records paired with its source's by content (identity set
aside), then by the record's own id, else by place and type."""

from __future__ import annotations

from gobtui.core.fork_changes import RecordChange, RecordFacts, fork_changes


def facts(*spec: str) -> list[RecordFacts]:
    """`key:id:kind[:stub]` per record ('' id: none)."""
    out = []
    for item in spec:
        key, rid, kind, *stub = item.split(":")
        out.append(RecordFacts(key, rid or None, kind, bool(stub)))
    return out


def test_a_fork_lists_only_what_it_stubbed_removed_rewrote_and_appended() -> None:
    a = facts("k1:u1:user", "k2:u2:assistant", "k3:u3:user", "k4:u4:assistant", "k5:u5:user")
    b = facts("k1:u1:user", "x2:u2:assistant:stub", "k3:u3:user", "y5:u5:user", "c:u9:user")
    got = fork_changes("a", "b", a, b)
    assert got.kept == 2 and got.unpaired is None
    assert [(c.change, c.record_a, c.record_b) for c in got.changes] == [
        (RecordChange.STUBBED, 2, 2),
        (RecordChange.REWRITTEN, 5, 4),
        (RecordChange.REMOVED, 4, None),  # (in b's order: a removed record after b's same number)
        (RecordChange.APPENDED, None, 5),
    ]
    assert got.counts == {
        RecordChange.STUBBED: 1,
        RecordChange.REWRITTEN: 1,
        RecordChange.REMOVED: 1,
        RecordChange.APPENDED: 1,
    }


def test_records_without_ids_pair_by_place_and_type() -> None:
    a = facts("m::meta", "o1::output", "o2::output", "t::turn")
    b = facts("m::meta", "s1::output:stub", "o2::output", "t::turn", "card::message")
    got = fork_changes("a", "b", a, b)
    assert [(c.change, c.record_a, c.record_b) for c in got.changes] == [
        (RecordChange.STUBBED, 2, 2),
        (RecordChange.APPENDED, None, 5),
    ]


def test_a_copy_changes_nothing_and_strangers_cannot_be_paired() -> None:
    a = facts("k1:u1:user", "k2:u2:assistant", "k2:u3:assistant")
    same = fork_changes("a", "b", a, a)
    assert (same.kept, same.changes, same.counts) == (3, [], {})
    stranger = fork_changes("a", "c", a, facts("z1:v1:user"))
    assert stranger.kept == 0 and stranger.unpaired is not None
