"""The client process behind a session, found through psutil (Linux, macOS, the BSDs).

A session's transcript is written by one Claude Code or Codex process. Codex keeps its rollout
file open, so that process is found by its open files; Claude Code opens and closes its file on
each write, so it is found by its command line (the program `claude`, or node running
claude-code) and its working directory (the session's cwd). Processes that end or deny access
while being looked at are passed over quietly: the process table changes all the time.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

import psutil

from ...core.model import Provider
from ..providers.registry import providers

ANCESTORS_MAX = 128
"""An ancestor walk stops after this many steps (a pid loop in a damaged /proc copy)."""
SCRIPT_RUNTIMES = frozenset({"node", "nodejs", "bun"})


def parent_pid(pid: int) -> int | None:
    """The parent's pid; None for pid 1, a process without one, or one that has gone."""
    try:
        parent = psutil.Process(pid).ppid()
    except (psutil.Error, OSError):
        return None
    return parent if parent > 0 else None


def ancestors(pid: int) -> list[int]:
    """The process's parent, its parent's parent, ... up to pid 1 (the process itself not
    included); shorter when one of them has gone."""
    found: list[int] = []
    current = pid
    while len(found) < ANCESTORS_MAX and current != 1:
        parent = parent_pid(current)
        if parent is None or parent == pid or parent in found:
            break
        found.append(parent)
        current = parent
    return found


def client_of(argv: list[str]) -> Provider | None:
    """Which provider's client the command line runs: `claude` / `codex` by basename, or a
    JavaScript runtime running its script or package; None for anything else."""
    if not argv:
        return None
    program = os.path.basename(argv[0])
    for provider in providers():
        if program in provider.traits.programs:
            return provider
    if program not in SCRIPT_RUNTIMES:
        return None
    script = next((arg for arg in argv[1:] if not arg.startswith("-")), "")
    for provider in providers():
        traits = provider.traits
        if os.path.basename(script) in traits.programs:
            return provider
        if any(package in arg for arg in argv[1:] for package in traits.packages):
            return provider
    return None


def _holds_open(process: psutil.Process, target: str) -> bool:
    try:
        return any(f.path == target for f in process.open_files())
    except (psutil.Error, OSError):
        return False


def client_processes(
    transcript: Path,
    cwd: str | None,
    provider: Provider | None = None,
    *,
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
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        info = process.info
        pid = info["pid"]
        if pid in skip:
            continue
        argv = info.get("cmdline") or []  # None when it denies access or has gone
        client = client_of(argv) if argv else None
        if provider is not None and client is not provider:
            client = None
        if _holds_open(process, target):
            (holding_clients if client else holding_others).append(pid)
        elif client and want_cwd is not None and info.get("cwd") == want_cwd:
            named = bool(stem) and any(stem in arg for arg in argv)
            in_cwd.append((not named, pid))
    if holding_clients:
        return holding_clients
    if in_cwd:
        return [pid for _, pid in sorted(in_cwd)]
    return holding_others
