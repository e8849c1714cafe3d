"""cursors.json is read, changed and written back whole; deltas that run at once (each for
its own session) must each keep their cursor. Real processes on a real data folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

GOBTUI = Path(sys.executable).with_name("gobtui")
WAIT_SECS = 120
"""Far past what these take; only a hang (a lock never released) reaches it."""


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CLAUDE_"))}
    env.update(
        GOBTUI_DATA_DIR=str(root / "data"),
        GOBTUI_CACHE_DIR=str(root / "cache"),
        GOBTUI_CONFIG=str(root / "config.toml"),
        CLAUDE_CONFIG_DIR=str(root / "claude"),
        CODEX_HOME=str(root / "codex"),
    )
    return env


def _kept(root: Path) -> set[str]:
    rows = orjson.loads((root / "data" / "cursors.json").read_bytes())["cursors"]
    return {row["session_id"] for row in rows}


def test_five_deltas_at_once_keep_all_five_cursors(tmp_path: Path) -> None:
    env = _env(tmp_path)
    wanted: set[str] = set()
    for round_ in range(3):
        names = [f"agent-{round_}-{n}" for n in range(5)]
        wanted |= set(names)
        runs = [
            subprocess.Popen(
                [str(GOBTUI), "delta", "--session-id", name, "--budget-tokens", "500"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for name in names
        ]
        for run in runs:
            _, err = run.communicate(timeout=WAIT_SECS)
            assert run.returncode == 0, err
    assert _kept(tmp_path) == wanted


STORE_MANY = """
import sys, time
from pathlib import Path
from gobtui.adapters.recall.cursors import store_cursor
from gobtui.core.recall.model import Cursor
root, who = Path(sys.argv[1]), sys.argv[2]
for n in range(40):
    now = time.time()
    store_cursor(Cursor(caller="local", session_id=f"{who}-{n}", ts=0.0, key="", touched=now), now, root)
"""


def test_writers_in_a_tight_loop_lose_no_cursor(tmp_path: Path) -> None:
    """The same race, made dense: four processes each storing forty cursors."""
    root = tmp_path / "data"
    root.mkdir(mode=0o700)
    runs = [
        subprocess.Popen([sys.executable, "-c", STORE_MANY, str(root), f"w{n}"]) for n in range(4)
    ]
    for run in runs:
        assert run.wait(timeout=WAIT_SECS) == 0
    rows = orjson.loads((root / "cursors.json").read_bytes())["cursors"]
    assert len(rows) == 160
