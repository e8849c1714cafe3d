"""The Makefile's commands run when asked: `bench` and `screenshots` share their names with
folders of the tree, which make would otherwise take for targets already made."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("target", "command"),
    [("bench", "-m bench.run"), ("screenshots", "screenshots/render.py"), ("lint", "ruff check")],
)
def test_each_target_runs_its_command(target: str, command: str) -> None:
    done = subprocess.run(
        ["make", "-n", target], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert command in done.stdout, done.stdout
    assert "up to date" not in done.stdout + done.stderr
