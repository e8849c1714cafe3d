"""Shared test fixtures: the genuine transcripts of ../shared/fixtures (when that folder is
there: a plain clone has only the sessions the real Claude Code wrote, tests/corpus/driven, and
the transcripts the project builds, tests/builders), copied before use."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.stand_ins import STAND_INS

REPO = Path(__file__).resolve().parent.parent
SHARED_FIXTURES = Path(os.environ.get("GOBTUI_FIXTURES", REPO.parent / "shared" / "fixtures"))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The read-only shared fixture tree (never written to)."""
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(
            f"the genuine transcripts are not here ({SHARED_FIXTURES}; set GOBTUI_FIXTURES)"
        )
    return SHARED_FIXTURES


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Iterator[object]:
    """copy(relative_path) -> a writable copy of a shared fixture file inside tmp_path; on a
    clone without ../shared/fixtures, the project's stand-in for it (tests/builders/stand_ins.py),
    else a skip that says which file is missing."""

    def copy(relative: str, dest_name: str | None = None) -> Path:
        source = SHARED_FIXTURES / relative
        target = tmp_path / "copies" / (dest_name or source.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_file():
            shutil.copyfile(source, target)
        elif relative in STAND_INS:
            target.write_text(STAND_INS[relative](), encoding="utf-8")
        else:
            pytest.skip(f"the genuine transcript {relative} is not here ({SHARED_FIXTURES})")
        return target

    yield copy


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never touch the real data, cache, config or provider homes from a test."""
    base = tmp_path_factory.mktemp("gobtui-env")
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("GOBTUI_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("GOBTUI_CONFIG", str(base / "config.toml"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "no-claude"))
    monkeypatch.setenv("CODEX_HOME", str(base / "no-codex"))


pytest_plugins = ["tests.e2e.report"]  # the real-client table: the xdist controller prints it
