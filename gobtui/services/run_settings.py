"""What one run of the app needs to know: homes, demo, clock, policy. Shared by CLI and tests."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gobtui.core.alerts import AlertSettings
from gobtui.core.board import BoardPolicy
from gobtui.core.limits import DEFAULT_MAX_AGE_SECS


@dataclass
class AppConfig:
    claude_home: str | None = None
    codex_home: str | None = None
    demo: bool = False
    """Build the demo home (in demo_root or a fresh temporary folder) and show it."""
    demo_root: Path | None = None
    demo_seed: int = 7
    demo_ticks: bool = True
    """In demo mode, append to two sessions every second so the board moves."""
    max_age_secs: float | None = DEFAULT_MAX_AGE_SECS
    watch: bool = True
    use_cache: bool = True
    clock: Callable[[], float] = time.time
    theme: str | None = None
    remember_theme: bool = False
    """Save a theme picked in the app (the palette) for the next run (the CLI's dashboard)."""
    policy: BoardPolicy = field(default_factory=BoardPolicy)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys, to remap the dashboard's keys."""
    alerts: AlertSettings = field(default_factory=AlertSettings)
    """Which channels (toast, bell, tmux) tell of a session waiting or over its trigger."""
    config_file: Path | None = None
    """The config.toml the policy, keymap, alerts and theme were read from: watched while
    the app runs, a change is used at once (gobtui.services.config_reload)."""
