"""The theme the dashboard remembers: beside config.toml, never inside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.paths import config_path
from adapters.ui_state import THEME_NAME_MAX, save_theme, saved_theme, state_path


def test_a_saved_theme_is_read_back_beside_the_config() -> None:
    assert saved_theme() is None  # nothing saved yet
    save_theme("nord")
    assert saved_theme() == "nord"
    assert state_path().parent == config_path().parent
    assert not config_path().exists()  # the user's config is not written
    assert state_path().stat().st_mode & 0o077 == 0
    save_theme("ansi-dark")
    assert saved_theme() == "ansi-dark"


@pytest.mark.parametrize(
    "content",
    [b"", b"not json", b"[1]", b'{"theme": 7}', b'{"theme": ""}', b'{"other": "nord"}',
     b'{"theme": "' + b"x" * (THEME_NAME_MAX + 1) + b'"}'],
)  # fmt: skip
def test_a_damaged_state_file_means_no_saved_theme(content: bytes) -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    assert saved_theme() is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_folder_only_forgets_the_theme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("GOBTUI_CONFIG", str(locked / "config.toml"))
    save_theme("nord")
    assert saved_theme() is None


def test_a_state_path_that_is_a_folder_only_forgets_the_theme() -> None:
    state_path().mkdir(parents=True)  # (as root could write anywhere: a folder in the way)
    save_theme("nord")
    assert saved_theme() is None
