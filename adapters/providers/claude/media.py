"""Images and documents in a Claude fork: an old screenshot or PDF becomes a text block that
names its kind, size and (for an image) dimensions; the message around it stays.

The dimensions come from the first bytes of the data (PNG, GIF, WebP and JPEG headers), never
from decoding the whole picture.
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

from ....core.figures import bytes_words
from .items import MEDIA_TYPES

_HEAD_CHARS = 65_536
"""Base64 decoded to find an image's size: a JPEG's frame header can follow its metadata."""


def dimensions(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 image from its header; None when it cannot tell."""
    head = data[: min(len(data), _HEAD_CHARS) // 4 * 4]
    try:
        raw = base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return None
    size = _header_size(raw)
    return size if size is not None and size[0] > 0 and size[1] > 0 else None


def _header_size(raw: bytes) -> tuple[int, int] | None:
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        return struct.unpack(">II", raw[16:24])
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        return struct.unpack("<HH", raw[6:10])
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP" and raw[12:16] == b"VP8X" and len(raw) >= 30:
        width = int.from_bytes(raw[24:27], "little") + 1
        return width, int.from_bytes(raw[27:30], "little") + 1
    if raw[:2] == b"\xff\xd8":
        return _jpeg(raw)
    return None


def _jpeg(raw: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(raw):
        if raw[at] != 0xFF:
            return None
        marker = raw[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            at += 2
            continue
        size = int.from_bytes(raw[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[at + 5 : at + 9])
            return width, height
        at += 2 + size
    return None


def media_stub(block: dict[str, Any]) -> dict[str, Any]:
    """The text block that stands for an image or document block in a fork."""
    source = block.get("source")
    source = source if type(source) is dict else {}
    data = source.get("data")
    kind = source.get("media_type")
    kind = kind if type(kind) is str and len(kind) <= 64 and kind.isprintable() else block["type"]
    facts = [kind]
    if type(data) is str:
        facts.append(f"{bytes_words(len(data) * 3 // 4)}")
        if block.get("type") == "image" and (size := dimensions(data)) is not None:
            facts.append(f"{size[0]}x{size[1]}")
    return {"type": "text", "text": f"[{block['type']} removed by gobtui: {', '.join(facts)}]"}


def stub_media(blocks: list[Any]) -> int:
    """Each image or document block of `blocks` replaced, in place, by its media_stub;
    how many."""
    stubbed = 0
    for index, block in enumerate(blocks):
        if type(block) is dict and block.get("type") in MEDIA_TYPES:
            blocks[index] = media_stub(block)
            stubbed += 1
    return stubbed
