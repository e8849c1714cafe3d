"""Pure rules over a snapshot's records: diff, state cards, search counts, UTF-8 pages.

Records are physical JSONL lines (0-based, like TranscriptItem.line_index); the adapter
streams them out of a verified snapshot and hands them here, decoded or as bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..edits import DigestBlock
from .errors import VaultError, VaultErrorCode
from .reports import RecallHit, SnapshotDiff


def diff_records(
    a: str, b: str, records_a: Sequence[tuple[str, str]], records_b: Sequence[tuple[str, str]]
) -> SnapshotDiff:
    """Record-level comparison of snapshots a and b given (record sha256, type) per record.

    Records are counted as a multiset: a record b holds twice and a once is one added."""
    counts_a = Counter(sha for sha, _ in records_a)
    counts_b = Counter(sha for sha, _ in records_b)
    more_b, more_a = counts_b - counts_a, counts_a - counts_b
    return SnapshotDiff(
        a=a,
        b=b,
        records_a=len(records_a),
        records_b=len(records_b),
        added=_only_in(records_b, more_b),
        removed=_only_in(records_a, more_a),
        records_added=sum(more_b.values()),
        records_removed=sum(more_a.values()),
        unchanged=sum((counts_a & counts_b).values()),
        types_a=dict(sorted(Counter(kind for _, kind in records_a).items())),
        types_b=dict(sorted(Counter(kind for _, kind in records_b).items())),
    )


def _only_in(records: Iterable[tuple[str, str]], extra: Counter[str]) -> list[str]:
    """The hashes `extra` counts, in the order of `records`, each once."""
    seen: set[str] = set()
    out = []
    for sha, _ in records:
        if sha in extra and sha not in seen:
            seen.add(sha)
            out.append(sha)
    return out


def count_string_matches(value: Any, query: str) -> int:
    """Literal, case-sensitive, non-overlapping hits in decoded string values (never keys)."""
    if isinstance(value, str):
        return value.count(query)
    if isinstance(value, list):
        return sum(count_string_matches(item, query) for item in value)
    if isinstance(value, dict):
        return sum(count_string_matches(item, query) for item in value.values())
    return 0


def may_match(line: bytes, query: bytes) -> bool:
    """False only when the line surely holds no hit: it has no escapes and not the query bytes.

    Without a backslash a JSON line's strings are its raw bytes, so a raw miss is a miss.
    """
    return query in line or b"\\" in line


# --- state cards -----------------------------------------------------------------------------


def card_hits(card: DigestBlock, query: str | None, with_prompt: bool = True) -> int:
    """Case-insensitive substring hits of `query` across every text field of the card
    (without the goal and summary, which quote the user's prompt, unless `with_prompt`:
    a caller not shown them must not find them by guessing either)."""
    if not query:
        return 0
    needle = query.casefold()
    prompt: tuple[str, ...] = (card.goal, card.summary) if with_prompt else ()
    scalars = (*prompt, card.current_work, card.context)
    lists = (
        card.concepts,
        card.files_touched,
        card.decisions,
        card.constraints,
        card.errors,
        card.open_tasks,
    )
    total = sum(value.casefold().count(needle) for value in scalars)
    return total + sum(entry.casefold().count(needle) for entries in lists for entry in entries)


def rank_recall(hits: Iterable[RecallHit], limit: int) -> tuple[list[RecallHit], int]:
    """Most hits first, then the newest snapshot, then the latest record: (first `limit`, all)."""
    ranked = sorted(hits, key=lambda h: (-h.hits, -h.ts, -h.record_index))
    return ranked[:limit], len(ranked)


# --- paging ----------------------------------------------------------------------------------


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def utf8_page(data: bytes, offset: int, max_bytes: int) -> tuple[str, int | None]:
    """A page of a UTF-8 record from byte `offset`: (text, next offset, or None at the end).

    The offset must fall on a character boundary; the end is moved back to one, so a page
    holds at most max_bytes and, with max_bytes >= 4, is never empty before the end.
    """
    if max_bytes < 1:
        raise VaultError(VaultErrorCode.INVALID_INPUT, "a page needs at least one byte")
    if not 0 <= offset <= len(data):
        raise VaultError(
            VaultErrorCode.INVALID_INPUT,
            f"offset {offset} is out of range: the record has {len(data)} bytes",
        )
    if offset < len(data) and _continuation(data[offset]):
        raise VaultError(
            VaultErrorCode.INVALID_INPUT,
            f"offset {offset} is inside a UTF-8 character (not a boundary) of the record",
        )
    end = min(len(data), offset + max_bytes)
    while offset < end < len(data) and _continuation(data[end]):
        end -= 1
    try:
        text = data[offset:end].decode("utf-8")
    except UnicodeDecodeError:
        raise VaultError(VaultErrorCode.NOT_UTF8, "the record is not valid UTF-8") from None
    return text, (end if end < len(data) else None)
