"""events.jsonl is opened as the vault opens its files: never through a symlink, a regular
file only, 0600 when created, under a data folder made private."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from gobtui.adapters.publish.events import append_event, events_path, read_events
from gobtui.core.model import Provider
from gobtui.core.telemetry import EventAction, EventOutcome, TelemetryEvent
from tests.adapters.test_private_fs import mode_of, umask_000

__all__ = ["umask_000"]  # a fixture, used by name

EVENT = TelemetryEvent(
    ts=1.0,
    provider=Provider.CLAUDE,
    session_id="s-1",
    source_identity_sha256="0" * 64,
    strategy="elide",
    action=EventAction.TRANSCRIPT_COMPACT,
    outcome=EventOutcome.APPLIED,
    trigger_tokens=1,
    context_tokens_before=2,
    context_tokens_after=1,
    est_reclaimed_tokens=1,
    items_covered=1,
    duration_ms=0.5,
)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_new_events_file_and_its_folders_are_private_under_umask_000(
    tmp_path: Path, umask_000: None
) -> None:
    root = tmp_path / "x" / "data"
    append_event(EVENT, root)
    assert mode_of(events_path(root)) == 0o600
    assert mode_of(root) == 0o700 and mode_of(root.parent) == 0o700
    assert read_events(root) == [EVENT]


def test_the_default_events_file_is_private_too(umask_000: None) -> None:
    append_event(EVENT)
    path = events_path()
    assert mode_of(path) == 0o600 and mode_of(path.parent) == 0o700
    assert read_events() == [EVENT]


def test_a_symlinked_events_file_is_neither_appended_to_nor_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "data"
    root.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    events_path(root).symlink_to(target)
    with caplog.at_level(logging.WARNING, logger="adapters"):
        append_event(EVENT, root)
        assert read_events(root) == []
    assert target.read_bytes() == b""
    link = events_path(root)
    assert warnings_of(caplog) == [
        f"event not recorded: events file {link} is a symlink; gobtui does not follow it",
        f"events not read: events file {link} is a symlink; gobtui does not follow it",
    ]


def test_a_dangling_symlink_does_not_create_its_target(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir(mode=0o700)
    events_path(root).symlink_to(tmp_path / "created-elsewhere")
    append_event(EVENT, root)
    assert not (tmp_path / "created-elsewhere").exists()


def test_a_fifo_in_its_place_neither_hangs_nor_takes_the_event(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "data"
    root.mkdir(mode=0o700)
    os.mkfifo(events_path(root))
    with caplog.at_level(logging.WARNING, logger="adapters"):
        append_event(EVENT, root)
        assert read_events(root) == []
    assert all("is not a regular file" in m for m in warnings_of(caplog))


def test_an_old_0644_events_file_is_tightened_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "data"
    append_event(EVENT, root)
    events_path(root).chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="adapters"):
        append_event(EVENT, root)
        append_event(EVENT, root)
    assert warnings_of(caplog) == [
        f"events file {events_path(root)} was 0644; made it 0600 (private to you)"
    ]
    assert mode_of(events_path(root)) == 0o600 and len(read_events(root)) == 3


def test_a_symlinked_data_folder_takes_no_event(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    target = tmp_path / "victim"
    target.mkdir(mode=0o755)
    (tmp_path / "data").symlink_to(target)
    with caplog.at_level(logging.WARNING, logger="adapters"):
        append_event(EVENT, tmp_path / "data")
    assert os.listdir(target) == [] and mode_of(target) == 0o755
    assert [m.split(":")[0] for m in warnings_of(caplog)] == ["event not recorded"]
