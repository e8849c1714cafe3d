"""events.jsonl under the data directory: append one line per apply/undo; read what parses.

Appends are single `write` calls of one line in O_APPEND mode, so concurrent writers never
interleave within a line. Readers skip lines they cannot parse (a torn last line included).
The file is opened as the vault opens its own: never through a symlink, a regular file only,
0600 when created (adapters.files.private_fs). One that cannot be trusted is neither written nor
read, and a warning says so: telemetry never fails a publication.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import orjson
from pydantic import ValidationError

from ...core.telemetry import TelemetryEvent
from ..config.paths import data_dir
from ..files.private_fs import PrivateError, open_private, private_dir

log = logging.getLogger(__name__)

EVENTS_FILE = "events.jsonl"
LABEL = "events file"


def events_path(root: Path | None = None) -> Path:
    return (root or data_dir()) / EVENTS_FILE


def append_event(event: TelemetryEvent, root: Path | None = None) -> None:
    """Append `event`. An unsafe data folder (`root`) or events file is a warning, not an error.
    (data_dir() itself refuses an unsafe default folder before anything else uses it.)"""
    line = orjson.dumps(event.model_dump(mode="json", by_alias=True)) + b"\n"
    try:
        notes = [] if root is None else private_dir(root, "data folder")
        path = events_path(root)
        fd, more = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, LABEL)
    except PrivateError as error:
        log.warning("event not recorded: %s", error)
        return
    for note in notes + more:
        log.warning("%s", note)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _read(path: Path) -> bytes:
    fd, notes = open_private(path, os.O_RDONLY, LABEL)
    for note in notes:
        log.warning("%s", note)
    with os.fdopen(fd, "rb") as handle:  # (closes fd)
        return handle.read()


def read_events(root: Path | None = None) -> list[TelemetryEvent]:
    """The events that parse, oldest first; none when the file is missing or untrusted."""
    try:
        data = _read(events_path(root))
    except FileNotFoundError:
        return []
    except PrivateError as error:
        log.warning("events not read: %s", error)
        return []
    events: list[TelemetryEvent] = []
    for line in data.splitlines():
        try:
            events.append(TelemetryEvent.model_validate(orjson.loads(line)))
        except (orjson.JSONDecodeError, ValidationError):
            continue
    return events
