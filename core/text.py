"""Sizes and cuts of text, alike for every provider."""

from __future__ import annotations


def utf8_len(text: str) -> int:
    """The UTF-8 length of `text` (a lone surrogate, which a JSON escape can hold, as 3)."""
    # isascii() is O(1) on CPython; most payloads are ASCII, so no copy.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def collapse(text: str, limit: int) -> str:
    """Whitespace collapsed, cut to `limit`. Only a prefix is scanned: texts can be huge."""
    quick = limit + limit // 2
    if len(text) > quick:
        # The collapse of a prefix is a prefix of the collapse of the whole (a word it cuts
        # short is a prefix of that word): once longer than `limit` it decides the cut.
        head = " ".join(text[:quick].split())
        if len(head) > limit:
            return head[: limit - 1] + "…"
    return cut(" ".join(text[: limit * 4].split()), limit)
