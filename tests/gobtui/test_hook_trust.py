"""`gobtui hook <event>` trusts the transcript, not the payload: run as the clients run it
(the console script, the payload on stdin) in real homes. A payload naming another session
files the snapshot under the transcript's own session, and that other session is not told
the snapshot is its own; a stdin the client never closes is given up on at the deadline."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.config.paths import data_dir
from gobtui.adapters.vault.vault import Vault
from gobtui.core.limits import HOOK_STDIN_DEADLINE_SECS, HOOK_STDIN_MAX_BYTES
from tests.builders.sessions import claude_work_session, codex_work_session

GOBTUI = Path(sys.executable).with_name("gobtui")
MARGIN_SECS = 10.0
"""Start-up and a loaded machine, on top of the deadline."""


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    codex.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude, codex


def hook(event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [str(GOBTUI), "hook", event], input=json.dumps(payload).encode(),
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    return done


def context_of(done: subprocess.CompletedProcess[bytes]) -> str:
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def log_lines() -> list[str]:
    return (data_dir() / "hooks.log").read_text().splitlines()


@pytest.mark.timeout(300)
def test_a_payload_naming_another_session_files_the_snapshot_under_the_transcripts_own(
    homes: tuple[Path, Path],
) -> None:
    claude, codex = homes
    mine = claude_work_session(20_000, "mine")
    theirs = claude_work_session(20_000, "theirs")
    mine_path = mine.write(claude / "projects")
    theirs_path = theirs.write(claude / "projects")
    assert mine.session_id != theirs.session_id

    claim = {"session_id": theirs.session_id, "transcript_path": str(mine_path)}
    assert hook("pre-compact", claim).stdout == b""
    (entry,) = Vault().history(mine.session_id)
    assert entry.strategy == "pre-compact"
    assert entry.source_sha256 == hashlib.sha256(mine_path.read_bytes()).hexdigest()
    assert Vault().history(theirs.session_id) == []
    assert log_lines()[-1].endswith("note: payload_session_id_not_the_transcripts")

    # The other session compacts and starts again: it is not pointed at mine's snapshot.
    start = {"session_id": theirs.session_id, "transcript_path": str(theirs_path)}
    told = context_of(hook("session-start", {**start, "source": "compact"}))
    assert entry.sha256[:12] not in told
    assert "no snapshot of this session from before its compaction" in told
    # ... and the transcript's own session is.
    own = {"session_id": mine.session_id, "transcript_path": str(mine_path)}
    assert f"snapshot {entry.sha256[:12]}" in context_of(
        hook("session-start", {**own, "source": "compact"})
    )
    # A session-start claiming another's id for mine's transcript tells mine's story too.
    forged = {**claim, "source": "compact"}
    assert f"undo {mine.session_id}" in context_of(hook("session-start", forged))
    assert [e.strategy for e in Vault().history(theirs.session_id)] == ["post-compact"]

    rollout = codex_work_session(20_000, "mine")
    rollout_path = rollout.write(codex / "sessions")
    hook("pre-compact", {"session_id": theirs.session_id, "transcript_path": str(rollout_path)})
    (codex_entry,) = Vault().history(rollout.session_id)
    assert codex_entry.provider.value == "codex"
    assert [e.strategy for e in Vault().history(theirs.session_id)] == ["post-compact"]


@pytest.mark.timeout(HOOK_STDIN_DEADLINE_SECS + 2 * MARGIN_SECS)
def test_a_stdin_never_closed_is_given_up_on_at_the_deadline(
    homes: tuple[Path, Path], tmp_path: Path
) -> None:
    claude, _ = homes
    session = claude_work_session(20_000, "open")
    path = session.write(claude / "projects")
    err = tmp_path / "stderr"
    with err.open("wb") as err_file:
        proc = subprocess.Popen(
            [str(GOBTUI), "hook", "pre-compact"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file,
        )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        started = time.monotonic()
        payload = {"session_id": session.session_id, "transcript_path": str(path)}
        proc.stdin.write(json.dumps(payload).encode())  # whole, but the pipe stays open
        proc.stdin.flush()
        code = proc.wait(timeout=HOOK_STDIN_DEADLINE_SECS + MARGIN_SECS)
        took = time.monotonic() - started
    finally:
        proc.kill()
        proc.stdin.close()
    assert code == 0 and proc.stdout.read() == b""
    proc.stdout.close()
    assert HOOK_STDIN_DEADLINE_SECS <= took < HOOK_STDIN_DEADLINE_SECS + MARGIN_SECS
    said = err.read_text()
    assert said.count("\n") == 1 and "stdin was not closed within" in said
    assert log_lines()[-1].endswith("skipped: payload_stdin_not_closed")
    assert Vault().entries() == []


@pytest.mark.timeout(HOOK_STDIN_DEADLINE_SECS + 2 * MARGIN_SECS)
def test_a_payload_over_the_bound_on_an_open_stdin_is_dropped_without_waiting(
    homes: tuple[Path, Path],
) -> None:
    proc = subprocess.Popen(
        [str(GOBTUI), "hook", "pre-compact"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        started = time.monotonic()
        proc.stdin.write(b" " * (HOOK_STDIN_MAX_BYTES + 1))  # read to the bound, then let go
        proc.stdin.flush()
        code = proc.wait(timeout=HOOK_STDIN_DEADLINE_SECS + MARGIN_SECS)
        took = time.monotonic() - started
    finally:
        proc.kill()
        proc.stdin.close()
    assert code == 0 and proc.stdout.read() == b""
    proc.stdout.close()
    assert took < HOOK_STDIN_DEADLINE_SECS
    assert log_lines()[-1].endswith("skipped: payload_too_large")
