"""What every built transcript is made of: stable ids and clock stamps, the compact JSON the
clients write, and the rehydration of a sanitized genuine rollout."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

Record = dict[str, Any]


def as_jsonl(*records: Record | bytes) -> bytes:
    """One line per record (bytes are taken as the raw line), newline-terminated."""
    return b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)


def write_jsonl(path: Path, records: list[Record]) -> Path:
    path.write_bytes(as_jsonl(*records))
    return path


def stable_uuid(*parts: object) -> str:
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"


def iso(ts: float) -> str:
    return (
        datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{int(ts * 1000) % 1000:03d}Z"
    )


def dumps(value: Record | list[Record]) -> str:
    """Compact JSON, as both clients write it (Claude Code refuses spaced lines)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_REDACTED = re.compile(rb'"\[REDACTED_OUTPUT len=(\d+) sha=([0-9a-f]+)\]"')


def rehydrate(data: bytes) -> bytes:
    """A sanitized rollout's `[REDACTED_OUTPUT len=N sha=S]` outputs back to N bytes of text."""

    def fill(match: re.Match[bytes]) -> bytes:
        size = int(match.group(1))
        line = f"output {match.group(2).decode()} line\n"
        return orjson.dumps((line * (size // len(line) + 1))[:size])

    return _REDACTED.sub(fill, data)
