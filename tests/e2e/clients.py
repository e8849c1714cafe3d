"""The real Claude Code and Codex CLIs, pinned, installed from npm into .e2e/ once.

The suite runs them as a user would, offline: each client points at the recording model
server on 127.0.0.1 and sees only a temporary home. A run is bounded by a timeout; on expiry
its whole process group is killed and the test fails with what the client printed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL_DIR = REPO / ".e2e" / "clients"
CLAUDE_PACKAGE = "@anthropic-ai/claude-code@2.1.328"
CODEX_PACKAGE = "@openai/codex@0.169.0"
CLAUDE_BIN = "node_modules/@anthropic-ai/claude-code-linux-x64/claude"
CODEX_BIN = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
INSTALL_TIMEOUT_SECS = 600
RUN_TIMEOUT_SECS = 120
PATH = "/usr/local/bin:/usr/bin:/bin"


class ClientUnavailable(Exception):
    """Why the real clients cannot run here (a skip reason, or a failure's message)."""


@dataclass(frozen=True)
class Clients:
    claude: Path
    codex: Path


def npm() -> str | None:
    return shutil.which("npm")


def ensure_clients() -> Clients:
    """The pinned clients, installed once (a lock serialises concurrent test workers)."""
    if npm() is None:
        raise ClientUnavailable("npm is not on PATH: the real-client suite needs it")
    INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    stamp = INSTALL_DIR / f".installed-{CLAUDE_PACKAGE}-{CODEX_PACKAGE}".replace("/", "_")
    with open(INSTALL_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            # --ignore-scripts: the platform packages hold the binaries; no postinstall needed
            done = subprocess.run(
                [npm() or "npm", "install", "--prefix", str(INSTALL_DIR), "--no-audit",
                 "--no-fund", "--ignore-scripts", "--loglevel=error", CLAUDE_PACKAGE,
                 CODEX_PACKAGE],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECS,
            )  # fmt: skip
            if done.returncode != 0:
                raise ClientUnavailable(
                    f"npm install failed ({done.returncode}): {done.stderr.strip()[-400:]}"
                )
            stamp.touch()
    clients = Clients(INSTALL_DIR / CLAUDE_BIN, INSTALL_DIR / CODEX_BIN)
    for binary in (clients.claude, clients.codex):
        if not os.access(binary, os.X_OK):
            raise ClientUnavailable(f"{binary} is missing after npm install")
    return clients


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str

    def first_error(self) -> str:
        for line in (self.stderr + "\n" + self.stdout).splitlines():
            if "error" in line.lower():
                return line.strip()[:300]
        return (self.stderr or self.stdout).strip()[-300:]


def run_bounded(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = RUN_TIMEOUT_SECS
) -> Finished:
    """Run a client in its own process group; on timeout the whole group is killed."""
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        raise AssertionError(
            f"{Path(argv[0]).name} hung for {timeout:.0f} s and was killed: "
            f"{err.decode(errors='replace')[-400:]}"
        ) from None
    return Finished(process.returncode, out.decode(errors="replace"), err.decode(errors="replace"))
