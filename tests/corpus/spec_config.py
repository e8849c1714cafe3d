"""The spec's sample config.toml (spec_config.toml beside this file), byte for byte as the
spec prints it; the reference reads it from its own path, gobtui from $GOBTUI_CONFIG or
~/.config/gobtui/config.toml."""

from __future__ import annotations

from pathlib import Path

SPEC_CONFIG = Path(__file__).with_name("spec_config.toml")
