"""What the dashboard remembers between runs that is not configuration: the theme last picked
in the palette. Kept beside config.toml (ui-state.json), never in it: that file is the user's.

The config folder is the user's too (often a symlink into their dotfiles), so an existing one
is used as it is; a missing one is created 0700 without following symlinks. ui-state.json is
written 0600 by a rename (which replaces a symlink, never writes through it) and read only as
a regular file of the user's (adapters.files.private_fs).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import orjson

from ..files.atomic import replace_private
from ..files.private_fs import PrivateError, open_private, private_dir
from .paths import config_path

log = logging.getLogger(__name__)

STATE_NAME = "ui-state.json"
THEME_NAME_MAX = 64
"""A saved theme name longer than this is not one (the file was edited or damaged)."""


def state_path(environ: Mapping[str, str] | None = None) -> Path:
    return config_path(environ).with_name(STATE_NAME)


def saved_theme(environ: Mapping[str, str] | None = None) -> str | None:
    """The theme last picked, or None (no file, or one this does not understand)."""
    try:
        fd, notes = open_private(state_path(environ), os.O_RDONLY, "dashboard state file")
        with os.fdopen(fd, "rb") as handle:
            data = orjson.loads(handle.read())
    except (OSError, PrivateError, orjson.JSONDecodeError):
        return None
    for note in notes:
        log.warning("%s", note)
    theme = data.get("theme") if isinstance(data, dict) else None
    return theme if isinstance(theme, str) and 0 < len(theme) <= THEME_NAME_MAX else None


def save_theme(theme: str, environ: Mapping[str, str] | None = None) -> None:
    """Remember `theme` (a failure to write is not worth an error: it is a preference)."""
    path = state_path(environ)
    try:
        if not path.parent.is_dir():
            private_dir(path.parent, "config folder")
        replace_private(path, orjson.dumps({"theme": theme}))
    except (OSError, PrivateError):
        return
