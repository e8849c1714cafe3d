"""The real dashboard on hostile transcripts, in a real tmux server started by the test: the
board, the detail pane, the command palette, a toast and the help show the sessions, and
nothing they hold acts on the terminal: the pane keeps its title, no clipboard buffer is
written, the payload shows as visible symbols (␛), and the app quits cleanly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders.hostile import claude_hostile, codex_hostile

GOBTUI = Path(sys.executable).with_name("gobtui")
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=20
        )
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "gobtui")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never showed:\n{self.screen()}")


def escape(tmux: Tmux) -> None:
    tmux("send-keys", "-t", "gobtui", "Escape")
    time.sleep(1.0)


def test_hostile_sessions_do_not_reach_the_terminal(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    codex = tmp_path / "codex"
    for path in (claude_hostile(claude / "projects"), codex_hostile(codex / "sessions")):
        os.utime(path, (time.time() - 3600,) * 2)
    env = " ".join(
        f"{key}={value}"
        for key, value in {
            "HOME": tmp_path, "GOBTUI_DATA_DIR": tmp_path / "data",
            "GOBTUI_CACHE_DIR": tmp_path / "cache", "GOBTUI_CONFIG": tmp_path / "none.toml",
            "TERM": "xterm-256color",
        }.items()
    )  # fmt: skip
    command = f"env {env} {GOBTUI} --claude-home {claude} --codex-home {codex} --all"
    tmux = Tmux(tmp_path / "tmux.sock")
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "gobtui", "-x", "120", "-y", "36", command)
    try:
        tmux("set-option", "-g", "set-clipboard", "on")
        tmux("set-option", "-g", "allow-rename", "on")
        title = tmux("display-message", "-p", "-t", "gobtui", "#{pane_title}").strip()
        board = tmux.wait_for("Deploy")  # the hostile Claude title, on the board
        assert "␛" in board  # its escapes, shown as symbols
        tmux("send-keys", "-t", "gobtui", "Down")
        tmux("send-keys", "-t", "gobtui", "C-p")
        tmux.wait_for("Search")
        tmux("send-keys", "-t", "gobtui", "-l", "look")  # the palette lists both sessions
        listed = tmux.wait_for("Deploy look")
        assert "Fix look" in listed and "␛" in listed  # both, their escapes shown as symbols
        escape(tmux)  # (an escape followed at once by a key would read as alt+key)
        tmux("send-keys", "-t", "gobtui", "c")  # copies the resume command: a toast
        tmux.wait_for("Copied")
        tmux("send-keys", "-t", "gobtui", "?")
        tmux.wait_for("Keys")
        escape(tmux)
        shown = tmux.screen()
        assert "PWNED" not in tmux("display-message", "-p", "-t", "gobtui", "#{pane_title}")
        assert tmux("display-message", "-p", "-t", "gobtui", "#{pane_title}").strip() == title
        buffers = tmux("list-buffers")
        assert "PWNED" not in buffers  # what OSC 52 in a title would have written
        assert "\u202e" not in shown and "\x9b" not in shown
        tmux("send-keys", "-t", "gobtui", "q")
        deadline = time.monotonic() + 15
        while tmux("list-sessions") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not tmux("list-sessions"), "the app did not quit"
    finally:
        tmux("kill-server")
