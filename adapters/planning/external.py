"""Running a trusted external strategy command (a preset's `command`, or a pinned plugin's).

The command gets the normalized transcript as JSON on stdin (items with their summaries, the
session's usage, the policy) and answers `{"edits": [...]}` in the Edit IR on stdout; an empty
list defers. It runs without a shell, in its own process group,
with a cleared environment (PATH kept), a deadline that kills the whole group, and bounded
output. Its proposal then passes the same gates as a built-in strategy: projection and minimum
savings (core.strategies.external), then host admission. Every failure is an ExternalError
with a closed code and a one-line message.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from ...core.admission import AdmissionCode, admit
from ...core.edits import EDITS_ADAPTER, CompactionPlan, ElideEdit, InjectDigestEdit, NoPlan
from ...core.limits import (
    EXTERNAL_MAX_ARGS,
    EXTERNAL_MAX_STDERR_BYTES,
    EXTERNAL_MAX_STDOUT_BYTES,
    EXTERNAL_MAX_TIMEOUT_SECS,
    EXTERNAL_STDERR_EXCERPT_CHARS,
)
from ...core.model import Transcript
from ...core.policy import PolicyConfig
from ...core.report import lifetime_of
from ...core.strategies.common import NO_CONTEXT, prefix_safe
from ...core.strategies.external import AGENTIC_ID, EXTERNAL_ID, plan_from_edits

STRATEGY_ID = EXTERNAL_ID
PROTOCOL = "gobtui-external-v1"
_CHUNK = 64 * 1024


class ExternalErrorCode(StrEnum):
    NOT_TRUSTED = "not_trusted"
    INVALID_COMMAND = "invalid_command"
    SPAWN_FAILED = "spawn_failed"
    TIMEOUT = "timeout"
    NONZERO_EXIT = "nonzero_exit"
    STDOUT_TOO_LARGE = "stdout_too_large"
    STDERR_TOO_LARGE = "stderr_too_large"
    BAD_JSON = "bad_json"
    BAD_EDITS = "bad_edits"
    SOURCE_MISMATCH = "source_mismatch"
    INADMISSIBLE = "inadmissible"
    STDIN_TOO_LARGE = "stdin_too_large"
    INVALID_PLUGIN = "invalid_plugin"
    PLUGIN_CHANGED = "plugin_changed"


@dataclass(frozen=True)
class Launch:
    """How a command runs: its argv (no shell), folder, the variables it gets besides PATH,
    whether it sees item summaries (transcript text), and its bounds."""

    argv: list[str]
    cwd: Path | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    summaries: bool = True
    max_stdin_bytes: int | None = None
    max_stdout_bytes: int = EXTERNAL_MAX_STDOUT_BYTES
    source: str = "external command"
    """What proposed the edits, in the plan's rationale and in messages."""


class ExternalError(Exception):
    """A one-line message. `admission_code` is set when host admission refused the plan."""

    def __init__(
        self,
        code: ExternalErrorCode,
        message: str,
        *,
        admission_code: AdmissionCode | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.admission_code = admission_code


def transcript_input(
    transcript: Transcript,
    source_sha256: str,
    policy: PolicyConfig,
    *,
    summaries: bool = True,
    strategy_id: str = STRATEGY_ID,
) -> dict[str, Any]:
    """What the command reads on stdin, as the reference's payload has it: the items (each
    with its short summary, None when `summaries` is off) and the session's usage, plus the
    policy and the source's digest to echo. No payloads: an item's content stays in the file."""
    summary = transcript.summary
    lifetime = lifetime_of(summary) if summary is not None else None
    life = summary.lifetime if summary is not None else None
    window = summary.context_window if summary is not None else None
    cached = life.cache_read_tokens if life is not None else None
    if lifetime is None:
        lifetime_input = None
    elif not transcript.provider.traits.cached_input_apart:  # Codex: cached inside input
        lifetime_input = lifetime["input_tokens"]
    else:
        lifetime_input = sum(
            lifetime[key] or 0
            for key in ("input_tokens", "cache_creation_tokens", "cache_read_tokens")
        )
    return {
        "protocol": PROTOCOL,
        "protocol_version": 1,
        "operation": "strategy",
        "strategy": strategy_id,
        "session_id": transcript.session_id,
        "provider": transcript.provider.value,
        "provider_id": transcript.provider.traits.reference_id or transcript.provider.value,
        "source_sha256": source_sha256,
        "items": [
            {
                "line_index": item.line_index,
                "kind": item.kind.value,
                "est_tokens": item.est_tokens,
                "active": item.active,
                "elidable": item.elidable,
                "elidable_bytes": item.elidable_bytes,
                "elidable_parts": item.elidable_parts,
                "label": item.label,
                "summary": item.summary if summaries else None,
                "uuid": item.uuid,
                "parent_uuid": item.parent_uuid,
                "tool_use_ids": list(item.tool_use_ids),
                "payload_sha256": item.payload_sha256,
            }
            for item in transcript.items
        ],
        "usage": {
            "context_tokens": transcript.context_tokens(),
            "context_window": window,
            "model_context_window": window,
            "lifetime_input_tokens": lifetime_input,
            "lifetime_cached_tokens": cached,
            "lifetime_output_tokens": lifetime["output_tokens"] if lifetime else None,
        },
        "policy": policy.model_dump(mode="json"),
    }


def run_external(
    command: list[str] | Launch,
    transcript: Transcript,
    source_sha256: str,
    policy: PolicyConfig,
    *,
    trusted: bool,
    timeout_secs: float,
    strategy_id: str = STRATEGY_ID,
) -> CompactionPlan | NoPlan:
    """Run `command` on `transcript` and turn its proposal into an admitted plan (or NoPlan).

    Nothing runs unless `trusted`. `agentic` takes file edits only (elide, inject_digest):
    a provider control or a cache_edit is the host's to decide, not a proposal's."""
    launch = command if isinstance(command, Launch) else Launch(list(command))
    if not trusted:
        raise ExternalError(
            ExternalErrorCode.NOT_TRUSTED,
            "external command not trusted: set trusted_legacy_command = true in its preset",
        )
    _check_command(launch.argv, timeout_secs)
    payload = transcript_input(
        transcript, source_sha256, policy, summaries=launch.summaries, strategy_id=strategy_id
    )
    stdin = orjson.dumps(payload)
    if launch.max_stdin_bytes is not None and len(stdin) > launch.max_stdin_bytes:
        raise ExternalError(
            ExternalErrorCode.STDIN_TOO_LARGE,
            f"{launch.source} input is {len(stdin)} bytes, over its limit of "
            f"{launch.max_stdin_bytes}",
        )
    stdout = _run(launch, stdin, timeout_secs)
    edits = _parse_reply(stdout, source_sha256)
    if strategy_id == AGENTIC_ID:
        other = next((e for e in edits if not isinstance(e, ElideEdit | InjectDigestEdit)), None)
        if other is not None:
            raise ExternalError(
                ExternalErrorCode.BAD_EDITS,
                f"agentic proposes file edits only (elide, inject_digest), not {other.op}",
            )
    outcome = plan_from_edits(strategy_id, edits, transcript, policy, launch.source)
    if isinstance(outcome, NoPlan):
        return outcome
    # The command need not know preserved thinking: the host adds what its rule leaves out.
    outcome = prefix_safe(outcome, transcript, NO_CONTEXT) or outcome
    verdict = admit(outcome, transcript, policy)
    if not verdict.admitted:
        raise ExternalError(
            ExternalErrorCode.INADMISSIBLE,
            f"external plan refused by admission: {verdict.message}",
            admission_code=verdict.code,
        )
    return outcome


def _check_command(command: list[str], timeout_secs: float) -> None:
    if (
        not command
        or not command[0]
        or len(command) > EXTERNAL_MAX_ARGS
        or any(not isinstance(arg, str) or "\0" in arg for arg in command)
    ):
        raise ExternalError(
            ExternalErrorCode.INVALID_COMMAND,
            f"external command must be a program and at most {EXTERNAL_MAX_ARGS - 1} arguments",
        )
    if not 0 < timeout_secs <= EXTERNAL_MAX_TIMEOUT_SECS:
        raise ExternalError(
            ExternalErrorCode.INVALID_COMMAND,
            f"external timeout must be 0..{EXTERNAL_MAX_TIMEOUT_SECS:g} seconds",
        )


def _run(launch: Launch, stdin: bytes, timeout_secs: float) -> bytes:
    """The command's stdout; raises ExternalError on failure, timeout or oversize output."""
    command = launch.argv
    name = os.path.basename(command[0])
    environment = {**launch.environment, "PATH": os.environ.get("PATH", os.defpath)}
    try:
        process = subprocess.Popen(
            command,
            cwd=launch.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            start_new_session=True,  # its own process group: a timeout kills all of it
            close_fds=True,
        )
    except OSError as error:
        raise ExternalError(
            ExternalErrorCode.SPAWN_FAILED, f"cannot run {name!r}: {error.strerror or error}"
        ) from None
    try:
        deadline = time.monotonic() + timeout_secs
        stdout, stderr = _communicate(process, stdin, deadline, name, launch.max_stdout_bytes)
    except BaseException:
        _kill_group(process)
        raise
    if process.returncode != 0:
        status = process.returncode
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        raise ExternalError(
            ExternalErrorCode.NONZERO_EXIT, f"external command {name!r} {how}{_excerpt(stderr)}"
        )
    return stdout


def _communicate(
    process: subprocess.Popen[bytes], stdin: bytes, deadline: float, name: str, max_stdout: int
) -> tuple[bytes, bytes]:
    """Feed stdin and drain both pipes at once (no deadlock on big inputs), within bounds."""
    assert process.stdin and process.stdout and process.stderr
    limits = {
        process.stdout.fileno(): (max_stdout, ExternalErrorCode.STDOUT_TOO_LARGE),
        process.stderr.fileno(): (EXTERNAL_MAX_STDERR_BYTES, ExternalErrorCode.STDERR_TOO_LARGE),
    }
    received: dict[int, bytearray] = {fd: bytearray() for fd in limits}
    sent = 0
    with selectors.DefaultSelector() as selector:
        for fd in limits:
            selector.register(fd, selectors.EVENT_READ)
        stdin_fd = process.stdin.fileno()
        os.set_blocking(stdin_fd, False)
        selector.register(stdin_fd, selectors.EVENT_WRITE)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _timeout(name)
            for key, _ in selector.select(remaining):
                fd = key.fd
                if fd == stdin_fd:
                    try:
                        sent += os.write(fd, stdin[sent : sent + _CHUNK])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # it stopped reading: its answer still counts
                        sent = len(stdin)
                    if sent >= len(stdin):
                        selector.unregister(fd)
                        process.stdin.close()
                    continue
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    selector.unregister(fd)
                    continue
                received[fd] += chunk
                limit, code = limits[fd]
                if len(received[fd]) > limit:
                    stream = "stdout" if code is ExternalErrorCode.STDOUT_TOO_LARGE else "stderr"
                    raise ExternalError(
                        code, f"external command {name!r} wrote over {limit} bytes to {stream}"
                    )
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise _timeout(name) from None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    process.stdout.close()
    process.stderr.close()
    return bytes(received[out_fd]), bytes(received[err_fd])


def _timeout(name: str) -> ExternalError:
    return ExternalError(ExternalErrorCode.TIMEOUT, f"external command {name!r} timed out")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started, then reap it.

    The leader is reaped only after the kill, so its process group id cannot have been reused.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _excerpt(stderr: bytes) -> str:
    """The last stderr line, cut short and printable, to say why the command failed."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return ""
    last = "".join(ch if ch.isprintable() else " " for ch in lines[-1].strip())
    if len(last) > EXTERNAL_STDERR_EXCERPT_CHARS:
        last = last[: EXTERNAL_STDERR_EXCERPT_CHARS - 1] + "…"
    return f": {last}"


def _parse_reply(stdout: bytes, source_sha256: str) -> list[Any]:
    try:
        reply = orjson.loads(stdout)
    except orjson.JSONDecodeError as error:
        raise ExternalError(
            ExternalErrorCode.BAD_JSON, f"external command output is not JSON ({error.msg})"
        ) from None
    if not isinstance(reply, dict) or not isinstance(reply.get("edits"), list):
        raise ExternalError(
            ExternalErrorCode.BAD_JSON,
            'external command output must be an object {"edits": [...]}',
        )
    # protocol_version and a null inspection are the reference's plugin reply; both allowed.
    if reply.get("protocol_version", 1) != 1 or reply.get("inspection") is not None:
        raise ExternalError(
            ExternalErrorCode.BAD_JSON,
            "external command output must be protocol_version 1 with no inspection",
        )
    extra = sorted(set(reply) - {"edits", "source_sha256", "protocol_version", "inspection"})
    if extra:
        raise ExternalError(
            ExternalErrorCode.BAD_JSON,
            f"external command output has {len(extra)} unknown key(s), first {extra[0][:40]!r}",
        )
    echoed = reply.get("source_sha256")
    if echoed is not None and echoed != source_sha256:
        raise ExternalError(
            ExternalErrorCode.SOURCE_MISMATCH,
            "external command answered for another source (source_sha256 differs)",
        )
    try:
        return list(EDITS_ADAPTER.validate_python(reply["edits"]))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ExternalError(
            ExternalErrorCode.BAD_EDITS,
            f"external command proposed invalid edits ({error.error_count()} errors; "
            f"first at edits.{where}: {first['msg']})",
        ) from None
