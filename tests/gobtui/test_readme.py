"""The README's configuration example is a working config file."""

from __future__ import annotations

import re
from pathlib import Path

from gobtui.adapters.config.config_file import load_config
from gobtui.core.model import Provider

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_config_example_loads(tmp_path: Path) -> None:
    match = re.search(r"```toml\n(.*?)```", README.read_text(), re.S)
    assert match is not None
    path = tmp_path / "config.toml"
    path.write_text(match.group(1))
    config = load_config(path)
    assert config.resolve(Provider.CODEX, None, None, None).policy.trigger_tokens == 200_000
    pinned = config.resolve(Provider.CLAUDE, "4d5611e5-241a-462a-8d15-5122611a9569", None, None)
    assert (pinned.strategy, pinned.policy.trigger_tokens) == ("elide", 150_000)
    assert config.ui_theme == "ansi-dark" and config.ui_keymap == {"sessions.plan": "P"}


def test_the_readme_status_legend_is_the_boards() -> None:
    """The README's marks table says what `?` and the table say, word for word."""
    from gobtui.view_models.status_legend import status_legend

    text = README.read_text(encoding="utf-8")
    for mark, meaning in status_legend():
        assert f"| `{mark}` | {meaning} |" in text
