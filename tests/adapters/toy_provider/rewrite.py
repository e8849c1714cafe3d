"""The toy's rewrite half: what a plan's elides, the state card and the fork's usage become
in its records."""

from __future__ import annotations

import re
from collections.abc import Container, Mapping, Sequence

from gobtui.adapters.files.jsonl import Record, decode_line
from gobtui.adapters.providers.interface import (
    CardScanner,
    ForkUsage,
    RewriteCode,
    RewriteError,
    StubMaker,
)
from gobtui.core.model import ItemKind, Transcript
from tests.adapters.toy_provider import CARD_KEY

LEFT_OUT_KINDS: frozenset[ItemKind] = frozenset()


class CardScan:
    def __init__(self, path: str, parsed: Transcript | None = None) -> None:
        self.path = path
        self.usage: list[tuple[int, int]] = []

    @classmethod
    def of(cls, lines: Sequence[bytes], path: str) -> CardScan:
        scan = cls(path)
        for index, line in enumerate(lines):
            record = decode_line(line.strip())
            if isinstance(record, dict):
                scan.feed(index, record)
        scan.finish()
        return scan

    def feed(self, index: int, record: Record) -> None:
        if record.get("toy") == "usage" and type(record.get("context")) is int:
            self.usage.append((index, record["context"]))

    def finish(self) -> None:
        pass

    def usage_points(self, live: Container[int]) -> list[tuple[int, int]]:
        return [(line, context) for line, context in self.usage if line in live]


def has_image_output(_record: Record) -> bool:
    return False


def elide_record(record: Record, stub: StubMaker) -> int:
    output = record.get("output")
    if record.get("toy") != "result" or type(output) is not str:
        raise RewriteError(RewriteCode.UNSUPPORTED_SHAPE, "not a toy result")
    record["output"] = stub(len(output.encode()))
    return 1


def card_records(
    lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
) -> list[Record]:
    return card_records_scanned(CardScan.of(lines, transcript.path), lines, transcript, card, seed)


def card_records_scanned(
    scan: CardScanner, _lines: Sequence[bytes], _transcript: Transcript, card: str, _seed: bytes
) -> list[Record]:
    if not isinstance(scan, CardScan):
        raise TypeError("not a toy CardScan")
    return [{"toy": "say", "who": "user", "text": card, CARD_KEY: True}]


def fork_usage(
    scan: CardScanner, _lines: Sequence[bytes], target: ForkUsage, _appended: int
) -> tuple[dict[int, bytes], list[Record]]:
    if not isinstance(scan, CardScan):
        raise TypeError("not a toy CardScan")
    return {}, [{"toy": "usage", "context": target[0]}]


def compacted_lines(
    _lines: Sequence[bytes], _elided: Sequence[int], _card: str, _seed: bytes
) -> dict[int, bytes]:
    raise RewriteError(RewriteCode.COMPACTED_UNSAFE, "the toy has no compacted record")


def rewrite_identity_record(record: Record, new_id: str) -> bool:
    if record.get("toy") != "session":
        return False
    record["id"] = new_id
    return True


def record_id(_record: Record) -> str | None:
    return None


_ID = re.compile(rb'("id"\s*:\s*)"[^"\\]*"')


def rewrite_identity_bytes(line: bytes, new_id: str) -> bytes:
    return _ID.sub(lambda m: m.group(1) + b'"' + new_id.encode() + b'"', line)


def payload_text(record: Record) -> str | None:
    output = record.get("output")
    return output if record.get("toy") == "result" and type(output) is str else None


def prefix_safe(
    _lines: Sequence[bytes], _first: int, _marked: Sequence[int] | None = None
) -> tuple[dict[int, bytes], dict[str, str | None]]:
    return {}, {}  # nothing sent back is checked


def thinking_lines(_lines: Sequence[bytes]) -> list[int]:
    return []


def thinking_after_change(
    _lines: Sequence[bytes],
    _replaced: Mapping[int, bytes],
    _appended: Sequence[bytes],
    _marked: Sequence[int] | None = None,
) -> int | None:
    return None
