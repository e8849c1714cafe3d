"""The record-level parts of a rewrite that both provider halves (adapters.providers.claude.rewrite,
adapters.providers.codex.rewrite) and adapters.rewrite.apply use: the closed refusal codes, lines as
adapters.files.jsonl reads them, stubbing outputs, and ids derived from the source and the plan."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import orjson

from ...core.edits import CompactionPlan
from ...core.model import Provider
from ...core.text import utf8_len
from ..files.jsonl import Record, decode_line
from .interface import RewriteCode, RewriteError, StubMaker

# -- lines -------------------------------------------------------------------------------------


def split_lines(data: bytes) -> list[bytes]:
    """The physical lines of `data`, each with its newline, indexed as adapters.files.jsonl indexes
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
    last = len(lines) - 1
    while last > 0 and not lines[last]:  # a record the rewrite left out
        last -= 1
    final_newline = last < 0 or lines[last].endswith(b"\n")
    if not final_newline:
        if not isinstance(decode_line(lines[last].strip()), dict):
            raise RewriteError(
                RewriteCode.TORN_TAIL, f"line {last} is unfinished; nothing appended"
            )
        lines[last] += ending
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


def kept_ancestor(parents: dict[str, str | None], uuid: str | None) -> str | None:
    """`uuid`, or when it was left out, its nearest ancestor that was kept."""
    for _ in range(len(parents) + 1):  # the step bound is the cycle guard
        if uuid is None or uuid not in parents:
            return uuid
        uuid = parents[uuid]
    return None
