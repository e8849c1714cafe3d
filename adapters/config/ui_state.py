"""What the dashboard remembers between runs that is not configuration: the theme last picked
in the palette, the plan preview's record-diff mode (split or unified) and the strategy last
picked there. Kept beside config.toml (ui-state.json), never in it: that file is the user's.

ui-state.json is one small JSON object, {"theme": str, "diff_split": bool, "strategy": str}.
Each key is read on its own: a missing or bad value is that key forgotten, never the others.
Saving is read-modify-write: the keys given replace theirs, every other entry is kept as it
was (a later gobtui's keys survive this one's writes). Writes in this process take one lock.

The config folder is the user's too (often a symlink into their dotfiles), so an existing one
is used as it is; a missing one is created 0700 without following symlinks. ui-state.json is
written 0600 by a rename (which replaces a symlink, never writes through it) and read only as
a regular file of the user's (adapters.files.private_fs).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from ..files.atomic import replace_private
from ..files.private_fs import PrivateError, open_private, private_dir
from .paths import config_path

log = logging.getLogger(__name__)

STATE_NAME = "ui-state.json"
NAME_MAX = 64
"""A saved theme or strategy name longer than this is not one (the file was edited or damaged)."""
THEME_NAME_MAX = NAME_MAX
STATE_MAX_BYTES = 64 * 1024
"""A state file larger than this is not one of ours: read as empty (and replaced on a save)."""

_WRITING = threading.RLock()
"""One read-modify-write at a time in this process (the UI thread's and the workers')."""


@dataclass(frozen=True, slots=True)
class UiState:
    """The remembered choices; None is "nothing (valid) remembered" for that key. As the
    changes of a save, None is "leave it as it is"."""

    theme: str | None = None
    diff_split: bool | None = None
    strategy: str | None = None

    def merged(self, changes: UiState) -> UiState:
        """These choices with those `changes` gives (not None) replacing them."""
        return replace(
            self,
            theme=self.theme if changes.theme is None else changes.theme,
            diff_split=self.diff_split if changes.diff_split is None else changes.diff_split,
            strategy=self.strategy if changes.strategy is None else changes.strategy,
        )

    def entries(self) -> dict[str, str | bool]:
        """The keys that are set, as they are written to the file."""
        found: dict[str, str | bool] = {}
        if self.theme is not None:
            found["theme"] = self.theme
        if self.diff_split is not None:
            found["diff_split"] = self.diff_split
        if self.strategy is not None:
            found["strategy"] = self.strategy
        return found


def state_path(environ: Mapping[str, str] | None = None) -> Path:
    return config_path(environ).with_name(STATE_NAME)


def _read_object(path: Path) -> dict[str, object]:
    """The file's JSON object, or {} (no file, not ours, too large, not a JSON object)."""
    try:
        fd, notes = open_private(path, os.O_RDONLY, "dashboard state file")
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(STATE_MAX_BYTES + 1)
        data = orjson.loads(raw) if len(raw) <= STATE_MAX_BYTES else None
    except (OSError, PrivateError, orjson.JSONDecodeError):
        return {}
    for note in notes:
        log.warning("%s", note)
    return data if isinstance(data, dict) else {}


def _name(value: object, allowed: Collection[str] | None = None) -> str | None:
    if not isinstance(value, str) or not 0 < len(value) <= NAME_MAX:
        return None
    return value if allowed is None or value in allowed else None


def read_state(
    environ: Mapping[str, str] | None = None, strategies: Collection[str] | None = None
) -> UiState:
    """What ui-state.json remembers, key by key. `strategies`: the ids a remembered strategy
    must be one of (the caller's registry; None: any plausible name)."""
    data = _read_object(state_path(environ))
    split = data.get("diff_split")
    return UiState(
        theme=_name(data.get("theme")),
        diff_split=split if isinstance(split, bool) else None,
        strategy=_name(data.get("strategy"), strategies),
    )


def update_state(changes: UiState, environ: Mapping[str, str] | None = None) -> None:
    """Save the keys `changes` sets, keeping every other entry of the file (a failure to
    write is not worth an error: these are preferences)."""
    entries = changes.entries()
    if not entries:
        return
    path = state_path(environ)
    with _WRITING:
        try:
            data = _read_object(path)
            data.update(entries)
            if not path.parent.is_dir():
                private_dir(path.parent, "config folder")
            replace_private(path, orjson.dumps(data))
        except (OSError, PrivateError):
            return


def saved_theme(environ: Mapping[str, str] | None = None) -> str | None:
    """The theme last picked, or None (no file, or one this does not understand)."""
    return read_state(environ).theme


def save_theme(theme: str, environ: Mapping[str, str] | None = None) -> None:
    """Remember `theme`, keeping the other choices."""
    update_state(UiState(theme=theme), environ)


class RememberedChoices:
    """One run's view of ui-state.json: read once; a choice is remembered in memory at once
    (`state`) and written by `flush`, from any thread. Each flush writes what is pending when
    it gets the lock, so however the flushes of quick changes are scheduled, the last one to
    write has the latest values."""

    def __init__(
        self, environ: Mapping[str, str] | None = None, strategies: Collection[str] | None = None
    ) -> None:
        self.environ = environ
        self.state = read_state(environ, strategies)
        self._pending = UiState()
        self._pending_lock = threading.Lock()

    def remember(self, changes: UiState) -> None:
        """Note `changes` (what is not None); `flush` writes them."""
        self.state = self.state.merged(changes)
        with self._pending_lock:
            self._pending = self._pending.merged(changes)

    @property
    def pending(self) -> bool:
        with self._pending_lock:
            return bool(self._pending.entries())

    def flush(self) -> None:
        """Write what is pending (nothing: no write)."""
        with _WRITING:
            with self._pending_lock:
                pending, self._pending = self._pending, UiState()
            update_state(pending, self.environ)
