"""A private tmux server for tests: its own socket in a short temporary folder, no config,
killed afterwards; real processes run in its panes."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

READY_SECS = 5.0
HOLDER = """\
import sys, time
transcript = open(sys.argv[1])
open(sys.argv[2], "w").close()
time.sleep(60)
"""
"""Holds the transcript open, says so with a ready file, and waits."""


def clean_env() -> dict[str, str]:
    """Our environment without the tmux we may be running in."""
    return {k: v for k, v in os.environ.items() if k not in {"TMUX", "TMUX_PANE"}}


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + READY_SECS
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {READY_SECS} s")
        time.sleep(0.02)


@dataclass
class Server:
    socket: str
    folder: Path

    @property
    def env(self) -> dict[str, str]:
        """The $TMUX gobtui would see inside this server."""
        return {"TMUX": f"{self.socket},0,0"}

    def tmux(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-S", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
            env=clean_env(),
            check=False,
        )
        assert result.returncode == 0, f"tmux {shlex.join(args)}: {result.stderr.strip()}"
        return result.stdout.strip()

    def active(self, session: str = "t") -> str:
        """The session's current window index and that window's active pane id. (A bare "t"
        would also be a prefix of a window's name, such as "tmux" while a pane starts.)"""
        return self.tmux("display-message", "-p", "-t", f"{session}:", "#{window_index} #{pane_id}")

    def holder(self, transcript: Path) -> tuple[list[str], Path]:
        """A shell running the holder as its child (not exec'd: the jump walks up to the
        pane's process), and the file that appears once the transcript is open."""
        script = self.folder / "holder.py"
        script.write_text(HOLDER)
        ready = self.folder / f"ready-{transcript.name}"
        line = shlex.join([sys.executable, str(script), str(transcript), str(ready)])
        return ["sh", "-c", f"{line}; exit 0"], ready


@pytest.fixture(name="server")
def tmux_server() -> Iterator[Server]:
    """A private server, started by the test's first `server.tmux("new-session", ...)`."""
    # A pytest tmp_path can be longer than a unix socket path may be (108 bytes).
    folder = Path(tempfile.mkdtemp(prefix="gobtui-tmux-"))
    made = Server(str(folder / "sock"), folder)
    try:
        yield made
    finally:
        subprocess.run(
            ["tmux", "-S", made.socket, "kill-server"],
            capture_output=True,
            timeout=10,
            env=clean_env(),
            check=False,
        )
        shutil.rmtree(folder, ignore_errors=True)
