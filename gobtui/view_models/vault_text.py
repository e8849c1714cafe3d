"""A vault record laid out to be read, computed without Textual.

A record is a JSON line. Read, it becomes a list of entries in document order: its text
fields (a message, a tool's input or output, thinking, a summary) as blocks under a heading
that says who wrote them, their newlines kept as lines; then every other field on a line of
its own (`path: value`). Every value of the record is shown exactly once, so a search's
hit count for the record is what the page marks. Nothing here is sanitized: the viewer and
the record list pass every piece through core.sanitize when they draw it.

The walk is the same for every provider; which fields are text, what heads them and where a
tool's input is are the record's provider's (registry.record_text, the provider found from
the record itself: registry.sniff_record).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from rich.style import Style
from rich.text import Text

from gobtui.adapters.providers.record_text import RecordText
from gobtui.adapters.providers.registry import record_text, sniff_record
from gobtui.core.sanitize import one_line, terminal_safe

FIELD_MAX_CHARS = 120
"""A string longer than this (or holding a newline) is text: a block of its own."""
PATH_MAX_CHARS = 160
"""A field's path is shortened past this: keys come from the transcript, unbounded."""
WALK_MAX_DEPTH = 48
"""Nesting below this is shown as one compact JSON value (a hostile record nests deep)."""
PREVIEW_MAX_CHARS = 160
"""What a record row keeps of its preview (one small string per record in memory)."""
PREVIEW_FIELDS = 3
"""A record without text previews its first few fields instead."""
READ_PAGE_CHARS = 16_000
"""The viewer shows a record's read form this many characters at a time."""


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Literal["text", "field"]
    label: str
    """The heading of a text, or the path of a field."""
    value: str
    continued: bool = False
    """A text that began on the page before."""


@dataclass(slots=True)
class _Context:
    rules: RecordText
    """How the record's provider reads its records."""
    top: str | None = None
    """The record's `type`."""
    role: str | None = None
    label: str | None = None
    """A heading set by an enclosing object (a tool_result's inner text blocks)."""


def _context(value: Any) -> _Context:
    """The walk's start over a parsed record."""
    if not isinstance(value, dict):
        return _Context(record_text(None))
    kind = value.get("type")
    return _Context(record_text(sniff_record(value)), kind if isinstance(kind, str) else None)


def entries(line: bytes) -> list[Entry]:
    """The read form of one record: its texts, then its other fields."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return [Entry("text", "not JSON", line.decode("utf-8", "replace"))]
    texts: list[Entry] = []
    fields: list[Entry] = []
    for entry in _walk(value, "", 0, _context(value)):
        (texts if entry.kind == "text" else fields).append(entry)
    return texts + fields


def preview(line: bytes) -> str:
    """One line for the record list (preview_of its value), or the start of a line that is
    not JSON."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _squeeze(one_line(line[: PREVIEW_MAX_CHARS * 2].decode("utf-8", "replace")))
    return preview_of(value)


def preview_of(value: Any) -> str:
    """`heading: the start of the first text` of a parsed record, else a few of the fields
    that tell records apart. Safe to show (one_line), at most PREVIEW_MAX_CHARS."""
    shown: list[str] = []
    ctx = _context(value)
    quiet = ctx.rules.quiet_keys
    for entry in _walk(value, "", 0, ctx):
        if entry.kind == "text":
            head = one_line(entry.label)
            return _squeeze(f"{head}: {one_line(entry.value[: PREVIEW_MAX_CHARS * 2])}")
        key = entry.label.rsplit(".", 1)[-1].split("[", 1)[0]
        if key not in quiet and len(shown) < PREVIEW_FIELDS:
            shown.append(f"{key}={entry.value[:PREVIEW_MAX_CHARS]}")
    return _squeeze(one_line(" ".join(shown)))


def _squeeze(text: str) -> str:
    """Runs of spaces as one (indented code, aligned output) and the length bounded."""
    return " ".join(text.split())[:PREVIEW_MAX_CHARS]


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):  # (an integer past 64 bits)
        return repr(value)


def _heading(node: dict[str, Any], key: str, ctx: _Context, path: str) -> str:
    kind = node.get("type")
    kind = kind if isinstance(kind, str) else None
    if ctx.label is not None:
        return ctx.label
    rules = ctx.rules
    if kind in rules.role_types and ctx.role:
        return ctx.role
    if key == "content" and ctx.role and node.get("role") == ctx.role:
        return ctx.role  # a message whose content is one string
    return rules.labels.get(kind or "") or rules.labels.get(ctx.top or "") or ctx.role or path


def _is_text(key: str | int, value: str, rules: RecordText) -> bool:
    if "\n" in value or len(value) > FIELD_MAX_CHARS:
        return True
    if key in rules.short_field_keys:
        return len(value.split()) > 2
    return key in rules.text_keys


def _walk(value: Any, path: str, depth: int, ctx: _Context) -> Iterator[Entry]:
    """Depth first, keys in their order; texts and fields as they come."""
    if depth > WALK_MAX_DEPTH and isinstance(value, dict | list):
        yield from _leaf(path, "", _scalar(value), ctx, {})
        return
    if isinstance(value, list):
        if not value:
            yield Entry("field", _label(path), "[]")
        for index, item in enumerate(value):
            yield from _walk(item, _child(path, index), depth + 1, ctx)
        return
    if not isinstance(value, dict):
        yield Entry("field", _label(path) or "value", _scalar(value))
        return
    if not value:
        yield Entry("field", _label(path), "{}")
        return
    rules = ctx.rules
    role = value.get("role")
    label = rules.enclosing_label(value)
    inner = _Context(
        rules, ctx.top, role if isinstance(role, str) else ctx.role, label or ctx.label
    )
    for key, item in value.items():
        here = _child(path, str(key))
        text = _tool_text(value, str(key), item, rules)
        if text is None:
            text = _json_text(value, str(key), item, inner, here)
        if text is not None:
            yield Entry("text", text[0], text[1])
        elif isinstance(item, dict | list):
            yield from _walk(item, here, depth + 1, inner)
        else:
            yield from _leaf(here, str(key), _scalar(item), inner, value)


def _leaf(path: str, key: str, text: str, ctx: _Context, node: dict[str, Any]) -> Iterator[Entry]:
    if _is_text(key, text, ctx.rules):
        yield Entry("text", _heading(node, key, ctx, _label(path)), text)
    else:
        yield Entry("field", _label(path), text)


def _tool_text(
    node: dict[str, Any], key: str, item: Any, rules: RecordText
) -> tuple[str, str] | None:
    """A tool call's input as one text headed by the tool (where it is: the provider's)."""
    found = rules.tool_input(node, key, item)
    if found is None:
        return None
    name, given = found
    if isinstance(given, str):
        return f"tool {name}", given
    if not isinstance(given, dict):
        return None
    return f"tool {name}", "\n".join(_input_line(k, v) for k, v in given.items())


def _json_text(
    node: dict[str, Any], key: str, item: Any, ctx: _Context, path: str
) -> tuple[str, str] | None:
    """A text held as a JSON object in a string read as its fields, so its newlines show."""
    parsed = ctx.rules.json_text(node, key, item)
    if parsed is None:
        return None
    lines = "\n".join(_input_line(k, v) for k, v in parsed.items())
    return _heading(node, key, ctx, path), lines


def _input_line(key: str, value: Any) -> str:
    text = value if isinstance(value, str) else _json(value)
    return f"{key}:\n{text}" if "\n" in text else f"{key}: {text}"


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):
        return repr(value)


def _label(path: str) -> str:
    if len(path) <= PATH_MAX_CHARS:
        return path
    return path[: PATH_MAX_CHARS - 1] + "…"


# --- pages -----------------------------------------------------------------------------------


def pages(items: list[Entry], budget: int = READ_PAGE_CHARS) -> list[list[Entry]]:
    """The entries in pages of about `budget` characters. A text longer than what is left
    of a page is cut at a line break, else between words, so no word is split across pages
    (only a "word" longer than a page is)."""
    out: list[list[Entry]] = [[]]
    room = budget
    for entry in items:
        size = len(entry.label) + len(entry.value)
        if size <= room or entry.kind == "field":
            if size > room and out[-1]:
                out.append([])
                room = budget
            out[-1].append(entry)
            room -= size
            continue
        rest, continued = entry.value, entry.continued
        while rest:
            if room < budget // 4 and out[-1]:  # too little left for a useful piece
                out.append([])
                room = budget
            head, rest = split_text(rest, max(1, room - len(entry.label)))
            out[-1].append(Entry("text", entry.label, head, continued))
            room -= len(entry.label) + len(head)
            continued = True
            if rest:
                out.append([])
                room = budget
    return out if out[-1] or len(out) == 1 else out[:-1]


def split_text(text: str, limit: int) -> tuple[str, str]:
    """(at most `limit` characters of `text`, the rest): cut after the last line break in
    the second half of the limit, else after the last space, else (one long word) at it."""
    if len(text) <= limit:
        return text, ""
    window = text[:limit]
    cut = window.rfind("\n", limit // 2)
    if cut < 0:
        cut = max(window.rfind(" ", limit // 2), window.rfind("\t", limit // 2))
    cut = cut + 1 if cut >= 0 else limit
    return text[:cut], text[cut:]


# --- drawing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PageStyles:
    heading: Style
    muted: Style
    hit: Style


def render_page(page: list[Entry], query: str | None, styles: PageStyles) -> tuple[Text, int]:
    """One page as rich Text (never markup-parsed), every piece through core.sanitize, and
    the hits of `query` marked in the values (never in a heading or a path): (text, hits)."""
    text = Text(overflow="fold")  # wraps between words; only a word wider than the pane folds
    needle = terminal_safe(query) if query else ""
    hits = 0
    in_fields = False
    for number, entry in enumerate(page):
        if entry.kind == "text":
            if number:
                text.append("\n")
            in_fields = False
            heading = one_line(entry.label) + (" (continued)" if entry.continued else "")
            text.append(heading + "\n", styles.heading)
            hits += _append_value(text, terminal_safe(entry.value, multiline=True), needle, styles)
            if not entry.value.endswith("\n"):
                text.append("\n")
            continue
        if not in_fields:
            text.append("\n" if number else "")
            text.append("fields\n", styles.heading + styles.muted)
            in_fields = True
        text.append(one_line(entry.label) + ": ", styles.muted)
        hits += _append_value(text, one_line(entry.value), needle, styles)
        text.append("\n")
    text.rstrip()
    return text, hits


def _append_value(text: Text, value: str, needle: str, styles: PageStyles) -> int:
    """Append `value`, its non-overlapping hits of `needle` marked (as str.count counts)."""
    start = len(text)
    text.append(value)
    if not needle:
        return 0
    hits, at = 0, value.find(needle)
    while at >= 0:
        text.stylize(styles.hit, start + at, start + at + len(needle))
        hits += 1
        at = value.find(needle, at + len(needle))
    return hits
