"""What the dashboard remembers between runs that is not configuration: the theme last picked
in the palette. Kept beside config.toml (ui-state.json), never in it: that file is the user's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import orjson

from adapters.atomic import private_dir, replace_private
from adapters.paths import config_path

STATE_NAME = "ui-state.json"
THEME_NAME_MAX = 64
"""A saved theme name longer than this is not one (the file was edited or damaged)."""


def state_path(environ: Mapping[str, str] | None = None) -> Path:
    return config_path(environ).with_name(STATE_NAME)


def saved_theme(environ: Mapping[str, str] | None = None) -> str | None:
    """The theme last picked, or None (no file, or one this does not understand)."""
    try:
        data = orjson.loads(state_path(environ).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    theme = data.get("theme") if isinstance(data, dict) else None
    return theme if isinstance(theme, str) and 0 < len(theme) <= THEME_NAME_MAX else None


def save_theme(theme: str, environ: Mapping[str, str] | None = None) -> None:
    """Remember `theme` (a failure to write is not worth an error: it is a preference)."""
    path = state_path(environ)
    try:
        private_dir(path.parent)
        replace_private(path, orjson.dumps({"theme": theme}))
    except OSError:
        return
