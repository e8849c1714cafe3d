"""What the dashboard remembers (theme, record-diff mode, strategy): beside config.toml, never
inside it; one JSON object, read key by key, saved read-modify-write."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import config_path
from gobtui.adapters.config.ui_state import (
    STATE_MAX_BYTES,
    THEME_NAME_MAX,
    RememberedChoices,
    UiState,
    read_state,
    save_theme,
    saved_theme,
    state_path,
    update_state,
)
from gobtui.core.strategies import STRATEGIES

KNOWN = tuple(STRATEGIES)


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


def test_theme_split_and_strategy_saved_one_by_one_are_all_read_back() -> None:
    assert read_state() == UiState()  # nothing saved yet
    save_theme("nord")
    update_state(UiState(diff_split=False))
    update_state(UiState(strategy="elide"))
    assert read_state(strategies=KNOWN) == UiState(theme="nord", diff_split=False, strategy="elide")
    assert orjson.loads(state_path().read_bytes()) == {
        "theme": "nord",
        "diff_split": False,
        "strategy": "elide",
    }
    save_theme("dracula")  # the theme's own save keeps the other two
    assert read_state(strategies=KNOWN) == UiState("dracula", False, "elide")
    update_state(UiState())  # nothing to change: no write
    assert state_path().stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ({"strategy": "no-such-strategy"}, UiState("nord", True, None)),
        ({"strategy": 3}, UiState("nord", True, None)),
        ({"strategy": "x" * (THEME_NAME_MAX + 1)}, UiState("nord", True, None)),
        ({"diff_split": 0}, UiState("nord", None, "cliff")),  # a bool, not a number
        ({"diff_split": "false"}, UiState("nord", None, "cliff")),
        ({"theme": None}, UiState(None, True, "cliff")),
    ],
)
def test_a_bad_value_forgets_that_key_only(entries: dict[str, object], expected: UiState) -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        orjson.dumps({"theme": "nord", "diff_split": True, "strategy": "cliff", **entries})
    )
    assert read_state(strategies=KNOWN) == expected
    assert saved_theme() == expected.theme


def test_an_unknown_strategy_is_a_plausible_name_until_the_ids_are_given() -> None:
    update_state(UiState(strategy="from-a-later-gobtui"))
    assert read_state().strategy == "from-a-later-gobtui"
    assert read_state(strategies=KNOWN).strategy is None


def test_a_save_keeps_bad_values_and_unknown_keys_as_they_were() -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"strategy": "no-such-strategy", "later_key": [1, 2]}')
    update_state(UiState(diff_split=False))
    assert orjson.loads(path.read_bytes()) == {
        "strategy": "no-such-strategy",
        "later_key": [1, 2],
        "diff_split": False,
    }
    assert read_state(strategies=KNOWN) == UiState(diff_split=False)


def test_an_oversized_state_file_is_read_as_empty_and_replaced_by_a_save() -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"theme": "nord", "pad": "' + b"x" * STATE_MAX_BYTES + b'"}')
    assert read_state() == UiState()
    update_state(UiState(strategy="elide"))
    assert orjson.loads(path.read_bytes()) == {"strategy": "elide"}


def test_a_symlinked_state_file_is_not_read_for_any_key_and_not_written_through(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    planted = b'{"theme": "planted", "diff_split": false, "strategy": "cliff"}'
    elsewhere.write_bytes(planted)
    state_path().parent.mkdir(parents=True, exist_ok=True)
    state_path().symlink_to(elsewhere)
    assert read_state() == UiState()
    assert RememberedChoices(strategies=KNOWN).state == UiState()
    update_state(UiState(diff_split=True))
    assert elsewhere.read_bytes() == planted  # neither read into the new file nor written
    assert not state_path().is_symlink()
    assert orjson.loads(state_path().read_bytes()) == {"diff_split": True}


def test_remembered_choices_are_read_once_and_written_by_flush() -> None:
    save_theme("nord")
    update_state(UiState(strategy="cliff"))
    choices = RememberedChoices(strategies=KNOWN)
    assert choices.state == UiState("nord", None, "cliff")
    assert not choices.pending
    choices.remember(UiState(diff_split=False))
    choices.remember(UiState(strategy="elide"))
    assert choices.state == UiState("nord", False, "elide")  # at once, before any write
    assert choices.pending and read_state().strategy == "cliff"
    save_theme("dracula")  # (the app saves the theme on its own meanwhile)
    choices.flush()
    assert not choices.pending
    assert read_state(strategies=KNOWN) == UiState("dracula", False, "elide")
    choices.flush()  # nothing pending: the file is left alone
    assert read_state(strategies=KNOWN) == UiState("dracula", False, "elide")


def test_flushes_from_threads_in_any_order_leave_the_latest_choice() -> None:
    """Quick toggles each start a flush in a thread; whichever runs last writes the latest."""
    choices = RememberedChoices(strategies=KNOWN)
    threads: list[threading.Thread] = []
    for i in range(40):
        choices.remember(UiState(diff_split=i % 2 == 0, strategy=KNOWN[i % len(KNOWN)]))
        threads.append(threading.Thread(target=choices.flush))
        threads[-1].start()
    for thread in threads:
        thread.join()
    assert (
        read_state(strategies=KNOWN)
        == choices.state
        == UiState(None, False, KNOWN[39 % len(KNOWN)])
    )
