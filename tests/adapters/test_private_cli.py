"""What the CLI says about gobtui's own folders: a refused data folder is one error line and
exit 2; a refused cache is one warning line (the command still runs); a tightened folder is
said once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gobtui.cli.dispatch import main
from tests.adapters.test_private_fs import NOBODY, as_nobody, mode_of, shared_tmp, victim

__all__ = ["shared_tmp", "victim"]  # fixtures, used by name


def detect(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["detect"])
    return code, capsys.readouterr().err.splitlines()


def test_a_symlinked_data_folder_is_one_error_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    victim: Path,
) -> None:
    (tmp_path / "data").symlink_to(victim)
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(tmp_path / "data"))
    assert detect(capsys) == (
        2,
        [f"gobtui: error: data folder {tmp_path / 'data'} is a symlink; gobtui does not follow it"],
    )
    assert mode_of(victim) == 0o755 and os.listdir(victim) == ["keep"]


def test_a_world_writable_data_folder_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(folder))
    assert main(["vault", "--json"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"gobtui: error: data folder {folder} is writable by others (mode 0777): check what is"
        " in it, then chmod go-w it"
    ]


def test_a_symlinked_cache_is_one_warning_line_and_detect_still_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    victim: Path,
) -> None:
    (tmp_path / "cache").symlink_to(victim)
    monkeypatch.setenv("GOBTUI_CACHE_DIR", str(tmp_path / "cache"))
    assert detect(capsys) == (
        0,
        [
            f"gobtui: warning: cache disabled: cache folder {tmp_path / 'cache'} is a symlink;"
            " gobtui does not follow it"
        ],
    )
    assert mode_of(victim) == 0o755 and os.listdir(victim) == ["keep"]


def test_a_0755_data_folder_is_tightened_and_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o755)
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(folder))
    assert detect(capsys) == (
        0,
        [f"gobtui: warning: data folder {folder} was 0755; made it 0700 (private to you)"],
    )
    assert detect(capsys) == (0, [])
    assert mode_of(folder) == 0o700


def test_as_nobody_a_data_folder_root_owns_is_refused(shared_tmp: Path) -> None:
    planted = shared_tmp / "data"
    planted.mkdir(mode=0o755)
    env = {
        "HOME": str(shared_tmp / "home"),
        "GOBTUI_DATA_DIR": str(planted),
        "GOBTUI_CACHE_DIR": str(shared_tmp / "home" / "cache"),
        "GOBTUI_CONFIG": str(shared_tmp / "home" / "config.toml"),
        "CLAUDE_CONFIG_DIR": str(shared_tmp / "home" / "no-claude"),
        "CODEX_HOME": str(shared_tmp / "home" / "no-codex"),
    }
    done = as_nobody(
        "from gobtui.cli.dispatch import main; raise SystemExit(main())", "detect", env=env
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"gobtui: error: data folder {planted} is owned by uid 0, not by you (uid {NOBODY})"
    ]
    # nobody's own cache was still made, privately.
    assert mode_of(shared_tmp / "home" / "cache" / "cursors") == 0o700
