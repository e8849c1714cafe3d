"""Deterministic probes and their recall after a plan (reference `probe.rs`, for eval).

A probe is a short literal worth keeping: a path, a command line, a decision, an error
signature, a file name or an identifier. Probes come from the text of live items (summary
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

MAX_MISSED_PROBES = 8


class ProbeKind(StrEnum):
    PATH = "path"
    COMMAND = "command"
    DECISION = "decision"
    ERROR_SIGNATURE = "error_signature"
    FILE_NAME = "file_name"
    IDENTIFIER = "identifier"


KIND_CAPS: dict[ProbeKind, int] = {
    ProbeKind.PATH: 24,
    ProbeKind.COMMAND: 16,
    ProbeKind.DECISION: 12,
    ProbeKind.ERROR_SIGNATURE: 16,
    ProbeKind.FILE_NAME: 16,
    ProbeKind.IDENTIFIER: 16,
}
_KIND_ORDER = {kind: index for index, kind in enumerate(ProbeKind)}

COMMANDS = [
    "cargo",
    "rustc",
    "rustup",
    "git",
    "bun",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "node",
    "deno",
    "python",
    "python3",
    "pip",
    "uv",
    "pytest",
    "go",
    "make",
    "docker",
    "kubectl",
    "brew",
    "curl",
]
EXTENSIONS = [
    "rs",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "py",
    "go",
    "rb",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "swift",
    "toml",
    "json",
    "jsonl",
    "yaml",
    "yml",
    "md",
    "txt",
    "sh",
    "sql",
    "html",
    "css",
    "xml",
    "lock",
    "cfg",
    "ini",
]

_PATH = re.compile(r"(?<![\w.~/-])(?:~/|\./|/)[\w.@+-]+(?:/[\w.@+-]+)*|\b(?:[\w.-]+/)+[\w-]+\.\w+")
_COMMAND = re.compile(
    r"\b(?:" + "|".join(map(re.escape, COMMANDS)) + r") [^\s\"'`;|&<>(){}][^\n\"'`;|&<>(){}]*"
)
_DECISION = re.compile(r"decided|decide|decision|will use|chose|chosen|going with", re.IGNORECASE)
_ERROR = re.compile(r"error\[|error: |FAILED|panicked")
_FILE_NAME = re.compile(r"\b[\w-]+\.(?:" + "|".join(EXTENSIONS) + r")\b")
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{9,}\b")
_CAMEL = re.compile(r"[a-z][A-Z]")
_SNAKE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]")


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
    (ProbeKind.COMMAND, _COMMAND),
    (ProbeKind.DECISION, _DECISION),
    (ProbeKind.ERROR_SIGNATURE, _ERROR),
    (ProbeKind.FILE_NAME, _FILE_NAME),
    (ProbeKind.IDENTIFIER, _IDENTIFIER),
)
ALL_KINDS = frozenset(ProbeKind)


def _value(kind: ProbeKind, text: str, match: re.Match[str]) -> str | None:
    if kind is ProbeKind.PATH:
        return match.group().rstrip(".")
    if kind is ProbeKind.COMMAND:
        return _window(match.group(), 0)
    if kind in (ProbeKind.DECISION, ProbeKind.ERROR_SIGNATURE):
        return _window(text, match.start())
    if kind is ProbeKind.IDENTIFIER:
        word = match.group()
        quoted = (
            match.start() > 0
            and text[match.start() - 1] == '"'
            and text[match.end() : match.end() + 1] == '"'
        )  # a bare quoted JSON token (a key, an enum value) is not an identifier
        return None if quoted or not (_CAMEL.search(word) or _SNAKE.search(word)) else word
    return match.group()


_COMMAND_WORDS = frozenset(command.encode() for command in COMMANDS)
_IGNORECASE_EXTRAS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
"""The characters re.IGNORECASE matches with a letter of the decision needles besides that
letter's two cases (İ and dotless ı with i, long ſ with s): folded to it before the text is
encoded to ASCII and lowered, the needle check sees every text the regex could match
(tests/core/test_probes.py finds them)."""
_WORD_BYTES = bytes(
    code if chr(code).isascii() and (chr(code).isalnum() or chr(code) == "_") else ord(" ")
    for code in range(256)
)
"""ASCII letters, digits and `_` kept, every other byte to " " (a character outside ASCII is
first encoded as "?"): what is left between spaces are the runs of ASCII word characters."""
_RUN_BYTES = bytes(ord("a") if code != ord(" ") else code for code in _WORD_BYTES)
"""_WORD_BYTES, then every ASCII word character to "a"."""
_WORD_RUN = b"a" * 10
"""The shortest run _IDENTIFIER matches: [A-Za-z_] then 9 or more of [A-Za-z0-9_]."""
_DECISION_NEEDLES = (b"decide", b"decision", b"chose", b"will use", b"going with")
_ERROR_NEEDLES = ("error[", "error: ", "FAILED", "panicked")


def _may_match(
    kind: ProbeKind, text: str, lowered: Callable[[], bytes], ascii_text: Callable[[], bytes]
) -> bool:
    """A literal every match of `kind` contains: False means the pattern cannot match, so
    the regex scan (slow on big payloads) is skipped without changing any result.
    `ascii_text` is the text encoded with "?" for every character outside ASCII."""
    if kind is ProbeKind.PATH:
        return "/" in text
    if kind is ProbeKind.FILE_NAME:
        return "." in text
    if kind is ProbeKind.COMMAND:
        # A match starts with a command name between a word boundary and a space: a whole
        # run. (Searching the text for each of the 22 names costs twice as much.)
        return not _COMMAND_WORDS.isdisjoint(ascii_text().translate(_WORD_BYTES).split())
    if kind is ProbeKind.DECISION:
        folded = lowered()
        return any(needle in folded for needle in _DECISION_NEEDLES)
    if kind is ProbeKind.ERROR_SIGNATURE:
        return any(needle in text for needle in _ERROR_NEEDLES)
    # snake_case or camelCase, within a run of 10 ASCII word characters (what the pattern
    # needs): one translate and one `in`, far cheaper than the pattern's scan.
    if "_" not in text and _CAMEL.search(text) is None:
        return False
    return _WORD_RUN in ascii_text().translate(_RUN_BYTES)


def _prefilter(text: str) -> Callable[[ProbeKind], bool]:
    """_may_match for `text`, its lowered and ASCII forms worked out once, when first asked."""
    folded: list[bytes] = []
    encoded: list[bytes] = []

    def ascii_text() -> bytes:
        if not encoded:
            encoded.append(text.encode("ascii", "replace"))
        return encoded[0]

    def lowered() -> bytes:
        # Folded in bytes: far cheaper than str.lower() on a text that is not all ASCII.
        if not folded:
            extras = not text.isascii() and any(c in text for c in "\u0130\u0131\u017f")
            if extras:
                folded.append(text.translate(_IGNORECASE_EXTRAS).encode("ascii", "replace").lower())
            else:
                folded.append(ascii_text().lower())
        return folded[0]

    return lambda kind: _may_match(kind, text, lowered, ascii_text)


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
        payload = payloads.get(item.line_index) if payloads else None
        if payload is not None:
            payload = payload[:PROBE_PAYLOAD_CHARS]  # a bounded scan per item, however big
        block.append((item.line_index, _item_text(item.summary, item.label, payload)))
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
