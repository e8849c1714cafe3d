"""The one sanitizer for text bound for a terminal: transcript text never reaches it raw.

A transcript is hostile input. A prompt holding ESC[2J, ESC]0;TITLE BEL or ESC]52;c;...
BEL would clear the screen, rename the tmux pane or write the clipboard once printed; bidi
controls (U+202E ...) reorder what is shown around them. Every string that comes from a
transcript or a file name goes through `terminal_safe` before a widget, a toast, the
palette or a CLI line shows it (`--json` output stays exact JSON).

What changes: C0 controls and DEL become their visible Control Pictures (ESC -> ␛); C1
controls, bidi controls, other invisible format characters and lone surrogates become
U+FFFD; line and paragraph separators become a space. JSON for a terminal keeps every
character but writes those (and only those) as \\u escapes (`json_escaped`). Kept: zero-width (non-)joiners and tag characters,
which emoji and scripts need and which move no cursor. Newlines and tabs are kept only
where the caller shows several lines.
"""

from __future__ import annotations

import unicodedata

REPLACEMENT = "\ufffd"
KEPT_FORMAT = frozenset({0x200C, 0x200D, *range(0xE0020, 0xE0080)})
"""Format characters kept: emoji sequences and scripts need them, and they move nothing."""


def _shown(char: str) -> str | None:
    """What a terminal is shown for `char`, or None to show it as it is."""
    category = unicodedata.category(char)
    if category == "Cc":
        code = ord(char)
        if code < 0x20:
            return chr(0x2400 + code)
        return "\u2421" if code == 0x7F else REPLACEMENT  # C1: ESC's 8-bit twins (CSI U+009B)
    if category == "Cf":
        return None if ord(char) in KEPT_FORMAT else REPLACEMENT
    if category in ("Zl", "Zp"):
        return " "
    if category == "Cs":  # a lone surrogate (a JSON escape can hold one): not a character
        return REPLACEMENT
    return None


_MULTILINE = {"\n": "\n", "\t": "\t", "\r": ""}


def terminal_safe(text: str, *, multiline: bool = False) -> str:
    """`text` with nothing a terminal would act on (see the module docstring). `multiline`
    keeps newlines and tabs (and drops a CR); else they are shown too."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to look at
    out: list[str] = []
    for char in text:
        if char.isprintable() and char.isascii():
            out.append(char)
            continue
        if multiline and char in _MULTILINE:
            out.append(_MULTILINE[char])
            continue
        shown = _shown(char)
        out.append(char if shown is None else shown)
    return "".join(out)


def one_line(text: str) -> str:
    """terminal_safe() for a cell or a single line: a newline or tab becomes a space (what a
    title or a path holds of them is layout, not content worth a ␊)."""
    if text.isascii() and text.isprintable():
        return text
    return terminal_safe(text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells a character past the BMP as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_escaped(encoded: str) -> str:
    """Encoded JSON with every character terminal_safe() would change written as a \\u
    escape: the same JSON value, nothing a terminal acts on. Outside strings JSON is ASCII,
    so only string contents change (an encoder has already escaped C0 and the quote)."""
    if encoded.isascii():
        return encoded
    return "".join(
        _json_escape(char) if not char.isascii() and _shown(char) is not None else char
        for char in encoded
    )
