"""The text diff of one record: both sides pretty-printed as JSON (keys in their original
order), very long strings cut for display, then difflib line opcodes (linear outside the
changed middle) with long unchanged runs folded. Pure; the record viewer draws the result."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Any

import orjson

from gobtui.core.limits import (
    DIFF_CONTEXT_LINES,
    DIFF_MATCH_BUDGET,
    DIFF_MAX_LINES,
    DIFF_STRING_MAX_CHARS,
)


class DiffTag(StrEnum):
    EQUAL = "equal"
    DELETE = "delete"
    INSERT = "insert"
    FOLD = "fold"


@dataclass(frozen=True, slots=True)
class PrettyRecord:
    lines: list[str]
    cut_strings: int = 0
    """Strings shortened for display."""
    truncated: bool = False
    """More than DIFF_MAX_LINES lines: the rest is not shown."""
    is_json: bool = True


@dataclass(frozen=True, slots=True)
class DiffLine:
    tag: DiffTag
    old_no: int | None
    new_no: int | None
    text: str


@dataclass(frozen=True, slots=True)
class SplitRow:
    left: DiffLine | None
    right: DiffLine | None


def _cut_marker(text: str) -> str:
    # A short digest of the whole string, so two cut strings that differ past the cut still
    # read as different lines in the diff.
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"… [cut: {len(text):,} chars, #{digest}]"


def _cut_strings(value: Any, counter: list[int]) -> Any:
    if isinstance(value, str):
        if len(value) > DIFF_STRING_MAX_CHARS:
            counter[0] += 1
            return value[:DIFF_STRING_MAX_CHARS] + _cut_marker(value)
        return value
    if isinstance(value, list):
        return [_cut_strings(v, counter) for v in value]
    if isinstance(value, dict):
        return {k: _cut_strings(v, counter) for k, v in value.items()}
    return value


def _bounded(lines: list[str], cut: int, is_json: bool) -> PrettyRecord:
    if len(lines) > DIFF_MAX_LINES:
        return PrettyRecord(lines[:DIFF_MAX_LINES], cut, True, is_json)
    return PrettyRecord(lines, cut, False, is_json)


def _indented(value: Any) -> str:
    try:  # orjson's encoder is C all the way; json's indenting encoder is pure Python
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # integers past 64 bits, lone surrogates: the exact, slower path
        return json.dumps(value, indent=2, ensure_ascii=False)


def pretty_record(line: bytes | None) -> PrettyRecord:
    """A record as indented JSON lines; a line that is not JSON is shown raw (and cut)."""
    if line is None:
        return PrettyRecord([])
    counter = [0]
    try:
        # json, not orjson, reads it: integers past 64 bits and lone surrogates stay exact.
        value = json.loads(line)
        text = _indented(_cut_strings(value, counter))
    except (ValueError, RecursionError):
        raw = line.decode("utf-8", "replace")
        counter[0] = 0
        if len(raw) > DIFF_STRING_MAX_CHARS:
            raw, counter[0] = raw[:DIFF_STRING_MAX_CHARS] + _cut_marker(raw), 1
        return _bounded([raw], counter[0], False)
    return _bounded(text.split("\n"), counter[0], True)


Opcode = tuple[str, int, int, int, int]


def _aligned(a: list[str], b: list[str]) -> list[Opcode]:
    """Same-length sides compared line by line: runs of equal and of replaced lines."""
    codes: list[Opcode] = []
    start = 0
    for index in range(1, len(a) + 1):
        if index == len(a) or (a[index] == b[index]) != (a[start] == b[start]):
            tag = "equal" if a[start] == b[start] else "replace"
            codes.append((tag, start, index, start, index))
            start = index
    return codes


def _middle(a: list[str], b: list[str]) -> list[Opcode]:
    if not a or not b:
        return [("insert", 0, 0, 0, len(b))] if b else [("delete", 0, len(a), 0, 0)] if a else []
    if len(a) * len(b) <= DIFF_MATCH_BUDGET:
        # autojunk off: in a pretty-printed record, frequent lines ("}," ...) are real lines.
        return list(SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
    # difflib turns quadratic (or worse) on big blocks of repetitive JSON lines: stay linear.
    if len(a) == len(b):
        return _aligned(a, b)
    return [("replace", 0, len(a), 0, len(b))]


def _opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib-style opcodes; the common head and tail are matched first, in linear time,
    so a stub in a large record costs what the changed lines cost."""
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    for tag, i1, i2, j1, j2 in _middle(a[head : len(a) - tail], b[head : len(b) - tail]):
        codes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return codes


def _equal_run(
    i1: int, i2: int, j1: int, first: bool, last: bool, context: int
) -> list[tuple[int, int] | int]:
    """Index pairs of an equal run to show, with an int (the hidden count) where it folds."""
    n = i2 - i1
    head = 0 if first else context
    tail = 0 if last else context
    if n <= head + tail + 1:
        return [(i1 + k, j1 + k) for k in range(n)]
    shown: list[tuple[int, int] | int] = [(i1 + k, j1 + k) for k in range(head)]
    shown.append(n - head - tail)
    shown.extend((i2 - tail + k, j1 + n - tail + k) for k in range(tail))
    return shown


def _fold_line(hidden: int) -> DiffLine:
    return DiffLine(DiffTag.FOLD, None, None, f"⋯ {hidden} unchanged lines")


def unified_rows(a: list[str], b: list[str], context: int = DIFF_CONTEXT_LINES) -> list[DiffLine]:
    """One column: removed lines, then added ones, within folded unchanged context."""
    codes = _opcodes(a, b)
    out: list[DiffLine] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            for item in _equal_run(i1, i2, j1, n == 0, n == len(codes) - 1, context):
                if isinstance(item, int):
                    out.append(_fold_line(item))
                else:
                    out.append(DiffLine(DiffTag.EQUAL, item[0] + 1, item[1] + 1, a[item[0]]))
            continue
        out.extend(DiffLine(DiffTag.DELETE, i + 1, None, a[i]) for i in range(i1, i2))
        out.extend(DiffLine(DiffTag.INSERT, None, j + 1, b[j]) for j in range(j1, j2))
    return out


def split_rows(a: list[str], b: list[str], context: int = DIFF_CONTEXT_LINES) -> list[SplitRow]:
    """Two columns: a changed block pairs its removed and added lines side by side."""
    codes = _opcodes(a, b)
    out: list[SplitRow] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            for item in _equal_run(i1, i2, j1, n == 0, n == len(codes) - 1, context):
                if isinstance(item, int):
                    fold = _fold_line(item)
                    out.append(SplitRow(fold, fold))
                else:
                    i, j = item
                    out.append(
                        SplitRow(
                            DiffLine(DiffTag.EQUAL, i + 1, j + 1, a[i]),
                            DiffLine(DiffTag.EQUAL, i + 1, j + 1, b[j]),
                        )
                    )
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = DiffLine(DiffTag.DELETE, i + 1, None, a[i]) if i < i2 else None
            right = DiffLine(DiffTag.INSERT, None, j + 1, b[j]) if j < j2 else None
            out.append(SplitRow(left, right))
    return out


@dataclass(frozen=True, slots=True)
class RecordDiff:
    """Both sides of one record, ready to draw either way."""

    before: PrettyRecord
    after: PrettyRecord

    @property
    def cut_strings(self) -> int:
        return self.before.cut_strings + self.after.cut_strings

    @property
    def truncated(self) -> bool:
        return self.before.truncated or self.after.truncated

    def unified(self) -> list[DiffLine]:
        return unified_rows(self.before.lines, self.after.lines)

    def split(self) -> list[SplitRow]:
        return split_rows(self.before.lines, self.after.lines)


def record_diff(before: bytes | None, after: bytes | None) -> RecordDiff:
    return RecordDiff(pretty_record(before), pretty_record(after))
