"""A session as a conversation to read: the parsed items (core.model.TranscriptItem) and the
records they came from, turned into entries in file order (a prompt, an answer, a tool call,
its result, thinking, injected context, a compaction), and a literal search over them.

Pure: the caller reads the file and parses it (adapters.providers), then hands each item
with its decoded record to its provider's builder (an EntryWriter), which keeps only the entries (never the
records: a big session's records would not fit). Every string an entry holds went through
core.sanitize (one_line for a header, terminal_safe for a body), so a widget may draw it as
it is, as Rich Text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any, ClassVar

import orjson

from .limits import SUMMARY_MAX_CHARS
from .model import TranscriptItem
from .sanitize import one_line, terminal_safe
from .text import collapse

HEADER_MAX_CHARS = SUMMARY_MAX_CHARS
"""A header's length before the widget cuts it to the pane."""
ARGS_MAX_CHARS = 120
"""A tool call's arguments in its header."""
BODY_MAX_CHARS = 100_000
"""What one entry shows of its text (a tool's output can be megabytes); the rest is counted."""
SEARCH_MAX_MATCHES = 10_000
"""Matches one search keeps (the count says there were more)."""
TAB_SIZE = 4
_FIRST_LINE_SCAN = 4_096

Record = Mapping[str, Any]


class EntryKind(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    THINKING = "thinking"
    CONTEXT = "context"
    """Injected text nobody typed: Codex's environment and AGENTS.md messages, developer
    messages, Claude's meta records and compaction summaries."""
    NOTICE = "notice"
    """A system record (a compaction, a slash command, an API error)."""


MESSAGE_KINDS = frozenset({EntryKind.USER, EntryKind.ASSISTANT})


@dataclass(frozen=True, slots=True)
class Entry:
    kind: EntryKind
    header: str
    """One line, sanitized; what a folded entry shows."""
    body: str
    """The whole text (up to BODY_MAX_CHARS), sanitized, newlines kept, tabs expanded."""
    line_index: int
    """The record's physical line in the transcript (0-based)."""
    error: bool = False
    """A tool result that reports a failure."""

    @property
    def is_message(self) -> bool:
        """A prompt or an answer: drawn as its body, never folded."""
        return self.kind in MESSAGE_KINDS

    @property
    def foldable(self) -> bool:
        """Shown as its header, opened to its body (folded until opened)."""
        return not self.is_message and bool(self.body)


class Part(IntEnum):
    HEADER = 0
    BODY = 1


@dataclass(frozen=True, slots=True)
class Match:
    entry: int
    part: Part
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    matches: list[Match]
    truncated: bool = False
    """More than SEARCH_MAX_MATCHES: the rest are not listed."""


@dataclass(frozen=True, slots=True)
class Counts:
    messages: int
    tool_calls: int


# --- text helpers ------------------------------------------------------------------------------


def header_line(text: str, limit: int = HEADER_MAX_CHARS) -> str:
    """`text` as one sanitized line: whitespace collapsed, cut (only a prefix is read)."""
    line = collapse(text, limit)
    return line if line.isprintable() else one_line(line)  # (printable: nothing to change)


def safe_lines(text: str) -> str:
    """terminal_safe(text, multiline=True) with tabs expanded, a line at a time: a line
    str.isprintable() passes holds nothing the sanitizer would change (it changes controls,
    format characters, separators and surrogates only, none of them printable), so only the
    rare line that fails is looked at character by character."""
    text = text.expandtabs(TAB_SIZE)
    if text.replace("\n", "").isprintable():  # the common case, in one pass
        return text
    return "\n".join(
        line if line.isprintable() else terminal_safe(line, multiline=True)
        for line in text.split("\n")
    )


def body_text(text: str) -> str:
    """`text` safe to draw over several lines (blank lines around it dropped), cut to
    BODY_MAX_CHARS with the rest counted."""
    more = len(text) - BODY_MAX_CHARS
    shown = safe_lines(text[:BODY_MAX_CHARS] if more > 0 else text).rstrip().lstrip("\n")
    return f"{shown}\n… {more:,} more characters not shown" if more > 0 else shown


def first_line(text: str) -> str:
    """The first line with something on it (of a bounded prefix)."""
    head = text[:_FIRST_LINE_SCAN].lstrip()
    return head.split("\n", 1)[0]


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except (TypeError, RecursionError):  # (orjson.JSONEncodeError is a TypeError)
        return "[not printable]"


def _compact_json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, RecursionError):
        return ""


_ARG_KEYS = ("command", "cmd", "file_path", "notebook_path", "path", "pattern", "query", "url")
_ARG_KEYS_LATE = ("description", "prompt", "skill", "plan")
_SHELLS = frozenset({"-c", "-lc", "-ic"})


def _words(words: Sequence[Any]) -> str:
    parts = [str(w) for w in words]
    if len(parts) >= 3 and parts[1] in _SHELLS:  # bash -lc 'script': the script
        return parts[2]
    return " ".join(parts)


def short_args(value: Any) -> str:
    """What a call's header shows of its input: the command, the path, the pattern..."""
    if isinstance(value, dict):
        for key in (*_ARG_KEYS, *_ARG_KEYS_LATE):
            arg = value.get(key)
            if isinstance(arg, str) and arg.strip():
                return arg
            if isinstance(arg, list) and arg:
                return _words(arg)
        return _compact_json(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _words(value)
    return "" if value is None else _compact_json(value)


def input_body(value: Any) -> str:
    """A call's whole input as text: `key: value` lines, a multi-line string below its key
    (a script, a patch, an edit's old and new text), other values as indented JSON."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return "" if value is None else _json(value)
    lines: list[str] = []
    for key, arg in value.items():
        if isinstance(arg, str):
            lines.append(f"{key}:\n{arg}" if "\n" in arg else f"{key}: {arg}")
        else:
            lines.append(f"{key}: {_json(arg)}")
    return "\n".join(lines)


_LINE_NUMBER = re.compile(r"\s*\d+(?:→|\t)")


def said(text: str) -> str:
    """A tool output's first line with something on it, after a Read's line number."""
    for line in text[:_FIRST_LINE_SCAN].split("\n")[:20]:
        numbered = _LINE_NUMBER.match(line)
        shown = line[numbered.end() :] if numbered else line
        if shown.strip():
            return shown.strip()
    return first_line(text)


# --- the builder -------------------------------------------------------------------------------


@dataclass(slots=True)
class EntryWriter:
    """What every provider's conversation writes entries with. A provider's own builder
    (adapters.providers.<name>.conversation) reads its records and calls these; fed each
    item with its record in file order (`add`), `entries` is the conversation."""

    INJECTED: ClassVar[tuple[str, ...]] = ()
    """How the text of context the client injects as a user message begins."""

    entries: list[Entry] = field(default_factory=list)
    _tools: dict[str, str] = field(default_factory=dict)
    """call id -> tool name, to name each result."""

    def add(self, item: TranscriptItem, record: Record) -> None:
        raise NotImplementedError

    def _emit(
        self, kind: EntryKind, header: str, body: str, line: int, error: bool = False
    ) -> None:
        self.entries.append(Entry(kind, header_line(header), body_text(body), line, error))

    def _message(self, kind: EntryKind, text: str, line: int) -> None:
        if not text.strip():
            return
        if kind is EntryKind.USER and self.INJECTED and text.lstrip().startswith(self.INJECTED):
            self._emit(EntryKind.CONTEXT, f"context · {first_line(text)}", text, line)
            return
        self._emit(kind, first_line(text), text, line)

    def _call(
        self, line: int, call_id: Any, name: Any, tool_input: Any, shown: str | None = None
    ) -> None:
        """A tool call; its header shows `shown` (what the provider knows its input to say,
        say the files a patch touches), else short_args of its input."""
        name = name if isinstance(name, str) and name else "tool"
        if isinstance(call_id, str) and call_id:
            self._tools[call_id] = name
        args = header_line(shown or short_args(tool_input), ARGS_MAX_CHARS)
        self._emit(EntryKind.TOOL_CALL, f"{name}({args})", input_body(tool_input), line)

    def _result(self, line: int, call_id: Any, text: str, error: bool) -> None:
        name = self._tools.get(call_id, "tool") if isinstance(call_id, str) else "tool"
        shown = text.rstrip()
        lines = shown.lstrip("\n").count("\n") + 1 if shown else 0
        gist = said(self.output_of(text))
        if lines == 0:
            what = "(no output)"
        elif lines == 1:
            what = gist
        else:
            what = f"{lines:,} lines · {gist}"
        mark = "✗" if error else "⇒"
        self._emit(EntryKind.TOOL_RESULT, f"{name} {mark} {what}", text, line, error)

    def output_of(self, text: str) -> str:
        """The part of a tool's output text that is the tool's own (a preamble the client
        adds left out)."""
        return text

    def _thinking(self, line: int, text: str, label: str = "thinking") -> None:
        said = first_line(text).strip("*").strip()  # (a Codex summary opens with **a title**)
        header = f"{label} · {said}" if said else label
        self._emit(EntryKind.THINKING, header, text, line)


# --- figures, search, movement -----------------------------------------------------------------


def counts(entries: Iterable[Entry]) -> Counts:
    messages = calls = 0
    for entry in entries:
        if entry.is_message:
            messages += 1
        elif entry.kind is EntryKind.TOOL_CALL:
            calls += 1
    return Counts(messages, calls)


def pattern_of(query: str) -> re.Pattern[str]:
    """The literal search for `query`. Smart case: a query with a capital letter matches
    case, one without ignores it."""
    return re.compile(re.escape(query), 0 if query != query.lower() else re.IGNORECASE)


def searched_part(entry: Entry) -> Part:
    """Where an entry's matches are counted: its text, or its header when it has none (a
    header summarises the text: counting both would count one occurrence twice)."""
    return Part.BODY if entry.body else Part.HEADER


def search(entries: Sequence[Entry], query: str, limit: int = SEARCH_MAX_MATCHES) -> SearchResult:
    """Every literal occurrence of `query` in the entries' text, in order (pattern_of)."""
    if not query:
        return SearchResult(query, [])
    pattern = pattern_of(query)
    matches: list[Match] = []
    for index, entry in enumerate(entries):
        part = searched_part(entry)
        text = entry.body if part is Part.BODY else entry.header
        for found in pattern.finditer(text):
            if len(matches) == limit:
                return SearchResult(query, matches, truncated=True)
            matches.append(Match(index, part, found.start(), found.end()))
    return SearchResult(query, matches)


def first_match_from(matches: Sequence[Match], entry: int) -> int | None:
    """The first match in `entry` or after it (else the first of all); None when none."""
    if not matches:
        return None
    return next((i for i, m in enumerate(matches) if m.entry >= entry), 0)


def step_match(count: int, current: int | None, step: int) -> int | None:
    """The match `step` away from `current` (wrapping); the first (or last) when none is."""
    if count == 0:
        return None
    if current is None:
        return 0 if step > 0 else count - 1
    return (current + step) % count
