"""The trusted external strategy runner, driven by tiny real Python scripts."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.planning.external import ExternalError, ExternalErrorCode, run_external
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.core.admission import AdmissionCode
from gobtui.core.edits import CompactionPlan, NoPlan, NoPlanReason
from gobtui.core.limits import EXTERNAL_MAX_STDERR_BYTES, EXTERNAL_MAX_STDOUT_BYTES
from gobtui.core.model import Provider, Transcript
from gobtui.core.policy import PolicyConfig

# codex-window (oracle): elidable tool outputs on lines 3 and 7; 7 is the newest, so protected.
POLICY = PolicyConfig(
    trigger_tokens=100, floor_tokens=10, keep_recent_tool_outputs=1, min_savings_tokens=0
)
Script = Callable[[str], list[str]]


@pytest.fixture
def codex(fixture_copy: Any) -> tuple[Transcript, str]:
    path: Path = fixture_copy("oracle/codex-window.jsonl")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return parse_transcript(Provider.CODEX, str(path)), sha


@pytest.fixture
def script(tmp_path: Path) -> Script:
    """script(body) -> a command running `body` (Python) with json, os, sys imported."""
    counter = iter(range(1000))

    def make(body: str) -> list[str]:
        path = tmp_path / f"strategy{next(counter)}.py"
        path.write_text("import json, os, sys\n" + body, encoding="utf-8")
        return [sys.executable, str(path)]

    return make


def reply(edits: list[dict[str, Any]], **extra: Any) -> str:
    return f"sys.stdout.write({json.dumps(json.dumps({'edits': edits, **extra}))})\n"


def run(
    command: list[str], codex: tuple[Transcript, str], **kwargs: Any
) -> CompactionPlan | NoPlan:
    transcript, sha = codex
    options: dict[str, Any] = {"trusted": True, "timeout_secs": 20.0} | kwargs
    return run_external(command, transcript, sha, POLICY, **options)


def failure(command: list[str], codex: tuple[Transcript, str], **kwargs: Any) -> ExternalError:
    with pytest.raises(ExternalError) as caught:
        run(command, codex, **kwargs)
    assert "\n" not in str(caught.value)
    return caught.value


def test_trusted_run_produces_an_admitted_plan(
    script: Script,
    codex: tuple[Transcript, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOBTUI_SECRET_MARKER", "must-not-leak")
    seen = tmp_path / "seen.json"
    body = (
        "data = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'w').write(json.dumps({{'input': data, 'env': dict(os.environ)}}))\n"
        "print(json.dumps({'edits': [{'op': 'elide', 'line_indexes': [3]}],"
        " 'source_sha256': data['source_sha256']}))\n"
    )
    plan = run(script(body), codex)
    assert isinstance(plan, CompactionPlan)
    assert plan.strategy == "external"
    assert plan.elided_lines == [3]
    assert plan.context_tokens_before == 211
    assert plan.context_tokens_after < 211

    transcript, sha = codex
    recorded = json.loads(seen.read_text())
    given = recorded["input"]
    assert (given["session_id"], given["provider"], given["source_sha256"]) == (
        transcript.session_id,
        "codex",
        sha,
    )
    assert [i["line_index"] for i in given["items"]] == [i.line_index for i in transcript.items]
    third = next(i for i in given["items"] if i["line_index"] == 3)
    assert third["kind"] == "tool_result" and third["elidable_bytes"] == 300 and third["active"]
    assert set(third) >= {"est_tokens", "label", "tool_use_ids"}
    assert given["usage"]["context_tokens"] == 211
    assert "context_window" in given["usage"]
    # A cleared environment: PATH kept (Python may add its locale coercion), nothing else.
    env = recorded["env"]
    assert "GOBTUI_SECRET_MARKER" not in env
    assert env["PATH"] == os.environ["PATH"]
    assert set(env) <= {"PATH", "LC_CTYPE"}


def test_not_trusted_never_runs(
    script: Script, codex: tuple[Transcript, str], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    command = script(f"open({str(marker)!r}, 'w').write('x')\n" + reply([]))
    error = failure(command, codex, trusted=False)
    assert error.code is ExternalErrorCode.NOT_TRUSTED
    assert not marker.exists()


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_timeout_kills_the_whole_process_group(
    script: Script, codex: tuple[Transcript, str], tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    body = (
        "import subprocess, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(120)\n"
    )
    error = failure(script(body), codex, timeout_secs=2.0)
    assert error.code is ExternalErrorCode.TIMEOUT
    assert pid_file.exists(), "the script did not start within the timeout"
    grandchild = int(pid_file.read_text())
    try:
        # SIGKILL went to the group; wait (bounded) for the kernel to finish the grandchild.
        for _ in range(1000):
            if _gone(grandchild):
                break
            time.sleep(0.01)
        assert _gone(grandchild)
    finally:
        if not _gone(grandchild):  # a regression must not leave a sleeper behind
            os.kill(grandchild, signal.SIGKILL)


def test_bad_json(script: Script, codex: tuple[Transcript, str]) -> None:
    error = failure(script("print('not json')\n"), codex)
    assert error.code is ExternalErrorCode.BAD_JSON
    assert failure(script("print('[]')\n"), codex).code is ExternalErrorCode.BAD_JSON
    extra = script(reply([], note="x"))
    assert failure(extra, codex).code is ExternalErrorCode.BAD_JSON


def test_invalid_edits(script: Script, codex: tuple[Transcript, str]) -> None:
    error = failure(script(reply([{"op": "explode"}])), codex)
    assert error.code is ExternalErrorCode.BAD_EDITS
    assert "edits.0" in str(error)


def test_non_zero_exit_quotes_the_last_stderr_line(
    script: Script, codex: tuple[Transcript, str]
) -> None:
    body = "sys.stderr.write('warming up\\nboom: no model\\n')\nsys.exit(3)\n"
    error = failure(script(body), codex)
    assert error.code is ExternalErrorCode.NONZERO_EXIT
    assert "status 3" in str(error) and str(error).endswith(": boom: no model")
    assert "warming up" not in str(error)


def test_empty_edits_defer(script: Script, codex: tuple[Transcript, str]) -> None:
    outcome = run(script(reply([])), codex)
    assert isinstance(outcome, NoPlan)
    assert outcome.reason_code is NoPlanReason.EMPTY_EXTERNAL_EDITS


def test_non_reducing_proposal_is_no_plan(script: Script, codex: tuple[Transcript, str]) -> None:
    outcome = run(script(reply([{"op": "inject_digest", "digest": {"goal": "g"}}])), codex)
    assert isinstance(outcome, NoPlan)
    assert outcome.reason_code is NoPlanReason.EXTERNAL_NONREDUCING_PLAN


@pytest.mark.parametrize(
    ("lines", "code"),
    [([7], AdmissionCode.PROTECTED_TAIL), ([3, 5], AdmissionCode.LINE_NOT_ELIDABLE)],
)
def test_inadmissible_edits_are_refused(
    script: Script, codex: tuple[Transcript, str], lines: list[int], code: AdmissionCode
) -> None:
    error = failure(script(reply([{"op": "elide", "line_indexes": lines}])), codex)
    assert error.code is ExternalErrorCode.INADMISSIBLE
    assert error.admission_code is code
    assert str(code) in str(error)


def test_oversize_output(script: Script, codex: tuple[Transcript, str]) -> None:
    big_out = script(f"sys.stdout.write('x' * {EXTERNAL_MAX_STDOUT_BYTES + 1})\n")
    assert failure(big_out, codex).code is ExternalErrorCode.STDOUT_TOO_LARGE
    big_err = script(f"sys.stderr.write('x' * {EXTERNAL_MAX_STDERR_BYTES + 1})\n" + reply([]))
    assert failure(big_err, codex).code is ExternalErrorCode.STDERR_TOO_LARGE


def test_source_mismatch(script: Script, codex: tuple[Transcript, str]) -> None:
    command = script(reply([], source_sha256="0" * 64))
    assert failure(command, codex).code is ExternalErrorCode.SOURCE_MISMATCH


def test_bad_commands(codex: tuple[Transcript, str], tmp_path: Path) -> None:
    missing = failure([str(tmp_path / "no-such-program")], codex)
    assert missing.code is ExternalErrorCode.SPAWN_FAILED
    assert failure([], codex).code is ExternalErrorCode.INVALID_COMMAND
    assert failure([sys.executable], codex, timeout_secs=0).code is (
        ExternalErrorCode.INVALID_COMMAND
    )


def test_large_input_is_streamed_both_ways(
    script: Script, codex: tuple[Transcript, str], tmp_path: Path
) -> None:
    """Input far over a pipe buffer: delivered whole, and no deadlock if the command never
    reads it."""
    transcript, sha = codex
    items = [
        dataclasses.replace(item, line_index=item.line_index + 10 * n)
        for n in range(400)
        for item in transcript.items
    ]
    big = (dataclasses.replace(transcript, items=items), sha)
    count = tmp_path / "count"
    reads = script(
        f"open({str(count)!r}, 'w').write(str(len(json.load(sys.stdin)['items'])))\n" + reply([])
    )
    assert isinstance(run(reads, big), NoPlan)
    assert int(count.read_text()) == len(items)
    ignores = script(reply([]))
    assert isinstance(run(ignores, big), NoPlan)
