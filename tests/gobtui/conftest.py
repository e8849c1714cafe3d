"""App fixtures: the demo home, frozen in time, in a temporary HOME."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gobtui.app import GobtuiApp, make_app
from gobtui.services.run_settings import AppConfig

FROZEN_NOW = 1_795_000_000.0  # 2026-11-18T06:13:20Z: every age and ETA is computed from this


@pytest.fixture
def frozen_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME, so displayed paths read ~/demo/... whatever tmp_path is."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def demo_app_factory(frozen_home: Path) -> Callable[..., GobtuiApp]:
    def build(**overrides: object) -> GobtuiApp:
        settings: dict[str, object] = {
            "demo": True,
            "demo_root": frozen_home / "demo",
            "clock": lambda: FROZEN_NOW,
            "watch": False,
            "demo_ticks": False,
            "use_cache": False,
            "max_age_secs": None,
        }
        settings.update(overrides)
        return make_app(AppConfig(**settings))  # type: ignore[arg-type]

    return build
