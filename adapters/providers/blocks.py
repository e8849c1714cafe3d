"""The content lists both providers' messages hold (typed blocks with their text), read as
text for a conversation's entries."""

from __future__ import annotations

from typing import Any


def block_texts(blocks: Any, types: frozenset[str]) -> str:
    """The text of a content list (text blocks of `types`; an image as [image])."""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return ""
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        text = block.get("text")
        if btype in types and isinstance(text, str):
            texts.append(text)
        elif isinstance(btype, str) and "image" in btype:
            texts.append("[image]")
    return "\n".join(texts)
