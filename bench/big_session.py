"""One ~200 MB Claude Code session for the planning and apply figures.

The corpus's big files are many compacted blocks (little is live) with over 100,000 records
(over verify's limit); a plan-and-apply figure wants the opposite: one long uncompacted
session of tool-heavy turns, under the record limit, whose context is over the trigger.
Generated once (seeded) and reused.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import orjson

SESSION_ID = "b16b16b1-6b16-4b16-8b16-b16b16b16b16"
TARGET_BYTES = 200_000_000
OUTPUT_BYTES = (2_000, 14_000)
WORDS = [
    "def",
    "class",
    "return",
    "import",
    "self",
    "value",
    "error",
    "result",
    "config",
    "path",
    "test",
    "build",
    "cache",
    "token",
    "context",
    "window",
    "session",
    "record",
    "parse",
    "verify",
    "plan",
    "apply",
    "fork",
    "vault",
    "chunk",
    "manifest",
    "index",
]


def _text(rng: random.Random, size: int) -> str:
    lines = []
    total = 0
    number = 1
    while total < size:
        line = f"{number:>5}\t" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        lines.append(line)
        total += len(line) + 1
        number += 1
    return "\n".join(lines)


def ensure_big_session(path: Path) -> Path:
    if path.is_file() and path.stat().st_size >= TARGET_BYTES:
        return path
    rng = random.Random("bench:big-session")
    temp = path.with_suffix(".building")
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    parent: str | None = None
    turn = 0
    base = {"sessionId": SESSION_ID, "cwd": "/home/dev/src/big", "version": "2.1.0"}

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    with open(temp, "wb") as out:

        def emit(record: dict[str, object]) -> None:
            nonlocal written, parent
            data = orjson.dumps(base | record) + b"\n"
            out.write(data)
            written += len(data)
            parent = str(record["uuid"])

        while written < TARGET_BYTES:
            stamp = f"2026-11-20T{10 + turn // 3600 % 10:02d}:{turn // 60 % 60:02d}:{turn % 60:02d}.000Z"
            if turn % 12 == 0:
                emit({"type": "user", "uuid": uid(), "parentUuid": parent, "timestamp": stamp,
                      "message": {"role": "user", "content": f"step {turn}: fix the failing test in src/mod_{turn}.py"}})  # fmt: skip
            tool = f"toolu_{turn:08d}"
            context = 20_000 + int(330_000 * written / TARGET_BYTES)
            emit({"type": "assistant", "uuid": uid(), "parentUuid": parent, "timestamp": stamp,
                  "message": {"id": f"msg_{turn:08d}", "role": "assistant", "model": "claude-opus-4-6",
                              "content": [{"type": "tool_use", "id": tool, "name": "Read",
                                           "input": {"file_path": f"/home/dev/src/big/src/mod_{turn}.py"}}],
                              "usage": {"input_tokens": 3, "cache_creation_input_tokens": 500,
                                        "cache_read_input_tokens": context, "output_tokens": 120}}})  # fmt: skip
            body = _text(rng, rng.randint(*OUTPUT_BYTES))
            if turn % 50 == 7:
                body = "error: test_mod failed: do not retry without the fixture\n" + body
            emit({"type": "user", "uuid": uid(), "parentUuid": parent, "timestamp": stamp,
                  "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool,
                                                           "content": [{"type": "text", "text": body}]}]}})  # fmt: skip
            turn += 1
        out.write(orjson.dumps({"type": "last-prompt", "leafUuid": parent, "sessionId": SESSION_ID}) + b"\n")  # fmt: skip
    temp.rename(path)
    return path
