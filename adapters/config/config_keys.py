"""Where a key of a TOML document is defined: tomllib parses but reports no positions.

Config errors must name the line of the offending key, so after tomllib has accepted a text
this scanner walks it once more, tracking table headers, (dotted, quoted) keys and values that
span lines (multi-line strings, arrays, inline tables).
"""

from __future__ import annotations

import re
import tomllib

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)")

Key = tuple[str, ...]
"""A dotted TOML key as its parts: `("sessions", "ab.c", "preset")`."""


def syntax_error_line(error: tomllib.TOMLDecodeError) -> int | None:
    """The line tomllib names in its message (it has no attribute for it in 3.11)."""
    position = _TOML_POSITION.search(str(error))
    return int(position.group(1)) if position else None


def dotted(key: Key) -> str:
    """`sessions."ab.c".preset`: bare parts as they are, the others quoted."""
    return ".".join(part if _BARE.fullmatch(part) else _quoted(part) for part in key)


def _quoted(part: str) -> str:
    escaped = part.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in escaped) + '"'


def _read_key(text: str, i: int) -> tuple[list[str], int]:
    """A (dotted, possibly quoted) key starting at i; returns its parts and the index after."""
    parts: list[str] = []
    while True:
        while i < len(text) and text[i] in " \t":
            i += 1
        quote = text[i] if i < len(text) else ""
        if quote in ('"', "'"):
            end = i + 1
            while text[end] != quote:
                end += 2 if quote == '"' and text[end] == "\\" else 1
            # tomllib already accepted the file: let it decode the escapes too.
            parts.append(tomllib.loads(f"k = {text[i : end + 1]}")["k"])
            i = end + 1
        else:
            match = _BARE.match(text, i)
            if match is None:
                return parts, i
            parts.append(match.group())
            i = match.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        if i >= len(text) or text[i] != ".":
            return parts, i
        i += 1


def _skip_value(text: str, i: int) -> int:
    """The index of the newline that ends the value starting at i (strings and nesting aware)."""
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            delim = ch * 3 if text.startswith(ch * 3, i) else ch
            j = i + len(delim)
            while not text.startswith(delim, j):
                j += 2 if ch == '"' and text[j] == "\\" else 1
            j += len(delim)
            while len(delim) == 3 and j < len(text) and text[j] == ch:  # `""""` ends a string
                j += 1
            i = j
            continue
        if ch == "#":
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if ch == "\n" and depth == 0:
            return i
        depth += (ch in "[{") - (ch in "]}")
        i += 1
    return i


def key_lines(text: str) -> dict[Key, int]:
    """Dotted key (and every prefix of one) -> the 1-based line where it first appears.

    tomllib reports no positions; the text has already parsed, so a small scanner suffices.
    Keys inside inline tables are not recorded: they resolve to the line of their parent.
    """
    lines: dict[Key, int] = {}
    table: Key = ()
    i = counted = 0
    line = 1
    while i < len(text):
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
            continue
        if ch == "#":
            i = _skip_value(text, i)
            continue
        line += text.count("\n", counted, i)
        counted = i
        if ch == "[":
            parts, i = _read_key(text, i + (2 if text.startswith("[[", i) else 1))
            table = key = tuple(parts)
            end = text.find("\n", i)  # only `]` and a comment follow a header
            i = len(text) if end < 0 else end
        else:
            parts, i = _read_key(text, i)
            key = (*table, *parts)
            i = _skip_value(text, text.index("=", i) + 1)
        for n in range(1, len(key) + 1):
            lines.setdefault(key[:n], line)
    return lines
