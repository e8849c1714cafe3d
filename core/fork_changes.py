"""What a fork changed: the records of two snapshots paired by their content, identity set
aside, so a fork's diff lists what it stubbed, rewrote, left out and appended instead of every
record (each of which carries the session id the fork renamed).

Pure: each record comes in as RecordFacts (its content key with the identity fields set aside,
its own id when the format has one, its type, whether it holds a stub), computed by the
provider's package. Records are numbered as their files number them, from 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel


class RecordChange(StrEnum):
    """Closed vocabulary, in the order a diff lists kinds of change."""

    STUBBED = "stubbed"
    """The same record (its id), an output of it stubbed."""
    REWRITTEN = "rewritten"
    """The same record (its id, else its place), other content."""
    REMOVED = "removed"
    """In a, not in b."""
    APPENDED = "appended"
    """In b only."""


@dataclass(frozen=True, slots=True)
class RecordFacts:
    key: str
    """The record's content with the identity fields set aside, hashed."""
    record_id: str | None
    kind: str
    stubbed: bool


class ChangedRecord(BaseModel):
    change: RecordChange
    kind: str
    record_a: int | None
    """Its record number in a (1-based), None when appended."""
    record_b: int | None
    """Its record number in b (1-based), None when removed."""


class ForkChanges(BaseModel):
    a: str
    b: str
    records_a: int
    records_b: int
    kept: int
    """Records b holds as a had them (identity set aside)."""
    counts: dict[RecordChange, int]
    changes: list[ChangedRecord]
    unpaired: str | None = None
    """Why b's records could not be paired with a's, when they could not."""


def fork_changes(
    a: str, b: str, facts_a: Sequence[RecordFacts], facts_b: Sequence[RecordFacts]
) -> ForkChanges:
    """The records b changed from a. Content first (as a multiset, in order), then what is
    left: by the record's own id where the format has one, else by place and type."""
    left = Counter(f.key for f in facts_a)
    open_b: list[int] = []
    for j, fact in enumerate(facts_b):
        if left[fact.key] > 0:
            left[fact.key] -= 1
        else:
            open_b.append(j)
    open_a: list[int] = []
    for i in reversed(range(len(facts_a))):  # the later copies of a key are the unpaired ones
        if left[facts_a[i].key] > 0:
            left[facts_a[i].key] -= 1
            open_a.append(i)
    open_a.reverse()
    kept = len(facts_b) - len(open_b)

    changes: list[ChangedRecord] = []
    by_id: dict[str | None, int] = {facts_a[i].record_id: i for i in open_a if facts_a[i].record_id}
    in_order = [i for i in open_a if not facts_a[i].record_id]
    taken: set[int] = set()
    for j in open_b:
        fact = facts_b[j]
        match = by_id.pop(fact.record_id, None) if fact.record_id else None
        if match is None and not fact.record_id:
            match = next(
                (k for k in in_order if k not in taken and facts_a[k].kind == fact.kind), None
            )
        if match is None:
            changes.append(ChangedRecord(change=RecordChange.APPENDED, kind=fact.kind,
                                         record_a=None, record_b=j + 1))  # fmt: skip
            continue
        taken.add(match)
        stubbed = fact.stubbed and not facts_a[match].stubbed
        change = RecordChange.STUBBED if stubbed else RecordChange.REWRITTEN
        changes.append(ChangedRecord(change=change, kind=fact.kind, record_a=match + 1,
                                     record_b=j + 1))  # fmt: skip
    for i in open_a:  # (taken: every record of a paired, by id or by place)
        if i not in taken:
            changes.append(ChangedRecord(change=RecordChange.REMOVED, kind=facts_a[i].kind,
                                         record_a=i + 1, record_b=None))  # fmt: skip
    changes.sort(key=lambda c: (c.record_b if c.record_b is not None else c.record_a or 0,
                                c.record_b is None))  # fmt: skip
    counts = Counter(c.change for c in changes)
    unpaired = None
    if facts_a and facts_b and kept == 0:
        unpaired = (
            "no record of B holds what a record of A holds, session ids set aside: B is not "
            "a fork of A"
        )
    return ForkChanges(
        a=a,
        b=b,
        records_a=len(facts_a),
        records_b=len(facts_b),
        kept=kept,
        counts={change: counts[change] for change in RecordChange if counts[change]},
        changes=changes,
        unpaired=unpaired,
    )
