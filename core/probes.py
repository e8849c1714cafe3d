"""Deterministic probes and their recall after a plan (reference `probe.rs`, for eval).

A probe is a short literal a user would want a compacted session to keep: a path, an error
signature, a file name, or a sentence that decides (a decision, a prohibition or constraint, a
revocation) or leaves something open (a task, a pending effect), as core.salience tells them
by what they say. Commands and identifiers are not probes: what was run and what code is named
are in the files and the kept turns, and a card that echoed them would be a log, not a state. Probes come from the text of live items (summary
and label; a host may add payload texts). A plan *recalls* a probe when the literal is still
visible afterwards: its line is not elided, or the text appears in a kept item or in the
injected state card. Limits: 64 probes of 3-64 bytes, deduplicated, per-kind caps, at most 4
of one kind per line, chosen round-robin across kinds and sorted by (line, kind).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum

from .edits import CacheEditEdit, CompactionPlan
from .limits import (
    MAX_PROBES,
    PROBE_BLOCK_ITEMS,
    PROBE_MAX_BYTES,
    PROBE_MIN_BYTES,
    PROBE_PAYLOAD_CHARS,
    PROBES_PER_KIND_PER_LINE,
)
from .model import Transcript
from .paths import EXTENSIONS
from .salience import Salience, may_be_salient, salience

MAX_MISSED_PROBES = 8


class ProbeKind(StrEnum):
    PATH = "path"
    DECISION = "decision"
    OPEN_TASK = "open_task"
    ERROR_SIGNATURE = "error_signature"
    FILE_NAME = "file_name"


KIND_CAPS: dict[ProbeKind, int] = {
    ProbeKind.PATH: 24,
    ProbeKind.DECISION: 16,
    ProbeKind.OPEN_TASK: 12,
    ProbeKind.ERROR_SIGNATURE: 16,
    ProbeKind.FILE_NAME: 16,
}
_KIND_ORDER = {kind: index for index, kind in enumerate(ProbeKind)}


_PATH = re.compile(r"(?<![\w.~/-])(?:~/|\./|/)[\w.@+-]+(?:/[\w.@+-]+)*|\b(?:[\w.-]+/)+[\w-]+\.\w+")
_ERROR = re.compile(r"error\[|error: |FAILED|panicked")
_FILE_NAME = re.compile(r"\b[\w-]+\.(?:" + "|".join(EXTENSIONS) + r")\b")
_SENTENCE_KINDS = {Salience.DECISION: ProbeKind.DECISION, Salience.OPEN_TASK: ProbeKind.OPEN_TASK}
_SENTENCES = re.compile(r"[^\n]+")
"""A sentence probe is the start of a line that core.salience classes as one of these."""


@dataclass(frozen=True, slots=True)
class Probe:
    kind: ProbeKind
    text: str
    line: int


def _window(text: str, start: int) -> str:
    """At most 64 UTF-8 bytes of `text` from `start`, up to a line end, trailing space
    stripped."""
    data = text[start : start + PROBE_MAX_BYTES].split("\n", 1)[0].encode("utf-8", "surrogatepass")
    return data[:PROBE_MAX_BYTES].decode("utf-8", "ignore").rstrip()


def _fits(text: str) -> bool:
    return PROBE_MIN_BYTES <= len(text.encode("utf-8", "surrogatepass")) <= PROBE_MAX_BYTES


_MATCHERS: tuple[tuple[ProbeKind, re.Pattern[str]], ...] = (
    (ProbeKind.PATH, _PATH),
    (ProbeKind.DECISION, _SENTENCES),
    (ProbeKind.OPEN_TASK, _SENTENCES),
    (ProbeKind.ERROR_SIGNATURE, _ERROR),
    (ProbeKind.FILE_NAME, _FILE_NAME),
)
ALL_KINDS = frozenset(ProbeKind)


def _value(kind: ProbeKind, text: str, match: re.Match[str]) -> str | None:
    if kind is ProbeKind.PATH:
        return match.group().rstrip(".")
    if kind is ProbeKind.ERROR_SIGNATURE:
        return _window(text, match.start())
    if kind in (ProbeKind.DECISION, ProbeKind.OPEN_TASK):
        line = match.group().strip()
        said = salience(line)
        return _window(line, 0) if said is not None and _SENTENCE_KINDS.get(said) is kind else None
    return match.group()


_ERROR_NEEDLES = ("error[", "error: ", "FAILED", "panicked")


def _prefilter(text: str) -> Callable[[ProbeKind], bool]:
    """Whether `kind` may match in `text`: a literal every match contains is looked for, so
    a False skips the regex scan (slow on big payloads) without changing any result."""
    sentences: list[bool] = []

    def may(kind: ProbeKind) -> bool:
        if kind is ProbeKind.PATH:
            return "/" in text
        if kind is ProbeKind.FILE_NAME:
            return "." in text
        if kind is ProbeKind.ERROR_SIGNATURE:
            return any(needle in text for needle in _ERROR_NEEDLES)
        if not sentences:  # a salient line holds one of core.salience's needles
            sentences.append(may_be_salient(text))
        return sentences[0]

    return may


def possible_kinds(texts: list[str], kinds: frozenset[ProbeKind]) -> frozenset[ProbeKind]:
    """The kinds that may match in at least one of `texts`: each prefilter runs once on them
    all joined by newlines. Every literal a prefilter looks for lies within one text (none
    holds a newline, and a newline ends a word run), so a kind it rules out for the joined
    text matches in none of them."""
    may = _prefilter("\n".join(texts))
    return frozenset(kind for kind in kinds if may(kind))


def line_probes(text: str, line: int, kinds: frozenset[ProbeKind] = ALL_KINDS) -> list[Probe]:
    """The probes of one line's text, at most 4 per kind, kinds in order."""
    found: list[Probe] = []
    may = _prefilter(text)
    for kind, pattern in _MATCHERS:
        if kind not in kinds or not may(kind):
            continue
        seen: set[str] = set()
        for match in pattern.finditer(text):
            value = _value(kind, text, match)
            if value is None or not _fits(value) or value in seen:
                continue
            seen.add(value)
            found.append(Probe(kind, value, line))
            if len(seen) >= PROBES_PER_KIND_PER_LINE:
                break
    return found


def _item_text(summary: str | None, label: str, payload: str | None) -> str:
    parts = [summary or "", label]
    if payload:
        parts.append(payload)
    return "\n".join(part for part in parts if part)


def _text_blocks(
    transcript: Transcript, payloads: Mapping[int, str] | None
) -> Iterator[list[tuple[int, str]]]:
    """(line, text) of the live items, PROBE_BLOCK_ITEMS at a time, in line order."""
    block: list[tuple[int, str]] = []
    for item in transcript.items:
        if not item.active or item.est_tokens <= 0:
            continue
        # A file view's output is what a file holds, which is on disk: not a probe's source.
        payload = payloads.get(item.line_index) if payloads and not item.file_view else None
        if payload is not None:
            payload = payload[:PROBE_PAYLOAD_CHARS]  # a bounded scan per item, however big
        summary = item.summary
        if item.file_view and summary:  # its output tail is the file's content too
            summary = summary.partition(" => ")[0]
        block.append((item.line_index, _item_text(summary, item.label, payload)))
        if len(block) >= PROBE_BLOCK_ITEMS:
            yield block
            block = []
    if block:
        yield block


def extract_probes(
    transcript: Transcript, payloads: Mapping[int, str] | None = None
) -> list[Probe]:
    """At most 64 probes from live items, round-robin across kinds, sorted by (line, kind)."""
    by_kind: dict[ProbeKind, list[Probe]] = {kind: [] for kind in ProbeKind}
    distinct: dict[ProbeKind, set[str]] = {kind: set() for kind in ProbeKind}
    # Selection takes each kind's pool in line order, so a pool needs no more than its cap
    # (doubled: global deduplication may skip some); then that kind is no longer searched.
    wanted = set(ProbeKind)
    for block in _text_blocks(transcript, payloads):
        if not wanted:
            break
        # A kind absent from a whole block (most kinds of most blocks) is not looked for
        # item by item: one prefilter pass instead of one per item.
        possible = possible_kinds([text for _line, text in block], frozenset(wanted))
        for line, text in block:
            kinds = possible.intersection(wanted)
            if not kinds:
                break
            for probe in line_probes(text, line, kinds):
                by_kind[probe.kind].append(probe)
                distinct[probe.kind].add(probe.text)
                if len(distinct[probe.kind]) >= 2 * KIND_CAPS[probe.kind]:
                    wanted.discard(probe.kind)
    chosen: list[Probe] = []
    texts: set[str] = set()
    cursors = dict.fromkeys(ProbeKind, 0)
    taken = dict.fromkeys(ProbeKind, 0)
    progress = True
    while len(chosen) < MAX_PROBES and progress:
        progress = False
        for kind in ProbeKind:
            pool = by_kind[kind]
            while cursors[kind] < len(pool) and taken[kind] < KIND_CAPS[kind]:
                probe = pool[cursors[kind]]
                cursors[kind] += 1
                if probe.text in texts:
                    continue  # deduplicated globally
                texts.add(probe.text)
                chosen.append(probe)
                taken[kind] += 1
                progress = True
                break
            if len(chosen) >= MAX_PROBES:
                break
    return sorted(chosen, key=lambda p: (p.line, _KIND_ORDER[p.kind]))


@dataclass(frozen=True, slots=True)
class KindRecall:
    kind: ProbeKind
    total: int
    recalled: int


@dataclass(frozen=True, slots=True)
class ProbeScore:
    probes_total: int
    probes_recalled: int
    recall: float
    tail_probes_total: int
    tail_probes_recalled: int
    tail_intact: bool
    missed_probes: list[str]
    by_kind: list[KindRecall]


def removed_lines(transcript: Transcript, plan: CompactionPlan) -> set[int]:
    """Lines whose payload the plan removes from context: elided lines, and for a cache_edit
    the outputs owning the named tool_use_ids. A provider compaction names none."""
    removed = set(plan.elided_lines)
    ids = {i for edit in plan.edits if isinstance(edit, CacheEditEdit) for i in edit.tool_use_ids}
    if ids:
        removed.update(
            item.line_index
            for item in transcript.items
            if item.elidable and ids.intersection(item.tool_use_ids)
        )
    return removed


def probe_recall(
    probes: list[Probe],
    transcript: Transcript,
    plan: CompactionPlan,
    tail_start: int | None = None,
    payloads: Mapping[int, str] | None = None,
) -> ProbeScore:
    """How many probes stay visible after `plan`. `tail_start` is the protected tail's first
    line (the oldest of the newest keep_recent_tool_outputs elidable items)."""
    removed = removed_lines(transcript, plan)
    kept_parts = [
        _item_text(item.summary, item.label, payloads.get(item.line_index) if payloads else None)
        for item in transcript.items
        if item.active and item.est_tokens > 0 and item.line_index not in removed
    ]
    digest = plan.digest
    if digest is not None:
        kept_parts.append(digest.render())
    visible = "\n".join(kept_parts)
    return score_of(
        probes, [p.line not in removed or p.text in visible for p in probes], tail_start
    )


def score_of(probes: list[Probe], recalled_flags: list[bool], tail_start: int | None) -> ProbeScore:
    """The score of `probes`, each recalled or not (`recalled_flags`, in the same order)."""
    recalled = sum(recalled_flags)
    tail = [
        flag
        for p, flag in zip(probes, recalled_flags, strict=True)
        if tail_start is not None and p.line >= tail_start
    ]
    by_kind = [
        KindRecall(
            kind,
            sum(1 for p in probes if p.kind is kind),
            sum(1 for p, f in zip(probes, recalled_flags, strict=True) if p.kind is kind and f),
        )
        for kind in ProbeKind
    ]
    missed = [p.text for p, f in zip(probes, recalled_flags, strict=True) if not f]
    return ProbeScore(
        probes_total=len(probes),
        probes_recalled=recalled,
        recall=recalled / len(probes) if probes else 1.0,
        tail_probes_total=len(tail),
        tail_probes_recalled=sum(tail),
        tail_intact=all(tail),
        missed_probes=missed[:MAX_MISSED_PROBES],
        by_kind=[k for k in by_kind if k.total],
    )
