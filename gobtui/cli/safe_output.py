"""The CLI's standard output and error as a terminal receives them: transcript text in a
line (a title, a card, a path, a record page) is made safe to show (core.sanitize), so a
session can neither move the cursor nor rename the pane nor write the clipboard. `--json`
output goes out exact: the same JSON, with what a terminal would act on written as \\u
escapes (write_json)."""

from __future__ import annotations

import io
import sys
from typing import Any, TextIO

import orjson

from gobtui.core.sanitize import json_escaped, terminal_safe


class SafeText(io.TextIOBase):
    """A text stream that writes `terminal_safe(text, multiline=True)` to another."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_safe(text, multiline=True))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding


class SafeStreams:
    """sys.stdout and sys.stderr made safe while in use (`with SafeStreams():`); JSON goes
    out beside them, exact (write_json)."""

    def __enter__(self) -> SafeStreams:
        self.out, self.err = sys.stdout, sys.stderr
        sys.stdout = SafeText(self.out)
        sys.stderr = SafeText(self.err)
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, SafeText):
                stream.flush()
        sys.stdout, sys.stderr = self.out, self.err


def raw_stderr() -> TextIO:
    """The terminal's own stderr, for what gobtui draws itself (a progress bar's \\r)."""
    stream = sys.stderr
    return stream.raw if isinstance(stream, SafeText) else stream


def write_json(data: Any) -> None:
    """`data` as indented JSON on stdout, safe to show on a terminal (json_escaped)."""
    _write_raw(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode("utf-8"))


def write_json_line(data: Any) -> None:
    """`data` as one compact JSON line on stdout (a stream a script reads line by line),
    safe to show on a terminal as write_json's."""
    _write_raw(orjson.dumps(data).decode("utf-8"))


def _write_raw(encoded: str) -> None:
    out = sys.stdout
    raw = out.raw if isinstance(out, SafeText) else out
    raw.flush()
    raw.buffer.write(json_escaped(encoded).encode("utf-8") + b"\n")
    raw.flush()
