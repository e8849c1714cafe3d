"""cursors.json under the data folder: one delta cursor per (caller, session).

The file is small and rewritten whole (atomically, 0600), read and written back under its
lock so that deltas running at once for other sessions each keep their cursor. Expired
cursors are kept a while so their next call can say they expired; the least recently used go
first past the cap. A file that does not parse is started afresh, with a warning.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import orjson
from pydantic import ValidationError

from ...core.limits import CURSOR_KEEP_SECS, CURSOR_MAX_ENTRIES
from ...core.recall.model import Cursor
from ..config.paths import data_dir
from ..files.atomic import replace_private
from ..files.private_fs import open_private
from ..files.state_lock import state_locked

log = logging.getLogger(__name__)

CURSORS_FILE = "cursors.json"
LABEL = "cursor file"


def _path(root: Path | None) -> Path:
    return (root or data_dir()) / CURSORS_FILE


def _key(caller: str, session_id: str) -> str:
    return f"{caller}\x1f{session_id}"


def _load(path: Path) -> dict[str, Cursor]:
    try:
        fd, notes = open_private(path, os.O_RDONLY, LABEL)
    except FileNotFoundError:
        return {}
    for note in notes:
        log.warning("%s", note)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        rows = orjson.loads(data)["cursors"]
        cursors = [Cursor.model_validate(row) for row in rows]
    except (orjson.JSONDecodeError, ValidationError, KeyError, TypeError) as error:
        log.warning("%s %s unreadable (%s); starting afresh", LABEL, path, type(error).__name__)
        return {}
    return {_key(c.caller, c.session_id): c for c in cursors}


def stored_cursor(caller: str, session_id: str, root: Path | None = None) -> Cursor | None:
    """The caller's cursor for the session (PrivateError: the file cannot be trusted)."""
    return _load(_path(root)).get(_key(caller, session_id))


def store_cursor(cursor: Cursor, now: float, root: Path | None = None) -> None:
    path = _path(root)
    with state_locked(path, LABEL):
        cursors = _load(path)
        cursors[_key(cursor.caller, cursor.session_id)] = cursor
        kept = sorted(
            (c for c in cursors.values() if now - c.touched <= CURSOR_KEEP_SECS),
            key=lambda c: -c.touched,
        )[:CURSOR_MAX_ENTRIES]
        data = orjson.dumps({"cursors": [c.model_dump() for c in kept]})
        replace_private(path, data)
