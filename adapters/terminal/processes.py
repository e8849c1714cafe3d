"""The client process behind a session, found by reading /proc (Linux).

A session's transcript is written by one Claude Code or Codex process. Codex keeps its rollout
file open, so that process is found by its open files; Claude Code opens and closes its file on
each write, so it is found by its command line (the program `claude`, or node running
claude-code) and its working directory (the session's cwd). Processes that end or deny access
while being read are passed over quietly: /proc changes under the reader all the time.

The /proc root is a parameter so tests can point at the real one (or a copy of its shape).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path

from ...core.model import Provider

PROC = Path("/proc")
ANCESTORS_MAX = 128
"""An ancestor walk stops after this many steps (a pid loop in a damaged /proc copy)."""
CLIENT_PROGRAMS: dict[Provider, frozenset[str]] = {
    Provider.CLAUDE: frozenset({"claude"}),
    Provider.CODEX: frozenset({"codex"}),
}
"""Program basenames (argv[0], or a runtime's script) of each provider's client."""
CLIENT_PACKAGES: dict[Provider, tuple[str, ...]] = {
    Provider.CLAUDE: ("claude-code",),
    Provider.CODEX: ("@openai/codex",),
}
"""Path fragments of each client's npm package, as a JavaScript runtime is given them."""
SCRIPT_RUNTIMES = frozenset({"node", "nodejs", "bun"})
_DELETED = " (deleted)"


def process_ids(proc: Path = PROC) -> list[int]:
    """The pids under the /proc root, ascending (empty when it cannot be listed)."""
    try:
        names = os.listdir(proc)
    except OSError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


def read_argv(pid: int, proc: Path = PROC) -> list[str] | None:
    """The process's argv, or None when it has gone, hides it, or is a kernel thread."""
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    if not raw:
        return None
    return [arg.decode("utf-8", "surrogateescape") for arg in raw.rstrip(b"\0").split(b"\0")]


def read_cwd(pid: int, proc: Path = PROC) -> str | None:
    """The process's working directory, or None when it has gone or denies access."""
    try:
        return _live_path(os.readlink(proc / str(pid) / "cwd"))
    except OSError:
        return None


def open_paths(pid: int, proc: Path = PROC) -> Iterator[str]:
    """The paths the process holds open (its fd links); nothing when it denies access."""
    fd_dir = proc / str(pid) / "fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return
    for fd in fds:
        try:
            yield os.readlink(fd_dir / fd)
        except OSError:  # closed in the meantime
            continue


def holds_open(pid: int, target: str, proc: Path = PROC) -> bool:
    """Whether the process has `target` (a resolved path) open."""
    return any(path == target for path in open_paths(pid, proc))


def client_of(argv: list[str]) -> Provider | None:
    """Which provider's client the command line runs: `claude` / `codex` by basename, or a
    JavaScript runtime running its script or package; None for anything else."""
    if not argv:
        return None
    program = os.path.basename(argv[0])
    for provider, names in CLIENT_PROGRAMS.items():
        if program in names:
            return provider
    if program not in SCRIPT_RUNTIMES:
        return None
    script = next((arg for arg in argv[1:] if not arg.startswith("-")), "")
    for provider, names in CLIENT_PROGRAMS.items():
        if os.path.basename(script) in names:
            return provider
        if any(package in arg for arg in argv[1:] for package in CLIENT_PACKAGES[provider]):
            return provider
    return None


def stat_parent(stat: str) -> int | None:
    """The parent pid in a /proc/PID/stat line. The command name (field 2, in parentheses) may
    hold spaces and parentheses itself, so the fields are read after its last ')'."""
    _, closing, rest = stat.rpartition(")")
    fields = rest.split()
    if not closing or len(fields) < 2:
        return None
    try:
        parent = int(fields[1])  # fields[0] is the state letter
    except ValueError:
        return None
    return parent if parent > 0 else None


def parent_pid(pid: int, proc: Path = PROC) -> int | None:
    """The parent's pid; None for pid 1, a kernel root, or a process that has gone."""
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return stat_parent(stat)


def ancestors(pid: int, proc: Path = PROC) -> list[int]:
    """The process's parent, its parent's parent, ... up to pid 1 (the process itself not
    included); shorter when one of them has gone."""
    found: list[int] = []
    current = pid
    while len(found) < ANCESTORS_MAX and current != 1:
        parent = parent_pid(current, proc)
        if parent is None or parent == pid or parent in found:
            break
        found.append(parent)
        current = parent
    return found


def client_processes(
    transcript: Path,
    cwd: str | None,
    provider: Provider | None = None,
    *,
    proc: Path = PROC,
    exclude: Collection[int] | None = None,
) -> list[int]:
    """The processes that may be the session's client, the likeliest group only, best first.

    1. Clients holding the transcript open (Codex).
    2. Clients (of `provider`, when given) working in `cwd` (Claude Code), those naming the
       transcript's session id on their command line (`--resume ID`) first.
    3. Any other process holding the transcript open.

    `exclude` defaults to this process (gobtui itself may be reading the file)."""
    skip = {os.getpid()} if exclude is None else set(exclude)
    target = str(transcript.resolve())
    want_cwd = os.path.realpath(cwd) if cwd else None
    stem = transcript.stem
    holding_clients: list[int] = []
    in_cwd: list[tuple[bool, int]] = []
    holding_others: list[int] = []
    for pid in process_ids(proc):
        if pid in skip:
            continue
        argv = read_argv(pid, proc)
        client = client_of(argv) if argv else None
        if provider is not None and client is not provider:
            client = None
        if holds_open(pid, target, proc):
            (holding_clients if client else holding_others).append(pid)
        elif client and want_cwd is not None and read_cwd(pid, proc) == want_cwd:
            named = bool(stem) and any(stem in arg for arg in argv or [])
            in_cwd.append((not named, pid))
    if holding_clients:
        return holding_clients
    if in_cwd:
        return [pid for _, pid in sorted(in_cwd)]
    return holding_others


def _live_path(link: str) -> str:
    return link.removesuffix(_DELETED)
