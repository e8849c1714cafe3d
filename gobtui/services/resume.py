"""Resuming a session in its own client from the dashboard: the command, the directory it
runs in, and what the client said when it failed.

The client runs in the session's working directory (Claude Code keys projects by it; both
clients find a session from anywhere, but tools then run where the agent worked). Its
standard error is passed through to the terminal and kept, so a client that exits non-zero
is reported by its own first error line rather than a bare exit code.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gobtui.core.model import SessionSummary, resume_line

STDERR_KEEP_BYTES = 16 * 1024
"""Of a client's standard error, this much of the start is kept for its error line."""
ERROR_LINE_MAX_CHARS = 200


@dataclass(frozen=True, slots=True)
class Resume:
    argv: list[str]
    cwd: str | None
    """The session's working directory, when it still exists."""
    gone: str | None
    """The session's working directory, when it no longer exists."""

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    def copy_text(self) -> str:
        """What `c` copies: the command, from the session's directory when it is known
        (core.model.resume_line)."""
        return resume_line(self.command, self.cwd or self.gone)


def resume_of(summary: SessionSummary) -> Resume:
    argv = summary.resume_command().split()
    cwd = summary.cwd or None
    if cwd is not None and not Path(cwd).is_dir():
        return Resume(argv, None, cwd)
    return Resume(argv, cwd, None)


@dataclass(frozen=True, slots=True)
class Ran:
    code: int
    error: str | None = None
    """The client's first error line (or its last line of standard error)."""


ClientRunner = Callable[[list[str], str | None], Ran]


def run_client(argv: list[str], cwd: str | None) -> Ran:
    """Run a client on this terminal; its standard error is shown as it comes and kept."""
    kept = bytearray()
    process = subprocess.Popen(argv, cwd=cwd, stderr=subprocess.PIPE)
    assert process.stderr is not None

    def tee() -> None:
        assert process.stderr is not None
        fd = process.stderr.fileno()
        for chunk in iter(lambda: os.read(fd, 4096), b""):
            os.write(2, chunk)
            if len(kept) < STDERR_KEEP_BYTES:
                kept.extend(chunk[: STDERR_KEEP_BYTES - len(kept)])

    reader = threading.Thread(target=tee, daemon=True)
    reader.start()
    code = process.wait()
    reader.join(timeout=2)
    return Ran(code, error_line(kept.decode("utf-8", "replace")) if code else None)


def error_line(stderr: str) -> str | None:
    """The line of a client's standard error that says what went wrong."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return None
    chosen = next((line for line in lines if "error" in line.lower()), lines[-1])
    return chosen[:ERROR_LINE_MAX_CHARS]
