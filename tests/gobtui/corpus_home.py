"""A session of the project's corpus in a temporary Claude home, idle and over a low trigger:
what the watch and MCP suites run on in any clone (no ../shared/fixtures needed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.builders.common import stable_uuid
from tests.builders.sessions import claude_work_session
from tests.conftest import SHARED_FIXTURES

TOKENS = 60_000
SESSION = stable_uuid("claude", "home", TOKENS)
"""The session's id (claude_work_session names its sessions so)."""
LOW = ["--trigger", "20000", "--floor", "5000"]
IDLE_SINCE = 1_700_000_000


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    path = claude_work_session(TOKENS, "home").write(home / "projects")
    assert path.stem == SESSION
    os.utime(path, (IDLE_SINCE, IDLE_SINCE))  # an idle session, as file plans are for
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return path


SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"
SPOTTER_STAND_IN_TOKENS = 90_000


def place_spotter(target: Path) -> None:
    """The genuine spotter session at `target` when ../shared/fixtures is there, else a corpus
    session of the same id (a long debugging session over the trigger), so a suite built on
    it runs in any clone."""
    genuine = SHARED_FIXTURES / "claude" / f"marot__spotter__{SPOTTER}.jsonl"
    if genuine.is_file():
        shutil.copyfile(genuine, target)
    else:
        target.write_text(claude_work_session(SPOTTER_STAND_IN_TOKENS, session_id=SPOTTER).text())
