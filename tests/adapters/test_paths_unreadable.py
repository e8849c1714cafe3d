"""A home named on the command line that cannot be read is an error, like a missing one; so is
a data folder gobtui cannot reach or create."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.config.paths import HomeError, data_dir, resolve_homes
from gobtui.adapters.files.private_fs import PrivateError, PrivateErrorCode
from tests.adapters.test_discovery import needs_non_root
from tests.adapters.test_discovery_unreadable import deny


def test_an_unlistable_named_home_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "claude"
    home.mkdir()
    deny(monkeypatch, "scandir", home)
    with pytest.raises(HomeError, match=r"^claude home .* cannot be read: permission denied$"):
        resolve_homes(str(home), None, {})


def test_a_named_home_behind_a_closed_parent_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # stat fails with EACCES (not ENOENT): Path.exists() used to raise it as a bare OSError.
    home = tmp_path / "codex"
    home.mkdir()
    deny(monkeypatch, "stat", home)
    with pytest.raises(HomeError, match=r"^codex home .* cannot be read: permission denied$"):
        resolve_homes(None, str(home), {})


def test_an_unread_default_home_is_left_to_discovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "claude"
    home.mkdir()
    deny(monkeypatch, "scandir", home)
    assert resolve_homes(None, None, {"CLAUDE_CONFIG_DIR": str(home)}).claude == home


@needs_non_root
def test_chmod_000_named_home_is_an_error(tmp_path: Path) -> None:
    home = tmp_path / "claude"
    home.mkdir()
    home.chmod(0)
    try:
        with pytest.raises(HomeError, match="cannot be read: permission denied"):
            resolve_homes(str(home), None, {})
    finally:
        home.chmod(0o755)


def test_a_data_folder_behind_a_closed_parent_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(closed / "a" / "data"))
    deny(monkeypatch, "stat", closed)
    with pytest.raises(PrivateError) as caught:
        data_dir()
    assert caught.value.code is PrivateErrorCode.IO
    assert str(caught.value) == (
        f"{closed} (above the data folder {closed / 'a' / 'data'}) cannot be reached:"
        " permission denied"
    )


@needs_non_root
def test_a_data_folder_under_a_read_only_parent_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(locked / "data"))
    try:
        with pytest.raises(PrivateError, match=r"cannot be created: permission denied$"):
            data_dir()
    finally:
        locked.chmod(0o700)
