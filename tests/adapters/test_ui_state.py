"""The theme the dashboard remembers: beside config.toml, never inside it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gobtui.adapters.config.paths import config_path
from gobtui.adapters.config.ui_state import THEME_NAME_MAX, save_theme, saved_theme, state_path


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


def test_a_missing_config_folder_is_made_0700_and_the_file_0600_under_umask_000(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOBTUI_CONFIG", str(tmp_path / "home" / "gobtui" / "config.toml"))
    old = os.umask(0)
    try:
        save_theme("nord")
    finally:
        os.umask(old)
    assert saved_theme() == "nord"
    for folder in (tmp_path / "home", tmp_path / "home" / "gobtui"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(state_path().stat().st_mode) == 0o600


def test_an_existing_config_folder_is_the_users_even_through_a_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir(mode=0o755)
    (tmp_path / "gobtui").symlink_to(dotfiles)  # as stow leaves ~/.config/gobtui
    monkeypatch.setenv("GOBTUI_CONFIG", str(tmp_path / "gobtui" / "config.toml"))
    save_theme("nord")
    assert saved_theme() == "nord"
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o755


def test_a_symlinked_state_file_is_not_read_and_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(b'{"theme": "planted"}')
    state_path().parent.mkdir(parents=True, exist_ok=True)
    state_path().symlink_to(elsewhere)
    assert saved_theme() is None
    save_theme("nord")
    assert elsewhere.read_bytes() == b'{"theme": "planted"}'
    assert not state_path().is_symlink() and saved_theme() == "nord"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's (chown) needs root")
def test_a_state_file_of_another_user_is_not_read() -> None:
    save_theme("nord")
    os.chown(state_path(), 65534, 65534)
    assert saved_theme() is None
