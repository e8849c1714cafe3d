"""The rule every provider's record ids follow in `verify` (the reference's): the ids of
records, the links between them and the ids of tool calls."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

ID_MAX_BYTES = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Unicode Cc, what the reference's char::is_control refuses in an id."""


def valid_id(value: Any) -> TypeGuard[str]:
    """A nonempty string of at most ID_MAX_BYTES UTF-8 bytes without control characters."""
    if type(value) is not str or not value or len(value) > ID_MAX_BYTES:
        return False
    if value.isascii():  # the common case: printable ASCII is exactly "no control character"
        return value.isprintable()
    if len(value.encode("utf-8", "surrogatepass")) > ID_MAX_BYTES:
        return False
    return _CONTROL.search(value) is None
