"""data_dir(): the folder holding the vault is handed out only once it is private."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from gobtui.adapters.config.paths import data_dir
from gobtui.adapters.files.private_fs import PrivateError, PrivateErrorCode
from tests.adapters.test_private_fs import NOBODY, mode_of, needs_root, umask_000, victim

__all__ = ["umask_000", "victim"]  # fixtures, used by name


def use(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(folder))


def test_missing_levels_of_the_data_folder_are_0700_under_umask_000(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_000: None
) -> None:
    tmp_path.chmod(0o755)
    use(monkeypatch, tmp_path / "a" / "b" / "data")
    assert data_dir() == tmp_path / "a" / "b" / "data"
    for level in ("a", "a/b", "a/b/data"):
        assert mode_of(tmp_path / level) == 0o700, level
    assert mode_of(tmp_path) == 0o755


def test_the_default_data_folder_and_its_xdg_parents_are_0700(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_000: None
) -> None:
    monkeypatch.delenv("GOBTUI_DATA_DIR")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = data_dir()
    assert folder == tmp_path / ".local" / "share" / "gobtui"
    for level in (folder, folder.parent, folder.parent.parent):
        assert mode_of(level) == 0o700, level


def test_saying_where_with_an_environment_creates_nothing(tmp_path: Path) -> None:
    assert data_dir({"GOBTUI_DATA_DIR": str(tmp_path / "d")}) == tmp_path / "d"
    assert not (tmp_path / "d").exists()


def test_a_symlinked_data_folder_is_refused_and_its_target_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: Path
) -> None:
    (tmp_path / "data").symlink_to(victim)
    use(monkeypatch, tmp_path / "data")
    with pytest.raises(PrivateError, match=r"is a symlink; gobtui does not follow it$") as caught:
        data_dir()
    assert caught.value.code is PrivateErrorCode.SYMLINK
    assert mode_of(victim) == 0o755 and os.listdir(victim) == ["keep"]


def test_a_0755_data_folder_is_tightened_and_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o755)
    use(monkeypatch, folder)
    with caplog.at_level(logging.WARNING, logger="adapters"):
        data_dir()
        data_dir()
    assert [r.getMessage() for r in caplog.records] == [
        f"data folder {folder} was 0755; made it 0700 (private to you)"
    ]
    assert mode_of(folder) == 0o700


@pytest.mark.parametrize("make", ["file", "world-writable"])
def test_a_data_folder_that_is_a_file_or_world_writable_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: str
) -> None:
    folder = tmp_path / "data"
    if make == "file":
        folder.write_text("")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    use(monkeypatch, folder)
    with pytest.raises(PrivateError):
        data_dir()
    assert folder.is_file() or mode_of(folder) == 0o777


@needs_root
def test_a_data_folder_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    os.chown(folder, NOBODY, NOBODY)
    use(monkeypatch, folder)
    with pytest.raises(PrivateError, match=f"is owned by uid {NOBODY}, not by you") as caught:
        data_dir()
    assert caught.value.code is PrivateErrorCode.FOREIGN_OWNER
    assert mode_of(folder) == 0o755


def test_the_vault_lands_in_a_checked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: Path
) -> None:
    """Vault() names data_dir()/vault: a symlinked data folder stops it before any write."""
    from gobtui.adapters.vault.vault import Vault

    (tmp_path / "data").symlink_to(victim)
    use(monkeypatch, tmp_path / "data")
    with pytest.raises(PrivateError):
        Vault()
    assert os.listdir(victim) == ["keep"]
