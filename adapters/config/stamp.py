"""A file's stamp: what changes when it is written, replaced or removed."""

from __future__ import annotations

import os
from pathlib import Path


def file_stamp(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size), None when absent (two writes within one tick of the clock that stamps
    files differ in size, mostly)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
