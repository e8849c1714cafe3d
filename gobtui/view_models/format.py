"""Short human renderings of numbers, durations and paths for narrow panes."""

from __future__ import annotations

import os
import re
import unicodedata

from rich.cells import cell_len, set_cell_size

from gobtui.core.figures import bytes_words, tokens_words
from gobtui.core.sanitize import one_line

NO_PLAN_WORDS = {
    "below_trigger": "below the trigger",
    "strategy_returned_no_plan": "nothing to compact",
    "minimum_savings_not_met": "saves under the minimum",
    "empty_external_edits": "the command proposed no edits",
    "external_nonreducing_plan": "the command's plan saves nothing",
}
"""What the board says for each no-plan reason code (the CLI's JSON keeps the codes)."""


def no_plan_words(code: str) -> str:
    return NO_PLAN_WORDS.get(code, code)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`1 record`, `2 records` (or `many` when the plural is not noun + s), with thousands."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def tokens(n: int | None) -> str:
    return "—" if n is None else tokens_words(n)


def duration(secs: float | None) -> str:
    if secs is None:
        return "—"
    s = max(0, int(secs))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86_400:
        return f"{s // 3600}h"
    return f"{s // 86_400}d"


def rate(per_min: float | None) -> str:
    if per_min is None:
        return "—"
    if per_min < 1:
        return "0/m"
    return f"+{tokens(round(per_min))}/m"


def percent(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.0f}%"


def short_id(session_id: str, width: int = 8) -> str:
    return one_line(session_id[:width])


def display_path(path: str, home: str | None = None) -> str:
    """The path with the user's home folded to ~ (stable in tests that set HOME), safe to
    show (core.sanitize: a file name can hold an escape too)."""
    path = one_line(path)
    home = home if home is not None else os.environ.get("HOME", "")
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def ellipsize_middle(text: str, width: int) -> str:
    """`text` in `width` characters, cut in the middle: a path keeps its file name. Safe to
    show, as every ellipsize here: these are how transcript text is fitted to a cell."""
    text = one_line(text)
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail = (width - 1) * 2 // 3
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


WIDTH_UNSTABLE = re.compile("[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff]")
"""Variation selectors and skin-tone modifiers: Rich counts "⚠️" and "👍🏽" as 2 cells, tmux
as 1 and 4, so a cell holding them pushes the columns after it. Without them, both agree."""


def cell_stable(text: str) -> str:
    """`text` for a fixed-width cell: nothing whose width the terminal and Rich disagree on."""
    return text if text.isascii() else WIDTH_UNSTABLE.sub("", text)


def ellipsize(text: str, width: int) -> str:
    """`text` on one line in at most `width` terminal cells (wide characters count two, an
    emoji sequence is never cut), an ellipsis where it is cut."""
    text = cell_stable(one_line(text))
    if width <= 0:
        return ""
    if text.isascii():
        return text if len(text) <= width else text[: max(0, width - 1)] + "…"
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)).rstrip() + "…"


def human_bytes(n: int) -> str:
    return bytes_words(n)


def client_words(compacts: bool, reckons: int, threshold: int) -> str:
    """What the provider's client will do with a fork the moment it resumes it."""
    if compacts:
        return (
            f"the client will compact this fork itself on resume (it reckons {tokens(reckons)}, "
            f"over its {tokens(threshold)}): cut deeper or lower the floor"
        )
    return f"resumes without a compaction of the client's own ({tokens(reckons)} of {tokens(threshold)})"


def toml_string(value: str) -> str:
    """`value` as a TOML basic string, quoted and escaped: what gobtui prints to be pasted
    into config.toml (a session id holding `"]` and a newline must stay one string)."""
    out = ['"']
    for char in value:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char.isprintable() and unicodedata.category(char) != "Cf":
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
    out.append('"')
    return "".join(out)
