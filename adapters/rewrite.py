"""Applying a compaction plan to transcript bytes, and giving a fork its own identity.

Lines are indexed as adapters.jsonl reads them: the bytes split on b"\\n", a last line without a
newline still a line. Records are never removed or reordered. An elide replaces payload parts
in place and re-serializes only that line (compact, on one line, its own line ending kept); a
state card is appended in the provider's own shape. Every other byte stays as it was, the
presence of a final newline included.

Where the reference leaves room, the choices are:
- An output holding an image is refused (`image_output`), never stubbed in part: the stub
  would drop the image, and admission prefers a refusal.
- Claude's top-level `toolUseResult` (the UI's structured copy of an output) is left as it
  is, as the reference does: it is not part of what the model is sent.
- Ids of appended records derive from the source bytes and the plan, so a rerun of the same
  plan on the same bytes gives the same bytes.
- The result may not be larger than the source (`grew`), as publication requires.

The provider halves live in adapters.rewrite_claude and adapters.rewrite_codex.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Container, Iterable, Sequence
from enum import StrEnum
from typing import Any, Protocol

import orjson

from adapters.jsonl import Record, decode_line
from core.limits import SESSION_ID_MAX_CHARS
from core.model import BadLine, Provider, Transcript, TranscriptItem
from core.plan import CompactionPlan, ElideEdit, InjectDigestEdit
from core.text import utf8_len

StubMaker = Callable[[int], str]
"""The stub text for an output of so many bytes."""

_SESSION_ID = re.compile(r"[0-9A-Za-z-]+", re.ASCII)


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


class RewriteError(Exception):
    """A refused rewrite: a closed code and a one-line message without transcript content."""

    def __init__(self, code: RewriteCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code


# -- lines -------------------------------------------------------------------------------------


def split_lines(data: bytes) -> list[bytes]:
    """The physical lines of `data`, each with its newline, indexed as adapters.jsonl indexes
    them (TranscriptItem.line_index); b"".join() of the result is `data`."""
    if not data:
        return []
    pieces = data.split(b"\n")
    last = pieces.pop()
    lines = [piece + b"\n" for piece in pieces]
    if last:
        lines.append(last)
    return lines


def line_ending(line: bytes) -> bytes:
    """The line's terminator: b"\\r\\n", b"\\n", or b"" for an unterminated last line."""
    if line.endswith(b"\r\n"):
        return b"\r\n"
    return b"\n" if line.endswith(b"\n") else b""


def encode_line(record: Record, ending: bytes) -> bytes:
    """A record re-serialized compactly on one line, with the given terminator; too_deep
    for one orjson cannot write (nested deeper than 254 levels: hostile input)."""
    try:
        return orjson.dumps(record) + ending
    except orjson.JSONEncodeError:
        raise RewriteError(RewriteCode.TOO_DEEP, "a record nests too deep to rewrite") from None


def decode_at(lines: Sequence[bytes], index: int) -> Record:
    """The record on line `index`; line_out_of_range or not_json otherwise."""
    if not 0 <= index < len(lines):
        raise RewriteError(
            RewriteCode.LINE_OUT_OF_RANGE, f"line {index} is not in the file ({len(lines)} lines)"
        )
    record = decode_line(lines[index].strip())
    if not isinstance(record, dict):
        raise RewriteError(RewriteCode.NOT_JSON, f"line {index} is not a JSON object")
    return record


def require_whole_tail(lines: Sequence[bytes]) -> None:
    """torn_tail when the last line is unfinished: no newline, and no record (a writer caught
    mid-line, or a crash's NUL padding). Every plan is refused alike: a fork would carry the
    torn bytes, and a card or a usage record could not follow them."""
    if not lines or lines[-1].endswith(b"\n"):
        return
    if not isinstance(decode_line(lines[-1].strip()), dict):
        raise RewriteError(
            RewriteCode.TORN_TAIL,
            f"line {len(lines) - 1} is unfinished (is the session still being written?)",
        )


def append_records(lines: list[bytes], records: list[Record]) -> None:
    """Append `records` as new lines, in the file's line-ending style.

    A file without a final newline keeps having none: its last line is terminated and the
    last new record is left unterminated instead. An unterminated last line that is not a
    record (a writer caught mid-line) is refused as torn_tail.
    """
    if not records:
        return
    ending = b"\n"
    for line in reversed(lines):
        found = line_ending(line)
        if found:
            ending = found
            break
    final_newline = not lines or lines[-1].endswith(b"\n")
    if not final_newline:
        if not isinstance(decode_line(lines[-1].strip()), dict):
            raise RewriteError(
                RewriteCode.TORN_TAIL, f"line {len(lines) - 1} is unfinished; nothing appended"
            )
        lines[-1] += ending
    encoded = [encode_line(record, ending) for record in records]
    if not final_newline:
        encoded[-1] = encoded[-1][: -len(ending)]
    lines.extend(encoded)


# -- payload parts -----------------------------------------------------------------------------


def text_positions(blocks: list[Any], text_types: frozenset[str]) -> list[int]:
    """Indexes of the text blocks (of those types, with a string `text`) of a block list."""
    return [
        index
        for index, block in enumerate(blocks)
        if type(block) is dict
        and block.get("type") in text_types
        and type(block.get("text")) is str
    ]


def stub_output(value: Any, stub: StubMaker, text_types: frozenset[str]) -> Any | None:
    """`value` (an output: a string, or a list of blocks) with its text stubbed in place.

    A string becomes the stub; in a list the first text block gets the stub and later text
    blocks become "", other blocks untouched. None when there is no text, or when the stubbed
    value would not serialize smaller (a short part is left alone rather than grown).
    """
    replaced: Any
    if type(value) is str:
        if not value:
            return None
        n_bytes = utf8_len(value)
        replaced = text = stub(n_bytes)
    elif type(value) is list:
        positions = text_positions(value, text_types)
        n_bytes = sum(utf8_len(value[index]["text"]) for index in positions)
        if n_bytes == 0:
            return None
        text = stub(n_bytes)
        replaced = list(value)
        for rank, index in enumerate(positions):
            replaced[index] = {**value[index], "text": text if rank == 0 else ""}
    else:
        return None
    # Each text serializes to its UTF-8 bytes and two quotes or more (escapes only add), and
    # the stub and the "" left in the other text blocks to theirs exactly: the value is longer
    # than its replacement by n_bytes + 2 - len(dumps(stub)) at least. Only when that bound
    # cannot settle it is the (big) value serialized.
    if n_bytes + 2 > len(orjson.dumps(text)):
        return replaced
    if len(orjson.dumps(replaced)) >= len(orjson.dumps(value)):
        return None
    return replaced


def cut_utf8(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes of `text`, cut on a character boundary."""
    if len(text) <= limit and text.isascii():
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: max(0, limit)].decode("utf-8", "ignore")


# -- deterministic ids -------------------------------------------------------------------------


def plan_seed(data: bytes, provider: Provider, plan: CompactionPlan) -> bytes:
    """What appended records' ids derive from: the provider, the source bytes, the plan's
    edits."""
    return plan_seed_of(hashlib.sha256(data).digest(), provider, plan)


def plan_seed_of(source_sha256: bytes, provider: Provider, plan: CompactionPlan) -> bytes:
    """plan_seed() given the sha256 digest of the source bytes. Only the plan's edits count,
    as for the fork's id (core.receipt.operation_id): two plans making the same edits (auto's
    pick and that strategy itself) make the same fork, byte for byte."""
    edits = orjson.dumps([edit.model_dump(mode="json") for edit in plan.edits])
    digest = hashlib.sha256()
    for part in (provider.value.encode(), source_sha256, edits):
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.digest()


def derived_uuid(seed: bytes, purpose: str) -> str:
    """A version-4-shaped uuid from sha256(seed, purpose): the same inputs, the same id."""
    raw = bytearray(hashlib.sha256(seed + purpose.encode("utf-8")).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    hexed = raw.hex()
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


# -- applying a plan ---------------------------------------------------------------------------


class CardScanner(Protocol):
    """A provider's CardScan: what its card (and the fork's usage) needs from the file, fed
    record by record."""

    def feed(self, index: int, record: Record) -> None: ...

    def finish(self) -> None: ...

    def usage_points(self, live: Container[int]) -> list[tuple[int, int]]:
        """(line, reported context) of the usage records on `live` lines, in line order."""
        ...


class _Half(Protocol):
    """What each provider module (adapters.rewrite_claude / rewrite_codex) provides."""

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

    def rewrite_identity_record(self, record: Record, new_id: str) -> bool: ...

    def rewrite_identity_bytes(self, line: bytes, new_id: str) -> bytes:
        """rewrite_identity_record() on a line's bytes, for a record orjson cannot write."""
        ...

    def payload_text(self, record: Record) -> str | None: ...


def provider_half(provider: Provider) -> _Half:
    """The provider's half (for adapters.rewrite_lines)."""
    return _half(provider)


def _half(provider: Provider) -> _Half:
    """The provider's half (imported late: each half imports this module)."""
    if provider is Provider.CLAUDE:
        from adapters import rewrite_claude

        return rewrite_claude
    from adapters import rewrite_codex

    return rewrite_codex


def _elide_targets(plan: CompactionPlan) -> dict[int, ElideEdit]:
    targets: dict[int, ElideEdit] = {}
    for edit in plan.edits:
        if isinstance(edit, ElideEdit):
            for line in edit.line_indexes:
                if line in targets:
                    raise RewriteError(RewriteCode.DUPLICATE_LINE, f"line {line} is elided twice")
                targets[line] = edit
    return targets


def _elide_line(
    lines: Sequence[bytes], index: int, edit: ElideEdit, item: TranscriptItem | None, half: _Half
) -> bytes:
    record = decode_at(lines, index)
    if item is None or not item.elidable:
        if half.has_image_output(record):
            raise RewriteError(RewriteCode.IMAGE_OUTPUT, f"line {index} holds an image output")
        raise RewriteError(RewriteCode.NOT_ELIDABLE, f"line {index} is not an elidable item")
    kind = item.label or item.kind.value

    def stub(n_bytes: int) -> str:
        return edit.stub_for(index, n_bytes, kind)

    if not half.elide_record(record, stub):
        raise RewriteError(RewriteCode.GREW, f"no payload part of line {index} shrinks")
    line = lines[index]
    ending = line_ending(line)
    rewritten = encode_line(record, ending)
    if len(rewritten) >= len(line):
        raise RewriteError(RewriteCode.GREW, f"line {index} would not shrink")
    return rewritten


ForkUsage = tuple[int, int]
"""(the fork's projected context, the part of it after the source's last usage record: the
records that followed it and the card)."""


def fork_usage_target(plan: CompactionPlan, transcript: Transcript) -> ForkUsage | None:
    """What the fork's latest usage should say; None for a plan without a projection (one
    not made by the central decision)."""
    if plan.projection is None:
        return None
    digest = plan.digest
    card = transcript.calibration.tokens(digest.estimate_overhead()) if digest else 0
    following = transcript.calibration.tail_tokens + card
    return plan.projection.context_tokens_after, following


def apply_plan(
    data: bytes, provider: Provider, plan: CompactionPlan, transcript: Transcript
) -> bytes:
    """The transcript `data` with the plan's file edits applied (see the module docstring).

    `transcript` is the parse of `data`: it says which lines are elidable and names their
    stubs' kind. Control edits write no file (control_edit).
    """
    if transcript.provider is not provider:
        raise RewriteError(
            RewriteCode.PROVIDER_MISMATCH,
            f"a {transcript.provider.value} transcript given as {provider.value}",
        )
    if plan.is_control:
        raise RewriteError(RewriteCode.CONTROL_EDIT, "a control edit changes no file")
    digests = [edit.digest for edit in plan.edits if isinstance(edit, InjectDigestEdit)]
    if len(digests) > 1:
        raise RewriteError(RewriteCode.MULTIPLE_DIGESTS, f"{len(digests)} state cards in one plan")
    targets = _elide_targets(plan)
    half = _half(provider)
    lines = split_lines(data)
    require_whole_tail(lines)
    items = {item.line_index: item for item in transcript.items}
    for index in sorted(targets):
        lines[index] = _elide_line(lines, index, targets[index], items.get(index), half)
    records: list[Record] = []
    scan = half.CardScan.of(lines, transcript.path) if digests or plan.projection else None
    if digests:
        card = digests[0].render()
        seed = plan_seed(data, provider, plan)
        records = half.card_records_scanned(scan, lines, transcript, card, seed)
    target = fork_usage_target(plan, transcript)
    if target is not None:
        replaced, usage = half.fork_usage(scan, lines, target, len(records))
        for index, line in replaced.items():
            lines[index] = line
        records += usage
    append_records(lines, records)
    out = b"".join(lines)
    if len(out) > len(data):
        raise RewriteError(
            RewriteCode.GREW, f"the result would grow the file by {len(out) - len(data)} bytes"
        )
    return out


# -- identity and payload texts ----------------------------------------------------------------


def rewrite_identity(data: bytes, provider: Provider, new_session_id: str) -> bytearray:
    """`data` as the transcript of session `new_session_id`.

    Claude: the top-level `sessionId` of every record that has one; Codex: `payload.id` and
    `payload.session_id` (where present) of every session_meta record. uuid/parentUuid links
    and every other line stay byte-identical.
    """
    if len(new_session_id) > SESSION_ID_MAX_CHARS or not _SESSION_ID.fullmatch(new_session_id):
        raise RewriteError(
            RewriteCode.BAD_SESSION_ID,
            f"a session id is 1 to {SESSION_ID_MAX_CHARS} characters of 0-9, A-Z, a-z and -",
        )
    half = _half(provider)
    # Line by line into one growing buffer: a list of every line (and its joined copy) would
    # hold the transcript twice more (550 MB more on a 200 MB Claude fork, every record of
    # which carries the session id).
    out = bytearray()
    view = memoryview(data)
    find = data.find
    size = len(data)
    start = 0
    while start < size:
        end = find(b"\n", start)
        stop = size if end < 0 else end + 1
        line = data[start:stop]
        record = decode_line(line.strip())
        if isinstance(record, dict) and half.rewrite_identity_record(record, new_session_id):
            out += encode_line(record, line_ending(line))
        elif record is BadLine.TOO_DEEP:  # not to be written again: its id changed in place
            out += half.rewrite_identity_bytes(line, new_session_id)
        else:
            out += view[start:stop]
        start = stop
    return out


def payload_texts(
    data: bytes, provider: Provider, lines: Iterable[int], limit: int
) -> dict[int, str]:
    """The text of the elidable output on each of `lines`, cut to `limit` UTF-8 bytes.

    Text parts are joined; lines that are missing, not records, or hold no output text are
    left out. This feeds EvalContext.payloads (state-card salient lines, eval probes).
    """
    half = _half(provider)
    split = split_lines(data)
    texts: dict[int, str] = {}
    for index in sorted(set(lines)):
        if not 0 <= index < len(split):
            continue
        record = decode_line(split[index].strip())
        if not isinstance(record, dict):
            continue
        text = half.payload_text(record)
        if text:
            texts[index] = cut_utf8(text, limit)
    return texts
