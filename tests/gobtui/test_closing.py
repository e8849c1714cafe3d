"""The dashboard ends when it is closed, whatever a worker is doing: its pane closed (SIGHUP),
SIGTERM, or q, while the first read of the homes is still running. The real app runs on a
pseudo-terminal; its scan is held busy (a cold home of thousands of sessions, reduced to a
scan that never finishes) so that the close always lands mid-load."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BUSY_APP = """
import threading
from gobtui.adapters.sessions.store import SessionStore
from gobtui.cli.dispatch import main

def busy_scan(self, now):
    threading.Event().wait()  # a read that outlives the app

SessionStore.scan = busy_scan
raise SystemExit(main(["--no-watch", "--no-cache"]))
"""
GONE_WITHIN_SECS = 30
"""A bounded wait: the app ends in a few seconds; only a process left alive reaches it."""


def start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    (tmp_path / "claude").mkdir()
    (tmp_path / "codex").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CLAUDE_"))}
    env.update(
        HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
        CODEX_HOME=str(tmp_path / "codex"), GOBTUI_DATA_DIR=str(tmp_path / "data"),
        GOBTUI_CACHE_DIR=str(tmp_path / "cache"), GOBTUI_CONFIG=str(tmp_path / "config.toml"),
        TERM="xterm-256color", COLUMNS="80", LINES="24",
    )  # fmt: skip
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", BUSY_APP],
        stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    return process, master


def painted(master: int, process: subprocess.Popen[bytes]) -> bytes:
    """What the app drew, once it has drawn its board (its header names the app)."""
    seen = b""
    deadline = time.monotonic() + 60
    while b"gobtui" not in seen and time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    assert b"gobtui" in seen, seen[-500:]
    return seen


def drain_until_gone(master: int, process: subprocess.Popen[bytes]) -> int | None:
    """Keep reading the terminal (a full one would block the app) until the process ends."""
    deadline = time.monotonic() + GONE_WITHIN_SECS
    while process.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                os.read(master, 65536)
            except OSError:
                time.sleep(0.2)  # (the terminal is gone; the process may still run)
    return process.poll()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["SIGHUP", "SIGTERM", "q"])
def test_the_dashboard_ends_when_closed_mid_load(tmp_path: Path, how: str) -> None:
    process, master = start(tmp_path)
    try:
        painted(master, process)
        if how == "q":
            os.write(master, b"q")
        else:
            process.send_signal(getattr(signal, how))
            if how == "SIGHUP":
                os.close(master)  # the pane is gone with its terminal
                master = -1
        if master >= 0:
            code = drain_until_gone(master, process)
        else:
            try:
                code = process.wait(timeout=GONE_WITHIN_SECS)
            except subprocess.TimeoutExpired:
                code = None
        assert code is not None, f"still running {GONE_WITHIN_SECS} s after {how}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if master >= 0:
            os.close(master)
