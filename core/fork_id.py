"""A fork's session id says that it is a fork, and the size it was published at.

A fork and its source look alike, and a receipt only exists in the data dir that published
the fork: a `watch` with another data dir (another machine, a second config) would take an
unresumed fork for a session of its own and compact it again, a fork of a fork. So the id is
made to carry what a receipt would say. It is a version-4 UUID (what both clients write and
accept) whose 122 free bits hold:

    50 bits of the operation id | 40 bits of the fork's size | 32-bit tag

The tag is a digest of the other 90 bits, so a client's own random id passes for a fork once
in four billion, and then only reads as a fork while its file has the size the id names. A
fork whose file still has that size has not been resumed: no client has written to it.
"""

from __future__ import annotations

import hashlib
import uuid

_OP_BITS = 50
_SIZE_BITS = 40
_TAG_BITS = 32
_LOW_BITS = 62
"""The free bits below the variant; 12 more sit between the version and the variant, and
48 above the version."""
_TAG_SALT = b"gobtui fork id\x00"
MAX_TAGGED_SIZE = (1 << _SIZE_BITS) - 1
"""A fork past this size (1 TiB) names this size instead: it then never reads as unresumed."""


def _tag(head: int) -> int:
    digest = hashlib.sha256(_TAG_SALT + head.to_bytes(12, "big")).digest()
    return int.from_bytes(digest[:4], "big")


def _size_mask(op_bits: int) -> int:
    """Sizes are masked so that ids look as random as any (a small size would be zeros)."""
    digest = hashlib.sha256(_TAG_SALT + op_bits.to_bytes(7, "big")).digest()
    return int.from_bytes(digest[:5], "big") & MAX_TAGGED_SIZE


def fork_session_id(operation: str, size: int) -> str:
    """The id of the fork `operation` publishes, `size` bytes long: the same operation and
    bytes always name the same fork, whichever data dir publishes it."""
    op_bits = int(operation[:16], 16) >> (64 - _OP_BITS)
    head = (op_bits << _SIZE_BITS) | (min(max(size, 0), MAX_TAGGED_SIZE) ^ _size_mask(op_bits))
    free = (head << _TAG_BITS) | _tag(head)
    low = free & ((1 << _LOW_BITS) - 1)
    middle = (free >> _LOW_BITS) & 0xFFF
    high = free >> (_LOW_BITS + 12)
    value = (high << 80) | (4 << 76) | (middle << 64) | (0b10 << 62) | low
    return str(uuid.UUID(int=value))


def published_size(session_id: str) -> int | None:
    """The size a fork with this id was published at; None when the id is not a fork's."""
    if len(session_id) != 36:
        return None
    try:
        value = uuid.UUID(session_id).int
    except ValueError:
        return None
    if (value >> 76) & 0xF != 4 or (value >> 62) & 0b11 != 0b10:
        return None
    low = value & ((1 << _LOW_BITS) - 1)
    middle = (value >> 64) & 0xFFF
    high = value >> 80
    free = (high << (_LOW_BITS + 12)) | (middle << _LOW_BITS) | low
    head = free >> _TAG_BITS
    if free & ((1 << _TAG_BITS) - 1) != _tag(head):
        return None
    return (head & MAX_TAGGED_SIZE) ^ _size_mask(head >> _SIZE_BITS)
