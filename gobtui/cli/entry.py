"""The console script's entry point: ctrl+c at any moment is exit 130 and one line.

pip's wrapper imports this module before anything else of gobtui's, so it imports only what
start-up has loaded already (os, sys, contextlib), atexit, signal and gobtui.cli.interrupted:
main()'s handler is in place before the heavy part (dispatch, its parser, the command
modules) can be interrupted. Once the command is done and its output flushed, ctrl+c is a
hard exit (atexit callbacks, thread joins), since a KeyboardInterrupt there prints a
traceback as "ignored"; in the teardown after the last atexit callback it is ignored.
What comes before this module runs (the interpreter's own start-up, `site`) is not ours.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from contextlib import suppress

from gobtui.cli.interrupted import INTERRUPTED, LINE, said, say_interrupted

TYPE_CHECKING = False  # (typing itself is not loaded yet; mypy reads the name as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable

ARM_TRIES = 8
"""A ctrl+c pending while the exit handler is set is taken as one more; this many at most."""


def _exit_now(_signum: int, _frame: object) -> None:
    """ctrl+c once the command is done: nothing is left to clean up."""
    if not said():
        with suppress(OSError):
            os.write(2, LINE)
    os._exit(INTERRUPTED)


def _arm_exit() -> None:
    """From here to the interpreter's teardown ctrl+c is _exit_now (unless the parent had
    it ignored, as a shell does for a background job). signal.signal() first runs the
    handler of a ctrl+c already pending, which raises: that one is the caller's."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_now)


def _quiet_teardown() -> None:
    """The last atexit callback: what is left (collecting, freeing modules) ends by itself
    in a moment and holds nothing to interrupt. The interpreter puts SIGINT back to the
    default (a silent kill) for it unless it is ignored, so it is ignored: the process
    ends with the command's own code."""
    if signal.getsignal(signal.SIGINT) is _exit_now:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _import_run() -> Callable[[], int]:
    """dispatch's main, imported with SIGINT held back: an extension module interrupted in
    its init can crash the interpreter (orjson's does), so a ctrl+c during the imports is
    taken at their end, as a KeyboardInterrupt."""
    mask = getattr(signal, "pthread_sigmask", None)  # (not on Windows)
    held = mask(signal.SIG_BLOCK, {signal.SIGINT}) if mask is not None else None
    try:
        from gobtui.cli.dispatch import main as run
    finally:
        if mask is not None and held is not None:
            mask(signal.SIG_SETMASK, held)  # a ctrl+c held is raised here
    return run


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # closed or broken (a reader that left)
            stream.flush()


def _interrupted() -> int:
    for _ in range(ARM_TRIES):
        try:
            _arm_exit()
            break
        except KeyboardInterrupt:  # another ctrl+c, pending: the same interrupt
            continue
    return say_interrupted()


def main() -> int:
    atexit.register(_quiet_teardown)  # registered first: run last
    try:
        run = _import_run()  # the heavy part of start-up
        code = run()  # (a ctrl+c it catches, it reports with say_interrupted)
        _flush()
        _arm_exit()
    except KeyboardInterrupt:
        code = _interrupted()
        _flush()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
