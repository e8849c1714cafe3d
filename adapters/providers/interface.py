"""What a provider is to the rest of gobtui: one package (adapters/providers/<name>/) whose
__init__ module has the faces below; adapters.providers.registry hands them out and is the
only place that picks one by Provider. A new provider is a new package of this shape."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...core.model import ItemKind, Provider, Transcript
from ..files.jsonl import Record
from .reader import TailState

if TYPE_CHECKING:  # annotations only: a summary reader never loads the rewriting stack
    from ...core.conversation import EntryWriter
    from .rewrite_records import ForkUsage, StubMaker


class ProviderPackage(Protocol):
    """A provider's package, as its __init__ module: each heavy part loads on first use (the
    board reads states only; planning loads the parse, a fork the rewrite half)."""

    @property
    def PROVIDER(self) -> Provider: ...

    @property
    def BOUNDARY_MARKER(self) -> bytes:
        """Bytes every compaction record holds (where the live part starts)."""
        ...

    def state_class(self) -> type[TailState]:
        """The board's incremental state of one file (summaries from its head and tail)."""
        ...

    def parse_transcript(self, path: str) -> Transcript:
        """Every line of the file into items and the summary of the same records."""
        ...

    def parse_data(self, path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
        """parse_transcript() of bytes read: the whole file, or (`part`) its live part, None
        when the live branch reaches back before it."""
        ...

    def is_boundary(self, record: Record) -> bool:
        """Whether the record is a compaction from which the context starts again."""
        ...

    def live_head(self, data: bytes) -> bytes:
        """The lines of the file's start a reader of its live part still needs."""
        ...

    def rewrite_half(self) -> RewriteHalf: ...

    def card_text(self, record: Record) -> str | None:
        """The state-card text the record carries (a card gobtui or the reference wrote, in
        this provider's shape), or None for any other record, lookalikes included."""
        ...

    def conversation_builder(self) -> EntryWriter:
        """A fresh builder of this provider's conversation entries: fed each item with its
        record in file order (`add`), its `entries` are the session as one reads it."""
        ...

    def fork_path(self, source: Path, session_id: str, now: float) -> Path:
        """Where a fork of `source` under `session_id` goes (beside it, named as the client
        names its files), the same path whenever the same operation runs."""
        ...


class CardScanner(Protocol):
    """A provider's CardScan: what its card (and the fork's usage) needs from the file, fed
    record by record."""

    def feed(self, index: int, record: Record) -> None: ...

    def finish(self) -> None: ...

    def usage_points(self, live: Container[int]) -> list[tuple[int, int]]:
        """(line, reported context) of the usage records on `live` lines, in line order."""
        ...


class RewriteHalf(Protocol):
    """A provider's rewrite half (adapters.providers.<name>.rewrite): what a plan's edits
    and the state card become in its records."""

    @property
    def CardScan(self) -> Any: ...  # a class: CardScan(path, parsed), CardScan.of(lines, path)

    def has_image_output(self, record: Record) -> bool: ...

    def elide_record(self, record: Record, stub: StubMaker) -> int:
        """Stub the record's elidable outputs in place; how many were stubbed."""
        ...

    def card_records(
        self, lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
    ) -> list[Record]:
        """The records that carry the state card `card`, to append after `lines`."""
        ...

    def card_records_scanned(
        self, scan: Any, lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
    ) -> list[Record]:
        """card_records() given `scan`, a CardScan of the lines (or of lines that differ
        from them by elides only)."""
        ...

    def fork_usage(
        self, scan: Any, lines: Sequence[bytes], target: ForkUsage, appended: int
    ) -> tuple[dict[int, bytes], list[Record]]:
        """The fork's latest usage saying `target` (after `appended` new records): lines to
        replace, records to append."""
        ...

    def compacted_lines(
        self, lines: Sequence[bytes], elided: Sequence[int], card: str, seed: bytes
    ) -> dict[int, bytes]:
        """Lines of `lines` (elides applied) to replace (b"": left out) so that the prefix
        through the last `elided` line is one compaction record of the provider's carrying
        `card` (--experimental-compacted); RewriteError when that cannot be done safely."""
        ...

    def rewrite_identity_record(self, record: Record, new_id: str) -> bool: ...

    def record_id(self, record: Record) -> str | None:
        """The record's own id, the same in a fork of its file (None: the format has none)."""
        ...

    def rewrite_identity_bytes(self, line: bytes, new_id: str) -> bytes:
        """rewrite_identity_record() on a line's bytes, for a record orjson cannot write."""
        ...

    def payload_text(self, record: Record) -> str | None: ...

    @property
    def LEFT_OUT_KINDS(self) -> frozenset[ItemKind]:  # items elided by leaving their record out
        ...

    def prefix_safe(
        self, lines: Sequence[bytes], first: int, marked: Sequence[int] | None = None
    ) -> tuple[dict[int, bytes], dict[str, str | None]]:
        """Lines to replace (b"" to leave a record out) so that the provider's checks of the
        reasoning sent back hold when `first` is the first line a rewrite changed (`lines`
        with its lines in place; `marked`: thinking_lines() of the source, when kept); and
        each left-out record's parent."""
        ...

    def thinking_lines(self, lines: Sequence[bytes]) -> list[int]:
        """The source lines thinking_after_change must read (found once a source)."""
        ...

    def thinking_after_change(
        self,
        lines: Sequence[bytes],
        replaced: Mapping[int, bytes],
        appended: Sequence[bytes],
        marked: Sequence[int] | None = None,
    ) -> int | None:
        """The first line of a fork (its source's `lines`, `replaced`, `appended`) whose
        reasoning the provider's prefix check would refuse; None when it passes. `marked`:
        thinking_lines(lines), kept by the caller."""
        ...
