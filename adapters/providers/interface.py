"""The provider contract, in one place: what a provider package (adapters/providers/<name>/,
its __init__ module) must have, the value types it takes and returns, and the errors it may
raise. adapters.providers.registry hands the packages out and is the only place that picks one
by Provider; mypy checks there that each product package satisfies ProviderPackage. A new
provider is one package of this shape plus one registry line (tests/adapters/toy_provider
shows one).

What the pure core decides about a provider (cache edits, the thinking rule, where its client
compacts) is not here but in its Provider's traits (core.model.ProviderTraits): core cannot
ask a package. The shared implementation a package may build on stays beside this module
(reader: cursors over files; full_parse: one-pass parses; rewrite_records: line and stub
helpers); only its contract types are defined here."""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from ...core.model import Coverage, ItemKind, Provider, SessionSummary, Transcript
from ..files.jsonl import Loads, Record

if TYPE_CHECKING:  # annotations only: a summary reader never loads core.conversation
    from ...core.conversation import EntryWriter
    from ...core.verify import RecordChecks
    from .record_text import RecordText

JsonObject = dict[str, object]
"""A JSON object as a cache stores it (what TailState.to_json writes and from_json reads)."""

StubMaker = Callable[[int], str]
"""The stub text for an output of so many bytes."""

ForkUsage = tuple[int, int]
"""(the fork's projected context, the part of it after the source's last usage record: the
records that followed it and the card)."""


# -- errors ------------------------------------------------------------------------------------


class RewriteCode(StrEnum):
    """Why a rewrite was refused. Closed vocabulary."""

    PROVIDER_MISMATCH = "provider_mismatch"
    CONTROL_EDIT = "control_edit"
    DUPLICATE_LINE = "duplicate_line"
    MULTIPLE_DIGESTS = "multiple_digests"
    LINE_OUT_OF_RANGE = "line_out_of_range"
    NOT_JSON = "not_json"
    NOT_ELIDABLE = "not_elidable"
    IMAGE_OUTPUT = "image_output"
    UNSUPPORTED_SHAPE = "unsupported_shape"
    TORN_TAIL = "torn_tail"
    TOO_DEEP = "too_deep"
    GREW = "grew"
    BAD_SESSION_ID = "bad_session_id"
    COMPACTED_UNSAFE = "compacted_unsafe"
    """--experimental-compacted: the prefix cannot be folded into one compacted record."""


class RewriteError(Exception):
    """A refused rewrite: a closed code and a one-line message without transcript content.
    The one error a rewrite half raises on purpose (anything else is a bug)."""

    def __init__(self, code: RewriteCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code


# -- the board's state of one file -------------------------------------------------------------


class Summarising(Protocol):
    """A provider's state that can say what it saw: its summary, given the file's facts."""

    def summary(
        self,
        *,
        path: str,
        size: int,
        mtime: float,
        coverage: Coverage,
        records: int,
        bad_reasons: dict[str, int],
        torn: bool,
    ) -> SessionSummary:
        """The session as the records fed so far say it, with the file's own facts (as
        read by the caller) filled in; raises nothing (a record it cannot read is skipped
        when fed)."""
        ...


class TailState(Summarising, Protocol):
    """A provider's running state over the records read so far (adapters.providers.reader
    drives it: cold from a file's head and tail, then incrementally)."""

    provider: ClassVar[Provider]
    tail_marker: ClassVar[tuple[bytes, ...]]
    """What a cold read of a big file looks for behind its head: the first (the latest usage)
    in the tail window, each other (say, the record naming the model) in the newest line
    holding it, within TAIL_SECONDARY_MAX_BYTES of that window."""
    tail_loads: ClassVar[Loads]
    """How this reader decodes a line: orjson.loads, or one that reads a line the summary
    needs only the first bytes of from those (adapters.providers.codex.skim)."""

    def __init__(self, path: str) -> None: ...

    def feed(self, record: Record, line_len: int) -> None:
        """Take the next record (in file order, or the one line a cold read picks behind the
        head); `line_len` is its line's bytes. Raises nothing: a shape it does not know is
        ignored."""
        ...

    @property
    def head_known(self) -> bool:
        """Whether what only a file's head says (its id, folder, title) is known."""
        ...

    @classmethod
    def from_json(cls, path: str, data: JsonObject) -> TailState:
        """The state to_json() wrote, for the file at `path`. Raises KeyError, TypeError or
        ValueError on data of another shape (the cache drops that entry)."""
        ...

    def to_json(self) -> JsonObject:
        """The state as JSON, for the session cache (read back by from_json)."""
        ...


TailStateFactory = Callable[[str], TailState]
"""A TailState class, or anything that makes one for a path (a Callable, not a Protocol of
__call__: mypy matches a Protocol's class against the former only)."""


# -- the package -------------------------------------------------------------------------------


class ProviderPackage(Protocol):
    """A provider's package, as its __init__ module: each heavy part loads on first use (the
    board reads states only; planning loads the parse, a fork the rewrite half)."""

    @property
    def PROVIDER(self) -> Provider:
        """Which provider this is; its `traits` say what core decides on for it."""
        ...

    @property
    def BOUNDARY_MARKER(self) -> bytes:
        """Bytes every compaction record holds (where the live part starts)."""
        ...

    def state_class(self) -> type[TailState]:
        """The class of the board's incremental state of one file (summaries from its head
        and tail)."""
        ...

    def parse_transcript(self, path: str) -> Transcript:
        """Every line of the file into items and the summary of the same records. Raises
        OSError when the file cannot be read; a line that is not a record is counted in the
        summary, never raised."""
        ...

    def parse_data(self, path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
        """parse_transcript() of bytes read: the whole file, or (`part`) its live part, None
        when the live branch reaches back before it (parse the whole file then). Raises
        nothing on bad bytes (counted, as parse_transcript does)."""
        ...

    def is_boundary(self, record: Record) -> bool:
        """Whether the record is a compaction from which the context starts again (one
        holding BOUNDARY_MARKER but of another kind is not)."""
        ...

    def live_head(self, data: bytes) -> bytes:
        """The lines of the file's start (`data`: the whole file) a reader of its live part
        still needs, b"" when none."""
        ...

    def rewrite_half(self) -> RewriteHalf:
        """The provider's rewrite half (loaded on first call): what a fork's edits and card
        become in its records."""
        ...

    def card_text(self, record: Record) -> str | None:
        """The state-card text the record carries (a card gobtui or the reference wrote, in
        this provider's shape), or None for any other record, lookalikes included."""
        ...

    def conversation_builder(self) -> EntryWriter:
        """A fresh builder of this provider's conversation entries: fed each item with its
        record in file order (`add`), its `entries` are the session as one reads it."""
        ...

    @property
    def SESSION_DIRS(self) -> tuple[str, ...]:
        """The folders of its client's home that hold its transcripts (discovery walks them,
        the watcher watches them, a hook's transcript must lie below one)."""
        ...

    @property
    def SESSION_MAX_DEPTH(self) -> int:
        """How deep below a session folder discovery looks (the folder itself is 1)."""
        ...

    def file_layout(self, parts: tuple[str, ...]) -> tuple[bool, tuple[str, ...] | None, bool]:
        """For a .jsonl file at <session folder>/<parts>: (whether it is a subagent's, its
        parent transcript's parts when the layout names one, whether the client puts a
        transcript there). Raises nothing."""
        ...

    @property
    def SNIFF_KEYS(self) -> tuple[bytes, ...]:
        """Quoted top-level keys (b'"payload"') that mark this provider's records in a first
        line too long (or too unfinished) to decode: the provider whose key comes first in
        the line claims the file (adapters.sessions.discovery)."""
        ...

    def owns(self, record: Record) -> bool:
        """Whether this provider wrote `record`, judged by its content, not its file's name
        (the registry asks each package in turn; the first to claim it wins)."""
        ...

    def record_type(self, record: Record) -> tuple[str, str | None] | None:
        """The record's kind and its sub-kind where the format has one (("response_item",
        "message")), as the vault lists it; None when it names no kind. Raises nothing."""
        ...

    def session_identity(self, record: Record) -> tuple[str, bool] | None:
        """The session id `record` names as this provider writes it, and whether that settles
        the file's identity (False: a line a later one may overrule); None when it names none.
        Raises nothing (any JSON object)."""
        ...

    def fork_path(self, source: Path, session_id: str, now: float) -> Path:
        """Where a fork of `source` under `session_id` goes (beside it, named as the client
        names its files), the same path whenever the same operation runs."""
        ...

    def verify_checks(self) -> RecordChecks:
        """This provider's checks of its records, for core.verify (verify, SourceChecks):
        what each record says to them (a pure function of it) and a fresh checker of one
        file's records in order. The same value every call; raises nothing."""
        ...

    def record_text(self) -> RecordText:
        """How this provider's records read in the vault views: which fields are text, what
        heads them, which fields every record repeats, where a tool's input is. The same
        value every call; raises nothing."""
        ...


class CardScanner(Protocol):
    """A provider's CardScan: what its card (and the fork's usage) needs from the file, fed
    record by record."""

    def feed(self, index: int, record: Record) -> None:
        """Take line `index`'s record (every record, in file order); raises nothing."""
        ...

    def finish(self) -> None:
        """The file is read: settle what needs all of it (the live leaf)."""
        ...

    def usage_points(self, live: Container[int]) -> list[tuple[int, int]]:
        """(line, reported context) of the usage records on `live` lines, in line order."""
        ...


class CardScanClass(Protocol):
    """A provider's CardScan class: a scan is made fresh and fed (`CardScan(path, parsed)`),
    or of lines at once (`CardScan.of`)."""

    def __call__(self, path: str, parsed: Transcript | None = None) -> CardScanner:
        """An empty scan of the file at `path`; `parsed` (its parse, when there is one)
        spares it what the parse found already."""
        ...

    def of(self, lines: Sequence[bytes], path: str) -> CardScanner:
        """A finished scan of `lines` (each line decoded; one that is not a record is
        skipped)."""
        ...


class RewriteHalf(Protocol):
    """A provider's rewrite half (adapters.providers.<name>.rewrite): what a plan's edits
    and the state card become in its records."""

    @property
    def CardScan(self) -> CardScanClass:
        """The class whose scans card_records_scanned() and fork_usage() take."""
        ...

    def has_image_output(self, record: Record) -> bool:
        """Whether the record's tool output holds an image (an elide refuses those)."""
        ...

    def elide_record(self, record: Record, stub: StubMaker) -> int:
        """Stub the record's elidable outputs in place; how many were stubbed. RewriteError
        (unsupported_shape, image_output) when the record holds no output it can stub."""
        ...

    def card_records(
        self, lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
    ) -> list[Record]:
        """The records that carry the state card `card`, to append after `lines` (their ids
        derived from `seed`: rewrite_records.derived_uuid)."""
        ...

    def card_records_scanned(
        self,
        scan: CardScanner,
        lines: Sequence[bytes],
        transcript: Transcript,
        card: str,
        seed: bytes,
    ) -> list[Record]:
        """card_records() given `scan`, this half's CardScan of the lines (or of lines that
        differ from them by elides only). TypeError when `scan` is another provider's."""
        ...

    def fork_usage(
        self, scan: CardScanner, lines: Sequence[bytes], target: ForkUsage, appended: int
    ) -> tuple[dict[int, bytes], list[Record]]:
        """The fork's latest usage saying `target` (after `appended` new records): lines to
        replace, records to append. TypeError when `scan` is another provider's CardScan."""
        ...

    def compacted_lines(
        self, lines: Sequence[bytes], elided: Sequence[int], card: str, seed: bytes
    ) -> dict[int, bytes]:
        """Lines of `lines` (elides applied) to replace (b"": left out) so that the prefix
        through the last `elided` line is one compaction record of the provider's carrying
        `card` (--experimental-compacted); RewriteError when that cannot be done safely."""
        ...

    def rewrite_identity_record(self, record: Record, new_id: str) -> bool:
        """Make the record say the session id `new_id` (in place); whether it named one."""
        ...

    def record_id(self, record: Record) -> str | None:
        """The record's own id, the same in a fork of its file (None: the format has none)."""
        ...

    def rewrite_identity_bytes(self, line: bytes, new_id: str) -> bytes:
        """rewrite_identity_record() on a line's bytes, for a record orjson cannot write."""
        ...

    def payload_text(self, record: Record) -> str | None:
        """The text of the record's elidable output (what an elide stubs), None when it has
        none."""
        ...

    @property
    def LEFT_OUT_KINDS(self) -> frozenset[ItemKind]:
        """The kinds of item a plan elides by leaving their record out (not by a stub)."""
        ...

    def prefix_safe(
        self, lines: Sequence[bytes], first: int, marked: Sequence[int] | None = None
    ) -> tuple[dict[int, bytes], dict[str, str | None]]:
        """Lines to replace (b"" to leave a record out) so that the provider's checks of the
        reasoning sent back hold when `first` is the first line a rewrite changed (`lines`
        with its lines in place; `marked`: thinking_lines() of the source, when kept); and
        each left-out record's parent. RewriteError (too_deep) for a record orjson cannot
        write back."""
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
