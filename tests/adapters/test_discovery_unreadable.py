"""Discovery says what it cannot read (one warning per path), instead of skipping it silently.

Tests run as root here, where chmod 000 blocks nothing: the failures are made at the adapter
boundary instead (os.scandir / os.stat raising as the kernel would), plus one real chmod test
for non-root runs.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.sessions.discovery import scan_homes
from tests.adapters.test_discovery import CODEX, NOW, needs_non_root, paths_of, write


def deny(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    path: Path,
    error: type[OSError] = PermissionError,
) -> None:
    """os.<name>(path) raises `error` (EACCES or ENOENT, as the kernel would); other paths
    are served by the real function."""
    real: Callable[..., Any] = getattr(os, name)
    code = errno.ENOENT if error is FileNotFoundError else errno.EACCES

    def fake(target: Any = ".", *args: Any, **kwargs: Any) -> Any:
        if os.fspath(target) == str(path):
            raise error(code, os.strerror(code), str(path))
        return real(target, *args, **kwargs)

    monkeypatch.setattr(os, name, fake)


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "gobtui.adapters.sessions.discovery" and r.levelno == logging.WARNING
    ]


@pytest.fixture
def homes(tmp_path: Path) -> Homes:
    return Homes(claude=tmp_path / "claude", codex=tmp_path / "codex")


def test_an_unreadable_directory_is_skipped_with_a_warning(
    homes: Homes, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert homes.claude is not None and homes.codex is not None
    projects = homes.claude / "projects"
    write(projects / "p" / "s.jsonl")
    good = write(homes.codex / "sessions" / "rollout-1.jsonl", CODEX)
    deny(monkeypatch, "scandir", projects)
    report = scan_homes(homes, now=NOW, max_age_secs=None)
    assert paths_of(report.found) == [str(good)]
    assert report.skipped == [str(projects)]
    assert warnings(caplog) == [f"cannot read {projects}: permission denied"]


def test_an_unreadable_home_found_by_environment_is_not_taken_for_an_empty_one(
    homes: Homes, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # CH itself without search permission: stat(CH/projects) fails with EACCES, which the
    # old os.path.isdir check read as "no such directory".
    assert homes.claude is not None
    projects = homes.claude / "projects"
    write(projects / "p" / "s.jsonl")
    deny(monkeypatch, "stat", projects)
    report = scan_homes(homes, now=NOW, max_age_secs=None)
    assert report.found == [] and report.skipped == [str(projects)]
    assert warnings(caplog) == [f"cannot read {projects}: permission denied"]


def test_a_directory_gone_since_listed_is_skipped_quietly(
    homes: Homes, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert homes.claude is not None
    gone = homes.claude / "projects" / "p"
    write(gone / "s.jsonl")
    deny(monkeypatch, "scandir", gone, FileNotFoundError)
    report = scan_homes(homes, now=NOW, max_age_secs=None)
    assert report.skipped == [str(gone)] and warnings(caplog) == []


@needs_non_root
def test_chmod_000_directory_warns(homes: Homes, caplog: pytest.LogCaptureFixture) -> None:
    assert homes.claude is not None
    locked = homes.claude / "projects" / "locked"
    write(locked / "s.jsonl")
    locked.chmod(0)
    try:
        report = scan_homes(homes, now=NOW, max_age_secs=None)
    finally:
        locked.chmod(0o755)
    assert report.skipped == [str(locked)]
    assert warnings(caplog) == [f"cannot read {locked}: permission denied"]
