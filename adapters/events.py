"""events.jsonl under the data directory: append one line per apply/undo; read what parses.

Appends are single `write` calls of one line in O_APPEND mode, so concurrent writers never
interleave within a line. Readers skip lines they cannot parse (a torn last line included).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
from pydantic import ValidationError

from adapters.paths import data_dir
from core.telemetry import TelemetryEvent

EVENTS_FILE = "events.jsonl"


def events_path(root: Path | None = None) -> Path:
    return (root or data_dir()) / EVENTS_FILE


def append_event(event: TelemetryEvent, root: Path | None = None) -> None:
    path = events_path(root)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = orjson.dumps(event.model_dump(mode="json", by_alias=True)) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_events(root: Path | None = None) -> list[TelemetryEvent]:
    try:
        data = events_path(root).read_bytes()
    except FileNotFoundError:
        return []
    events: list[TelemetryEvent] = []
    for line in data.splitlines():
        try:
            events.append(TelemetryEvent.model_validate(orjson.loads(line)))
        except (orjson.JSONDecodeError, ValidationError):
            continue
    return events
