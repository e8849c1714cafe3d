"""Plans applied to one source in memory, line by line, for eval and previews.

`SourceRewriter.overlay(plan)` is what `apply_plan` gives, kept as an Overlay of the source:
the lines an elide rewrote and the records a card appends, every other line being the
source's own. `materialize` joins it into exactly the bytes apply_plan returns; the checks
run in the same order, so a refused plan raises the same RewriteError. What is shared between
the plans of one source:

- a rewritten line: it is a function of the source line, its item and its stub, so a line
  elided by several plans with the same stub is rewritten once;
- the card's scan of the file (a CardScan), made once over the source lines: an elide
  changes only tool-output contents, nothing the scan reads;
- the source's sha256, from which appended records' ids derive.

core.verify.SourceChecks verifies an Overlay the same way, reading only its new lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from ...core.edits import CompactionPlan, ElideEdit
from ...core.model import Provider, Transcript, TranscriptItem
from ...core.salience import payload_excerpt
from ...core.verify import SourceChecks
from ...core.verify.lines import LineFact, read_value
from ..files.jsonl import Record, decode_line
from ..providers.interface import CardScanner, RewriteCode, RewriteError
from ..providers.registry import verify_checks
from ..providers.rewrite_records import encode_line, line_ending, plan_seed_of
from .apply import (
    _elide_line,
    checked_edits,
    fork_usage_target,
    provider_half,
    relinked,
    stubbed,
)


def line_starts(data: bytes) -> list[int]:
    """Where each line of `data` starts (lines as split_lines cuts them), then len(data)."""
    starts: list[int] = []
    find = data.find
    size = len(data)
    start = 0
    while start < size:
        starts.append(start)
        end = find(b"\n", start)
        start = size if end < 0 else end + 1
    starts.append(size)
    return starts


class SourceLines(Sequence[bytes]):
    """The lines of `data`, each with its terminator, sliced on demand (no copy of the file)."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes, starts: list[int] | None = None) -> None:
        self.data = data
        self.starts = starts if starts is not None else line_starts(data)

    def __len__(self) -> int:
        return len(self.starts) - 1

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.data[self.starts[index] : self.starts[index + 1]]

    def __iter__(self) -> Iterator[bytes]:
        data, starts = self.data, self.starts
        for index in range(len(starts) - 1):
            yield data[starts[index] : starts[index + 1]]


class _Candidate(Sequence[bytes]):
    """Source lines with some replaced (what card_records reads between elide and append)."""

    __slots__ = ("replaced", "source")

    def __init__(self, source: SourceLines, replaced: Mapping[int, bytes]) -> None:
        self.source = source
        self.replaced = replaced

    def __len__(self) -> int:
        return len(self.source)

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        found = self.replaced.get(index)
        return found if found is not None else self.source[index]


@dataclass(frozen=True, slots=True)
class Overlay:
    """A compacted transcript as changes to its source's lines."""

    replaced: dict[int, bytes]
    """Line index -> the line's new bytes (with its terminator)."""
    appended: list[bytes]
    """New lines after the source's last."""
    size: int
    """Bytes of the result."""


StubKey = tuple[int, str | None, str | None]
"""(line, its per-item stub, or the template when it has none): what a rewrite depends on."""


class SourceRewriter:
    """Plans applied to one source (see the module docstring). `transcript` is the parse of
    `data`; `source_sha256` (the digest of `data`) and `scan` (a CardScan of its lines, fed
    every record and finished) may come from a reader that went through the source already."""

    def __init__(
        self,
        data: bytes,
        provider: Provider,
        transcript: Transcript,
        *,
        lines: SourceLines | None = None,
        source_sha256: bytes | None = None,
        scan: CardScanner | None = None,
    ) -> None:
        self.data = data
        self.provider = provider
        self.transcript = transcript
        self.lines = lines if lines is not None else SourceLines(data)
        self._sha256 = source_sha256
        self._scan = scan
        self._half = provider_half(provider)
        self._items: dict[int, TranscriptItem] | None = None
        self._rewritten: dict[StubKey, bytes | RewriteError] = {}
        self._thinking: list[int] | None = None

    def overlay(self, plan: CompactionPlan, *, compacted: bool = False) -> Overlay:
        """apply_plan(data, provider, plan, transcript), as an Overlay; `compacted`: the
        elided prefix and the card folded into one compaction record of the provider's
        instead (RewriteHalf.compacted_lines, --experimental-compacted)."""
        transcript, provider = self.transcript, self.provider
        digests, targets = checked_edits(plan, transcript, provider, self.lines)
        replaced: dict[int, bytes] = {}
        if self._items is None:
            self._items = {item.line_index: item for item in self.transcript.items}
        for index in stubbed(targets, self._items, self._half):
            replaced[index] = self._elided(index, targets[index])
        candidate = _Candidate(self.lines, replaced)
        safe, left_out = (
            self._half.prefix_safe(candidate, min(targets), self._thinking_lines())
            if targets
            else ({}, {})
        )
        replaced.update(safe)
        records: list[Record] = []
        if compacted:
            if not digests or not targets:
                raise RewriteError(
                    RewriteCode.COMPACTED_UNSAFE,
                    "a compacted record needs a plan that elides and carries a state card "
                    "(strategy compacted)",
                )
            seed = plan_seed_of(self._source_digest(), provider, plan) + b"compacted"
            replaced.update(
                self._half.compacted_lines(candidate, sorted(targets), digests[0].render(), seed)
            )
        elif digests:
            seed = plan_seed_of(self._source_digest(), provider, plan)
            records = relinked(
                self._half.card_records_scanned(
                    self._card_scan(), candidate, transcript, digests[0].render(), seed
                ),
                left_out,
            )
        target = fork_usage_target(plan, transcript)
        if target is not None:
            restated, usage = self._half.fork_usage(
                self._card_scan(), candidate, target, len(records)
            )
            replaced.update(restated)
            records += usage
        appended = self._append(candidate, replaced, records)
        size = len(self.data) + sum(len(piece) for piece in appended)
        starts = self.lines.starts
        for index, piece in replaced.items():
            size += len(piece) - (starts[index + 1] - starts[index])
        if size > len(self.data):
            raise RewriteError(
                RewriteCode.GREW,
                f"the result would grow the file by {size - len(self.data)} bytes",
            )
        return Overlay(replaced, appended, size)

    def thinking_violation(self, overlay: Overlay) -> int | None:
        """The first line of the overlay's fork holding reasoning the provider's prefix
        check refuses (RewriteHalf.thinking_after_change); None when it passes."""
        return self._half.thinking_after_change(
            self.lines, overlay.replaced, overlay.appended, self._thinking_lines()
        )

    def _thinking_lines(self) -> list[int]:
        """The source's lines that may hold thinking: one pass, for every overlay of it."""
        if self._thinking is None:
            self._thinking = self._half.thinking_lines(self.lines)
        return self._thinking

    def apply(self, plan: CompactionPlan) -> bytes:
        """apply_plan(data, provider, plan, transcript)."""
        return self.materialize(self.overlay(plan))

    def materialize(self, overlay: Overlay) -> bytes:
        """The bytes an overlay stands for (the source's runs joined as views, not copies)."""
        return b"".join(self._pieces(overlay))

    def sha256(self, overlay: Overlay, prefix: bytes | memoryview = b"") -> str:
        """The digest of `prefix` and the overlay's bytes, without joining them."""
        digest = hashlib.sha256(prefix)
        for piece in self._pieces(overlay):
            digest.update(piece)
        return digest.hexdigest()

    def _pieces(self, overlay: Overlay) -> list[bytes | memoryview]:
        data, starts = memoryview(self.data), self.lines.starts
        pieces: list[bytes | memoryview] = []
        at = 0
        for index in sorted(overlay.replaced):
            pieces.append(data[at : starts[index]])
            pieces.append(overlay.replaced[index])
            at = starts[index + 1]
        pieces.append(data[at:])
        pieces.extend(overlay.appended)
        return pieces

    def _elided(self, index: int, edit: ElideEdit) -> bytes:
        per_item = edit.per_item_stubs.get(index)
        key = (index, per_item, edit.stub_template if per_item is None else None)
        found = self._rewritten.get(key)
        if found is None:
            if self._items is None:
                self._items = {item.line_index: item for item in self.transcript.items}
            try:
                found = _elide_line(self.lines, index, edit, self._items.get(index), self._half)
            except RewriteError as error:
                found = error
            self._rewritten[key] = found
        if isinstance(found, RewriteError):
            raise found
        return found

    def _append(
        self, candidate: _Candidate, replaced: dict[int, bytes], records: list[Record]
    ) -> list[bytes]:
        """adapters.rewrite.apply.append_records on the candidate's lines: the new lines, in the
        file's line-ending style; an unterminated last line gets the terminator (in
        `replaced`) unless it is not a record (torn_tail)."""
        if not records:
            return []
        ending = b"\n"
        for index in range(len(candidate) - 1, -1, -1):
            found = line_ending(candidate[index])
            if found:
                ending = found
                break
        last = len(candidate) - 1
        while last > 0 and not candidate[last]:  # a record the rewrite left out
            last -= 1
        final_newline = last < 0 or candidate[last].endswith(b"\n")
        if not final_newline:
            if not isinstance(decode_line(candidate[last].strip()), dict):
                raise RewriteError(
                    RewriteCode.TORN_TAIL, f"line {last} is unfinished; nothing appended"
                )
            replaced[last] = candidate[last] + ending
        encoded = [encode_line(record, ending) for record in records]
        if not final_newline:
            encoded[-1] = encoded[-1][: -len(ending)]
        return encoded

    def _source_digest(self) -> bytes:
        if self._sha256 is None:
            self._sha256 = hashlib.sha256(self.data).digest()
        return self._sha256

    def _card_scan(self) -> CardScanner:
        if self._scan is None:
            scan = self._half.CardScan(self.transcript.path, self.transcript)
            for index, line in enumerate(self.lines):
                record = decode_line(line.strip())
                if isinstance(record, dict):
                    scan.feed(index, record)
            scan.finish()
            self._scan = scan
        return self._scan


@dataclass(frozen=True, slots=True)
class SourceRead:
    """One pass over a source for planning: its lines, the elided-output heads the card and
    the probes read, the card's scan, and verify()'s per-line facts."""

    lines: SourceLines
    payloads: dict[int, str]
    scan: CardScanner
    checks: SourceChecks


def read_source(
    data: bytes, provider: Provider, transcript: Transcript, payload_limit: int
) -> SourceRead:
    """Every line read once (`transcript` is the parse of `data`): payload_texts() of the
    elidable lines, a finished CardScan, and SourceChecks over verify's line facts."""
    half = provider_half(provider)
    elidable = {item.line_index for item in transcript.items if item.elidable}
    scan = half.CardScan(transcript.path, transcript)
    checks = verify_checks(provider)
    facts: list[LineFact] = []
    starts: list[int] = []
    payloads: dict[int, str] = {}
    size = len(data)
    find = data.find
    start = 0
    index = 0
    while start < size:
        end = find(b"\n", start)
        stop = size if end < 0 else end
        starts.append(start)
        fact, value = read_value(data, start, stop, stop == size, checks)
        facts.append(fact)
        # What decode_line(line.strip()) gives: orjson's value, or (for a line orjson refused
        # with its ends unstripped) a second try.
        record = decode_line(data[start:stop].strip()) if value is None else value
        if type(record) is dict:
            scan.feed(index, record)
            if index in elidable:
                text = half.payload_text(record)
                if text:
                    payloads[index] = payload_excerpt(text, payload_limit)
        start = size if end < 0 else end + 1
        index += 1
    starts.append(size)
    scan.finish()
    lines = SourceLines(data, starts)
    return SourceRead(lines, payloads, scan, SourceChecks(data, checks, facts, starts))
