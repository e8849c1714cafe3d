"""The real-client suite's own parts, checked without the clients: the model server answers
on loopback only and never forwards, a hung client's whole process group is killed, and a
failing client is reported by its own words."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.clients import run_bounded
from tests.e2e.harness import is_compaction
from tests.e2e.model_server import REPLY, Request, model_server


def post(url: str, body: dict[str, object], headers: dict[str, str] | None = None) -> str:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        data: bytes = answer.read()  # (urlopen's answer is typed Any)
    return data.decode()


def test_the_server_binds_loopback_and_records_what_it_answers() -> None:
    with model_server() as (url, recorder):
        assert url.startswith("http://127.0.0.1:")
        claude = post(
            f"{url}/v1/messages?beta=true", {"model": "m", "stream": True, "messages": []}
        )
        assert "event: message_start" in claude and REPLY in claude
        codex = post(f"{url}/v1/responses", {"model": "gpt", "input": []})
        assert "response.completed" in codex and REPLY in codex
        meta = json.dumps({"request_kind": "compaction"})
        compaction = post(f"{url}/v1/responses", {"input": []}, {"x-codex-turn-metadata": meta})
        done = [
            json.loads(line[6:]) for line in compaction.splitlines() if line.startswith("data: ")
        ]
        (item,) = done[-1]["response"]["output"]
        assert item["type"] == "compaction"  # the one item Codex's own compaction expects
        assert [r.path for r in recorder.model_requests()] == [
            "/v1/messages?beta=true", "/v1/responses", "/v1/responses",
        ]  # fmt: skip
        assert is_compaction(recorder.model_requests()[2])


def test_a_responses_input_with_a_split_tool_pair_gets_the_api_400() -> None:
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    custom = {"type": "custom_tool_call", "name": "apply_patch", "input": "", "call_id": "c2"}
    with model_server() as (url, recorder):
        assert REPLY in post(f"{url}/v1/responses", {"model": "gpt", "input": [call, output]})
        for sent, said in (
            ([call], "No tool output found for function call c1."),
            ([output, call], "No tool call found for function call output with call_id c1."),
            ([custom, {**output, "call_id": "c2"}], "No tool call found"),  # another kind
        ):
            with pytest.raises(urllib.error.HTTPError) as refused:
                post(f"{url}/v1/responses", {"model": "gpt", "input": sent})
            assert refused.value.code == 400
            assert said in json.loads(refused.value.read())["error"]["message"]
        assert len(recorder.rejected) == 3


def test_a_websocket_upgrade_is_refused_so_codex_posts_at_once() -> None:
    with model_server() as (url, _recorder):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}/v1/responses", timeout=10)
        assert refused.value.code == 426


def test_claude_compaction_is_recognised_by_its_summary_instructions() -> None:
    ask = "Respond with an <analysis> block followed by a <summary> block."
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": ask}]}]}
    assert is_compaction(Request("POST", "/v1/messages", {}, b"", body))
    turn = {"messages": [{"role": "user", "content": "continue"}]}
    assert not is_compaction(Request("POST", "/v1/messages", {}, b"", turn))


def test_a_hung_client_fails_with_its_output_and_its_group_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('waiting for the model', file=sys.stderr, flush=True)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    with pytest.raises(AssertionError, match="hung for 2 s and was killed: waiting for the model"):
        run_bounded([sys.executable, "-c", script], dict(os.environ), tmp_path, timeout=2)
    assert time.monotonic() - started < 30
    child = int(pid_file.read_text())
    for _ in range(50):  # the grandchild went with the group
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the client's child survived the kill")


def test_a_failing_client_is_reported_by_its_error_line(tmp_path: Path) -> None:
    script = "import sys; print('Error: No conversation found', file=sys.stderr); sys.exit(1)"
    finished = run_bounded([sys.executable, "-c", script], dict(os.environ), tmp_path)
    assert finished.returncode == 1
    assert finished.first_error() == "Error: No conversation found"
