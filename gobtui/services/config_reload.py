"""config.toml edited while the board runs: what the app takes from it again.

The plan preview, apply and auto-prepare ask gobtui.services.policies on every use, so they follow the
file already; the board's trigger marks, the keymap, the alerts and the theme were read once
at start. Each second the app compares the file's stamp (the one gobtui.services.policies keys on); on
a change it loads the file again and hands back the settings to use, or the one-line reason it
cannot (the board keeps what it had, and says so).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from gobtui.adapters.config.stamp import file_stamp
from gobtui.core.alerts import AlertSettings
from gobtui.core.board import BoardPolicy


@dataclass(frozen=True)
class Reloaded:
    policy: BoardPolicy
    keymap: dict[str, str]
    alerts: AlertSettings
    theme: str | None


class ConfigWatch:
    """Tells when config.toml changed since it was read, and reads it again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stamp = file_stamp(path)

    def changed(self) -> bool:
        stamp = file_stamp(self.path)
        if stamp == self.stamp:
            return False
        self.stamp = stamp
        return True

    def reload(self, policy: BoardPolicy) -> Reloaded | str:
        """The settings of the file as it is now, or why it cannot be used."""
        # The config machinery loads when the file first changes: a board started without
        # one (or with one read by the CLI already) does not import it for the watch.
        from gobtui.adapters.config.config_file import ConfigError
        from gobtui.services import policies

        try:
            current = policies.current()
        except ConfigError as error:
            return str(error)
        config = current.config
        return Reloaded(
            policy=replace(policy, session_trigger=current.trigger),
            keymap=config.ui_keymap,
            alerts=config.ui_alerts,
            theme=config.ui_theme,
        )
