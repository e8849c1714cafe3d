"""Which channels tell the user that a session needs them: a closed vocabulary of events
and channels, and the defaults a config's `[ui.alerts]` table overrides per event."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class AlertEvent(StrEnum):
    WAITING = "waiting"
    """A session started waiting for its user (or maybe for an approval)."""
    TRIGGER = "trigger"
    """A session's context crossed its trigger."""


class AlertChannel(StrEnum):
    TOAST = "toast"
    """A notification inside the dashboard."""
    BELL = "bell"
    """The terminal bell (tmux marks the window; a terminal may flash or beep)."""
    TMUX = "tmux"
    """A tmux display-message on the client's status line, seen from any window."""


DEFAULT_ALERTS: Mapping[AlertEvent, frozenset[AlertChannel]] = {
    AlertEvent.WAITING: frozenset({AlertChannel.TOAST}),
    AlertEvent.TRIGGER: frozenset({AlertChannel.TOAST, AlertChannel.BELL}),
}


@dataclass(frozen=True, slots=True)
class AlertSettings:
    """Per event, the channels that carry it; an event the config leaves out keeps its
    default, and an empty list turns it off."""

    overrides: Mapping[AlertEvent, frozenset[AlertChannel]] = field(default_factory=dict)

    def channels(self, event: AlertEvent) -> frozenset[AlertChannel]:
        return self.overrides.get(event, DEFAULT_ALERTS[event])

    def with_channels(self, event: AlertEvent, channels: Iterable[AlertChannel]) -> AlertSettings:
        return AlertSettings({**self.overrides, event: frozenset(channels)})
