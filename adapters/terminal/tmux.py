"""The tmux server gobtui runs under: jump to a session's pane, show a line in the status bar.

The server is the one named by $TMUX (`socket_path,server_pid,session_index`), always addressed
by its socket (`tmux -S`), so a nested or second server is never touched by mistake. A jump
finds the session's client process (`processes`), walks up its ancestors to a pane's process,
and selects that pane's window and pane and switches this client to its session. Nothing here
raises for a missing tmux, a hung one or a refusal: each comes back as a JumpFailure.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ...core.model import Provider
from .processes import ancestors, client_processes

TMUX_PROGRAM = "tmux"
TMUX_TIMEOUT_SECS = 3.0
"""One tmux command gets this long to answer (a hung server must not hang a worker)."""
TMUX_DETAIL_MAX_CHARS = 160
"""How much of tmux's complaint a failure keeps (its first line, cut to this)."""
PANE_FORMAT = "#{pane_pid} #{session_name} #{window_index} #{pane_index} #{pane_id}"


class JumpFailure(StrEnum):
    NOT_IN_TMUX = "not_in_tmux"
    NO_TMUX = "no_tmux"
    NO_PROCESS = "no_process"
    NOT_IN_A_PANE = "not_in_a_pane"
    TMUX_FAILED = "tmux_failed"

    @property
    def sentence(self) -> str:
        return _SENTENCES[self]


_SENTENCES = {
    JumpFailure.NOT_IN_TMUX: "gobtui is not running inside tmux",
    JumpFailure.NO_TMUX: "the tmux program is not installed",
    JumpFailure.NO_PROCESS: "no running claude or codex process has this session open",
    JumpFailure.NOT_IN_A_PANE: (
        "its process does not run in a pane of this tmux server (another server or terminal)"
    ),
    JumpFailure.TMUX_FAILED: "tmux refused",
}


class TmuxError(Exception):
    """A tmux command that could not run or was refused; `detail` is tmux's own first line."""

    def __init__(self, reason: JumpFailure, detail: str = "") -> None:
        super().__init__(f"{reason.sentence}: {detail}" if detail else reason.sentence)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Pane:
    """One tmux pane: its first process, where it sits, and its server-wide id (%N)."""

    pid: int
    session: str
    window: int
    index: int
    pane_id: str

    @property
    def label(self) -> str:
        """session:window.pane, as tmux writes a target."""
        return f"{self.session}:{self.window}.{self.index}"


@dataclass(frozen=True, slots=True)
class JumpResult:
    """The pane jumped to, or why there was none (with tmux's words for TMUX_FAILED)."""

    pane: Pane | None
    reason: JumpFailure | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.pane is not None and self.reason is None

    @property
    def sentence(self) -> str:
        """One line for a toast."""
        if self.reason is None:
            return f"jumped to pane {self.pane.label}" if self.pane else "no pane"
        if self.detail:
            return f"{self.reason.sentence}: {self.detail}"
        return self.reason.sentence


def tmux_socket(env: Mapping[str, str] | None = None) -> str | None:
    """The socket path in $TMUX (`socket_path,server_pid,session_index`); None outside tmux."""
    value = (os.environ if env is None else env).get("TMUX", "")
    parts = value.rsplit(",", 2)
    path = parts[0] if len(parts) == 3 else value
    return path or None


def tmux_literal(text: str) -> str:
    """`text` as a tmux format that shows itself: every `#` doubled."""
    return text.replace("#", "##")


def parse_panes(text: str) -> list[Pane]:
    """Panes from `list-panes -F PANE_FORMAT` output. The session name may hold spaces, so it
    is what lies between the pid and the last three fields; malformed lines are passed over."""
    panes = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 5:
            continue
        try:
            pid, window, index = int(fields[0]), int(fields[-3]), int(fields[-2])
        except ValueError:
            continue
        panes.append(Pane(pid, " ".join(fields[1:-3]), window, index, fields[-1]))
    return panes


def list_panes(socket: str, *, env: Mapping[str, str] | None = None) -> list[Pane]:
    """Every pane of the server at `socket`; TmuxError when tmux is missing, hung or refuses."""
    result = _tmux(socket, ["list-panes", "-a", "-F", PANE_FORMAT], env)
    _check(result)
    return parse_panes(result.stdout)


def pane_of(pid: int, panes: Sequence[Pane]) -> Pane | None:
    """The pane whose process is `pid` or one of its ancestors (nearest first)."""
    by_pid = {pane.pid: pane for pane in panes}
    for candidate in (pid, *ancestors(pid)):
        if candidate in by_pid:
            return by_pid[candidate]
    return None


def jump_to_session(
    transcript: Path,
    cwd: str | None,
    *,
    provider: Provider | None = None,
    env: Mapping[str, str] | None = None,
) -> JumpResult:
    """Bring the pane running the session's client to the front of this tmux client.

    `provider`, when given, keeps the command-line match to that provider's client. Never
    raises for tmux's sake: a missing program, a timeout or a refusal is the result's reason.
    """
    socket = tmux_socket(env)
    if socket is None:
        return JumpResult(None, JumpFailure.NOT_IN_TMUX)
    try:
        panes = list_panes(socket, env=env)
    except TmuxError as error:
        return JumpResult(None, error.reason, error.detail)
    candidates = client_processes(transcript, cwd, provider)
    if not candidates:
        return JumpResult(None, JumpFailure.NO_PROCESS)
    pane = next((found for pid in candidates if (found := pane_of(pid, panes)) is not None), None)
    if pane is None:
        return JumpResult(None, JumpFailure.NOT_IN_A_PANE)
    try:
        _check(_tmux(socket, ["select-window", "-t", pane.pane_id], env))
        _check(_tmux(socket, ["select-pane", "-t", pane.pane_id], env))
        # Refused when the caller is no tmux client (a script, a test): the selection stands.
        _tmux(socket, ["switch-client", "-t", pane.pane_id], env)
    except TmuxError as error:
        return JumpResult(pane, error.reason, error.detail)
    return JumpResult(pane)


def display_message(text: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Show `text` (literally, `#` and all) in the tmux status line; False when gobtui is not
    in tmux, tmux is missing or hung, or it refuses. Never raises."""
    socket = tmux_socket(env)
    if socket is None:
        return False
    try:
        result = _tmux(socket, ["display-message", "--", tmux_literal(text)], env)
    except TmuxError:
        return False
    return result.returncode == 0


def _tmux(
    socket: str, args: list[str], env: Mapping[str, str] | None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [TMUX_PROGRAM, "-S", socket, *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TMUX_TIMEOUT_SECS,
            env=_child_env(env),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise TmuxError(JumpFailure.NO_TMUX) from None
    except subprocess.TimeoutExpired:
        raise TmuxError(
            JumpFailure.TMUX_FAILED, f"no answer within {TMUX_TIMEOUT_SECS:g} s"
        ) from None
    except OSError as error:
        raise TmuxError(JumpFailure.TMUX_FAILED, error.strerror or type(error).__name__) from None


def _check(result: subprocess.CompletedProcess[str]) -> None:
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        detail = lines[0].strip() if lines else f"exit status {result.returncode}"
        raise TmuxError(JumpFailure.TMUX_FAILED, detail[:TMUX_DETAIL_MAX_CHARS])


def _child_env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """tmux's environment: ours, with `env` over it. A pane id it does not name is dropped, so
    a given server is never asked about the pane of another one."""
    if env is None:
        return None
    merged = {**os.environ, **env}
    if "TMUX_PANE" not in env:
        merged.pop("TMUX_PANE", None)
    return merged
