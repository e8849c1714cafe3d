"""Record building shared by the synthetic Claude Code and Codex transcripts (demo home, bench
corpus): ids, a relative clock, and the Builder the two providers' sessions extend
(gobtui.demo.claude, gobtui.demo.codex).

A builder collects records as dicts in file order. Timestamps and token usage are left as
slots: `finish()` fills usage so the context grows with the bytes the model has seen (so a
sparkline has a believable shape), shifts the relative clock so the session ends where the
caller wants it, and serialises with orjson (insertion order, so output is deterministic).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

Rec = dict[str, Any]
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
MIN_STEP = 97
"""Smallest context growth between two requests: more than Claude's streamed output tokens."""


def iso(ts: float) -> str:
    """ISO-8601 with milliseconds and Z, as both CLIs write it."""
    ms = round(ts * 1000)
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def uuid7_at(ts: float, bits: str) -> str:
    ms = f"{int(ts * 1000) & 0xFFFF_FFFF_FFFF:012x}"
    return f"{ms[:8]}-{ms[8:]}-7{bits[:3]}-{'89ab'[int(bits[3], 16) & 3]}{bits[4:7]}-{bits[7:]}"


class Ids:
    """Deterministic ids from one rng.

    With `tag` (12 hex chars) every id ends in it instead of random characters, so the bench
    can stamp copies of one template apart with a single bytes.replace.
    """

    def __init__(self, rng: random.Random, tag: str | None = None) -> None:
        self.rng = rng
        self.tag = tag

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def _tail(self) -> str:
        return self.tag or self.hex(12)

    def uuid4(self) -> str:
        h = self.hex(19)
        return (
            f"{h[:8]}-{h[8:12]}-4{h[12:15]}-{'89ab'[int(h[15], 16) & 3]}{h[16:19]}-{self._tail()}"
        )

    def uuid7_bits(self) -> str:
        """The random part of a UUIDv7 whose time part is only known later."""
        return self.hex(7) + self._tail()

    def uuid7(self, ts: float) -> str:
        return uuid7_at(ts, self.uuid7_bits())

    def b62(self, n: int) -> str:
        return "".join(B62[self.rng.randrange(62)] for _ in range(n))

    def _id(self, prefix: str, n: int) -> str:
        return prefix + (self.b62(n - 12) + self.tag if self.tag else self.b62(n))

    def msg(self) -> str:
        return self._id("msg_01", 22)

    def req(self) -> str:
        return self._id("req_011C", 18)

    def toolu(self) -> str:
        return self._id("toolu_01", 22)

    def call(self) -> str:
        return self._id("call_", 24)


@dataclass(slots=True)
class Clock:
    """A relative clock shared by a session and its subagents; finish() anchors it."""

    rng: random.Random
    t: float = 0.0
    scale: float = 1.0

    def step(self, lo: float, hi: float) -> float:
        self.t += self.rng.uniform(lo, hi) * self.scale
        return self.t


def spread(weights: list[int], start: int, end: int) -> list[int]:
    """Context per request: from start to end in proportion to the bytes seen, strictly rising."""
    if not weights:
        return []
    base, top = weights[0], weights[-1]
    span = max(1, top - base)
    out: list[int] = []
    for w in weights:
        value = start + (end - start) * (w - base) // span if len(weights) > 1 else end
        if out and value < out[-1] + MIN_STEP:
            value = out[-1] + MIN_STEP
        out.append(value)
    return out


@dataclass
class Builder:
    ids: Ids
    clock: Clock
    records: list[Rec] = field(default_factory=list)
    seen: int = 0
    """Model-bound bytes so far in the current context segment."""
    segment: int = 0
    marks: list[tuple[int, int, Rec]] = field(default_factory=list)
    """(segment, bytes seen before the request, usage slot) per model request."""
    stamps: list[tuple[Rec, str, float, str]] = field(default_factory=list)
    """(record, key, relative time, "iso" | "epoch" | UUIDv7 random bits) filled at the end."""

    def stamp(self, rec: Rec, key: str = "timestamp", kind: str = "iso", at: float = -1) -> None:
        rec[key] = ""
        self.stamps.append((rec, key, self.clock.t if at < 0 else at, kind))

    def serialise(self, shift: float) -> bytes:
        for rec, key, t, kind in self.stamps:
            if kind == "iso":
                rec[key] = iso(t + shift)
            else:
                rec[key] = int(t + shift) if kind == "epoch" else uuid7_at(t + shift, kind)
        return b"".join(orjson.dumps(r) + b"\n" for r in self.records)

    def contexts(self, targets: list[tuple[int, int]]) -> list[int]:
        """Usage per mark, segment by segment (a compaction starts a new segment)."""
        out: list[int] = []
        for seg, (start, end) in enumerate(targets):
            weights = [w for s, w, _ in self.marks if s == seg and w >= 0]
            out.extend(spread(weights, start, end))
        return out
