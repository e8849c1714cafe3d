"""Wide characters in the board's cells: a title holding emoji sequences or CJK is fitted to
its column in terminal cells, and the real tmux draws it as wide as Rich counts it (so the
columns after it stay where the header says)."""

from __future__ import annotations

import shlex
import shutil
import time

import pytest
from rich.cells import cell_len

from gobtui.view_models import format as fmt
from tests.tmux_server import Server, tmux_server  # noqa: F401 (a fixture)

TITLES = [
    "fix the 👨‍👩‍👧 family emoji in titles",  # a ZWJ sequence: one glyph
    "⚠️ the deploy is red ⚠️",  # VS16 after a narrow base: tmux draws it narrow
    "👍🏽 looks good, merge it",  # a skin-tone modifier: tmux draws two glyphs
    "🇫🇷🇩🇪 translate the flags",
    "1️⃣ first, 2️⃣ second",
    "日本語のタイトルをもっと長くする",
    "plain ascii title that is long",
]


@pytest.mark.parametrize("width", [1, 5, 12, 19])
def test_a_title_fits_its_column_in_cells_and_no_sequence_is_cut(width: int) -> None:
    for title in TITLES:
        shown = fmt.ellipsize(title, width)
        assert cell_len(shown) <= width, (title, shown)
        assert "\ufe0f" not in shown and "\U0001f3fd" not in shown
        if cell_len(fmt.cell_stable(title)) > width:
            assert shown.endswith("…")
        # a ZWJ sequence is whole or gone, never a dangling joiner
        assert not shown.rstrip("…").endswith("\u200d")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tmux_draws_each_fitted_title_as_wide_as_rich_counts_it(server: Server) -> None:
    server.tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "5", "sleep", "60")
    for title in TITLES:
        shown = fmt.ellipsize(title, 19)
        server.tmux(
            "respawn-pane", "-k", "-t", "t:0", f"printf '%s' {shlex.quote(shown)}; sleep 60"
        )
        deadline = time.monotonic() + 5
        while True:  # the cursor stands after what tmux drew
            x = int(server.tmux("display-message", "-p", "-t", "t:0", "#{cursor_x}"))
            if x == cell_len(shown) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert x == cell_len(shown), (title, shown)


def test_next_age_change_is_when_the_age_reads_otherwise() -> None:
    from gobtui.widgets.cells import next_age_change

    mtime = 1_795_000_000.25
    for age in (0, 1.5, 59.9, 60, 61, 3599, 3600, 86_399, 86_400, 900_000):
        now = mtime + age
        when = next_age_change(mtime, now)
        assert when > now
        assert fmt.duration(when - mtime) != fmt.duration(now - mtime)
        assert fmt.duration((when - 0.01) - mtime) == fmt.duration(now - mtime)
