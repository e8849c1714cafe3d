"""One record numbering for everything a user reads: a file's own records, counted from 1.
The 0-based physical line indexes stay inside (and in JSON, as the reference writes them)."""

from __future__ import annotations


def shown(index: int) -> int:
    """The number a user sees for the record on 0-based physical line `index`."""
    return index + 1


def index_of(number: int) -> int:
    """The 0-based line of a number a user typed. Raises ValueError below 1."""
    if number < 1:
        raise ValueError("records count from 1 (the first record is 1)")
    return number - 1
