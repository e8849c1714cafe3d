"""The app's process as a terminal program: ended by its pane's hang-up, by SIGTERM, and
after a grace when a worker would keep a closed dashboard alive."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING

from textual.app import App

from gobtui.core.limits import SHUTDOWN_GRACE_SECS

if TYPE_CHECKING:
    from gobtui.app import GobtuiApp


def exit_on_signals(app: App[None]) -> None:
    """SIGHUP (its pane closed) and SIGTERM end the app as `q` does, so what runs after it
    (the demo's folder removed, the terminal restored) still runs."""
    loop = asyncio.get_running_loop()
    for name in ("SIGHUP", "SIGTERM"):
        number = getattr(signal, name, None)
        if number is not None:
            with suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, app.exit)


def end_when_stuck(app: GobtuiApp) -> None:
    """The thread workers run in asyncio's default pool, which the interpreter joins as it
    exits: a long read (a cold home's first scan) would keep a closed dashboard alive, orphaned
    once its pane is gone, until it finished. After the grace the process ends regardless."""

    def end() -> None:
        with suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        if app.config.demo_root is not None:  # (what the CLI would remove after the app)
            shutil.rmtree(app.config.demo_root, ignore_errors=True)
        os._exit(app.return_code or 0)

    timer = threading.Timer(SHUTDOWN_GRACE_SECS, end)
    timer.daemon = True  # an app that ends in time ends as usual
    timer.start()


def terminal_check() -> Callable[[], bool]:
    """Whether the terminal the app started on is still there: a hung-up terminal stops
    being a tty (os.isatty of its descriptor turns False)."""
    stdin = sys.__stdin__
    if stdin is None or not os.isatty(stdin.fileno()):
        return lambda: True  # no terminal to lose
    fd = stdin.fileno()
    return lambda: os.isatty(fd)
