"""The record-level model of a plan preview: each original record beside what the plan makes
of it, unchanged runs folded into one row, appended records and the state card at the end.

Pure: physical lines and a transcript in, rows out. A row holds no record text except the
state card's own lines (the card is metadata the plan wrote, and the preview shows it whole).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from gobtui.core.model import ItemKind, Transcript

FOLD_MIN_RUN = 2
"""Unchanged runs at least this long become one "… N unchanged records" row."""

_TYPE_SNIFF_BYTES = 512
_TYPE_FIELD = re.compile(rb'"type"\s*:\s*"([A-Za-z0-9_:.\-]{1,40})"')

KIND_SHORT: dict[str, str] = {
    ItemKind.SYSTEM: "sys",
    ItemKind.USER: "user",
    ItemKind.ASSISTANT: "asst",
    ItemKind.TOOL_CALL: "call",
    ItemKind.TOOL_RESULT: "result",
    ItemKind.REASONING: "think",
    ItemKind.META: "meta",
}
CARD_KIND = "card"
RECORD_KIND = "rec"


class RowChange(StrEnum):
    """What the plan does to the record a row shows. Closed vocabulary."""

    SAME = "same"
    FOLD = "fold"
    STUBBED = "stubbed"
    LEFT_OUT = "left_out"
    """The fork does not hold the record (thinking after the first change: core.thinking)."""
    CHANGED = "changed"
    API_DROP = "api_drop"
    """A cache_edit drops this tool result at the API layer; the file keeps it."""
    ADDED = "added"
    CARD_LINE = "card_line"
    """One line of the injected state card's text, shown under the appended record."""


@dataclass(frozen=True, slots=True)
class Record:
    line: int
    """0-based physical line of its file."""
    kind: str
    label: str
    size: int
    """Bytes of the line, newline excluded."""


@dataclass(frozen=True, slots=True)
class PairRow:
    change: RowChange
    before: Record | None = None
    after: Record | None = None
    count: int = 1
    """How many records a fold row stands for."""
    fold_bytes: int = 0
    text: str = ""
    """A card line's text."""

    @property
    def freed(self) -> int:
        """Bytes the rewrite frees on this record (negative when it grows)."""
        if self.before is None or self.after is None:
            return 0
        return self.before.size - self.after.size

    @property
    def diffable(self) -> bool:
        """A text diff means something for this row."""
        return self.change not in (RowChange.FOLD, RowChange.CARD_LINE)


def split_lines(data: bytes) -> list[bytes]:
    """Physical lines without their newline; a last line without one is still a line."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def sniff_type(line: bytes) -> str:
    """The record's "type" field when it shows early in the line, for rows without an item."""
    found = _TYPE_FIELD.search(line, 0, _TYPE_SNIFF_BYTES)
    return found.group(1).decode("ascii") if found else ""


def _record(
    index: int, line: bytes, items: dict[int, tuple[str, str]], default_kind: str
) -> Record:
    kind, label = items.get(index) or (default_kind, sniff_type(line))
    return Record(index, kind, label, len(line))


def _item_labels(transcript: Transcript) -> dict[int, tuple[str, str]]:
    """Line -> (short kind, label) of each item."""
    return {
        item.line_index: (KIND_SHORT.get(item.kind, str(item.kind)), item.summary or item.label)
        for item in transcript.items
    }


def unfold(row: PairRow, source: list[bytes], transcript: Transcript) -> list[PairRow]:
    """The records a fold row stands for, a row each (the same on both sides); any other row
    as it is."""
    if row.change is not RowChange.FOLD or row.before is None or row.after is None:
        return [row]
    items = _item_labels(transcript)
    lines = range(row.before.line, row.after.line + 1)
    return [
        PairRow(RowChange.SAME, record, record)
        for record in (_record(index, source[index], items, RECORD_KIND) for index in lines)
    ]


def build_rows(
    source: list[bytes],
    candidate: list[bytes],
    transcript: Transcript,
    *,
    elided: set[int] | None = None,
    api_dropped: set[int] | None = None,
    left_out: set[int] | None = None,
    card: str | None = None,
    fold_min: int = FOLD_MIN_RUN,
) -> list[PairRow]:
    """Source lines against candidate lines: the source's but the `left_out` ones, in order,
    then appended records."""
    elided = elided or set()
    api_dropped = api_dropped or set()
    left_out = left_out or set()
    items = _item_labels(transcript)
    rows: list[PairRow] = []
    run: list[Record] = []

    def flush() -> None:
        if len(run) >= max(1, fold_min):
            rows.append(
                PairRow(
                    RowChange.FOLD,
                    before=run[0],
                    after=run[-1],
                    count=len(run),
                    fold_bytes=sum(r.size for r in run),
                )
            )
        else:
            rows.extend(PairRow(RowChange.SAME, r, r) for r in run)
        run.clear()

    at = 0  # the candidate line beside the source's
    for index, line in enumerate(source):
        before = _record(index, line, items, RECORD_KIND)
        if index in left_out:
            flush()
            rows.append(PairRow(RowChange.LEFT_OUT, before, None))
            continue
        after_line = candidate[at] if at < len(candidate) else None
        at += 1
        if after_line == line and index not in api_dropped:
            run.append(before)
            continue
        flush()
        if after_line is None:  # a candidate shorter than its source: show the loss
            rows.append(PairRow(RowChange.CHANGED, before, None))
            continue
        after = Record(at - 1, before.kind, before.label, len(after_line))
        if index in api_dropped and after_line == line:
            change = RowChange.API_DROP
        elif index in elided:
            change = RowChange.STUBBED
        else:
            change = RowChange.CHANGED
        rows.append(PairRow(change, before, after))
    flush()
    for index in range(at, len(candidate)):
        line = candidate[index]
        kind = CARD_KIND if card is not None else RECORD_KIND
        rows.append(
            PairRow(RowChange.ADDED, None, Record(index, kind, sniff_type(line), len(line)))
        )
    if card is not None and len(candidate) > at:
        rows.extend(PairRow(RowChange.CARD_LINE, text=text) for text in card.split("\n"))
    return rows
