"""`gobtui mcp` against what a hostile or careless client sends (issue 34, item 11): a policy
that would run a command, paths outside the provider homes, card fields that are tool output,
and lines that are not JSON-RPC requests. The real server in a subprocess, the SDK's client."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from gobtui.adapters.config.paths import config_path
from gobtui.cli.dispatch import main
from gobtui.core.limits import MCP_LINE_MAX_BYTES
from tests.gobtui.corpus_home import LOW, SESSION, source
from tests.gobtui.test_mcp_server import answer, error_text, server

__all__ = ["source"]  # a fixture, used by name

pytestmark = pytest.mark.timeout(120)

MARKER_SCRIPT = """\
import json, pathlib, sys
sys.stdin.read()
pathlib.Path(sys.argv[1]).write_text("ran")
sys.stdout.write(json.dumps({"edits": []}))
"""


async def test_a_policy_that_runs_a_command_is_refused_before_it_runs(
    source: Path, tmp_path: Path
) -> None:
    script, marker = tmp_path / "compactor.py", tmp_path / "ran"
    script.write_text(MARKER_SCRIPT)
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(
        "[presets.runner]\n"
        f"command = [{str(sys.executable)!r}, {str(script)!r}, {str(marker)!r}]\n"
        "trusted_legacy_command = true\n"
        f'[sessions."{SESSION}"]\n'
        'preset = "runner"\n'
        "trigger_tokens = 20000\n"
        "floor_tokens = 5000\n"
    )
    async with Client(server()) as client:
        planned = await client.call_tool("plan", {"session": SESSION})
        trigger = await client.call_tool("plan", {"session": SESSION[:8], "trigger": 20_000})
        elided = await client.call_tool("plan", {"session": SESSION, "strategy": "elide"})
    assert "not offered over MCP" in error_text(planned)
    assert "not offered over MCP" in error_text(trigger)
    assert not marker.exists()  # refused from the policy: the command never ran
    assert not elided.is_error  # a built-in strategy named explicitly still plans


def _params(*argv: str, cwd: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "gobtui.cli", *argv], env=dict(os.environ), cwd=cwd
    )


async def test_plan_and_verify_read_only_inside_the_provider_homes(
    source: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    copy = outside / "copy.jsonl"
    shutil.copyfile(source, copy)  # a transcript, but not in a home
    (outside / "stolen").write_bytes(source.read_bytes())  # a bare name in the server's cwd
    link = source.parent / "link.jsonl"
    link.symlink_to(copy)  # inside the home, pointing out of it
    missing = outside / "missing.jsonl"
    answers: dict[tuple[str, str], CallToolResult] = {}
    async with Client(_params("mcp", cwd=outside)) as client:
        for tool in ("plan", "verify"):
            for name, selector in (("copy", copy), ("missing", missing), ("link", link)):
                answers[tool, name] = await client.call_tool(tool, {"session": str(selector)})
            answers[tool, "bare"] = await client.call_tool(tool, {"session": "stolen"})
            answers[tool, "unknown"] = await client.call_tool(tool, {"session": "nothere"})
            answers[tool, "inside"] = await client.call_tool(tool, {"session": str(source)})
    for tool in ("plan", "verify"):
        told = {
            name: error_text(answers[tool, name]).replace(str(selector), "PATH")
            for name, selector in (("copy", copy), ("missing", missing), ("link", link))
        }
        # One message whether the file exists or not: no existence oracle.
        assert told["copy"] == told["missing"] == told["link"], told
        assert "outside the provider homes" in told["copy"]
        # A file in the server's cwd named like an id: answered as an id matching nothing.
        bare = error_text(answers[tool, "bare"]).replace("stolen", "ID")
        assert bare == error_text(answers[tool, "unknown"]).replace("nothere", "ID")
        assert "no session matches" in bare
        assert not answers[tool, "inside"].is_error


async def test_the_homes_are_those_the_server_was_started_with(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other-home"
    shutil.copytree(source.parents[2], other)  # a second claude home, named by the flag
    moved = other / source.relative_to(source.parents[2])
    async with Client(_params("mcp", "--claude-home", str(other))) as client:
        named = await client.call_tool("verify", {"session": str(moved)})
        default = await client.call_tool("verify", {"session": str(source)})
    assert not named.is_error
    assert "outside the provider homes" in error_text(default)  # the env's home is not one now


async def test_card_fields_that_are_transcript_text_need_the_content_flag(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SESSION[:8], "--strategy", "compacted", *LOW, "--yes", "--json"]) == 0
    fork = orjson.loads(capsys.readouterr().out)["session_id"]  # its snapshot holds the card
    calls = {
        "recall": {"session": fork},
        "context_pack": {"entities": [fork], "budget_tokens": 4_000},
        "delta": {"session_id": "agent", "budget_tokens": 4_000, "since": "30d"},
    }
    seen: dict[str, dict[str, str]] = {}
    for flags in ((), ("--allow-transcript-content",)):
        async with Client(server(*flags)) as client:
            seen[" ".join(flags)] = {
                tool: json.dumps(answer(await client.call_tool(tool, arguments)))
                for tool, arguments in calls.items()
            }
    for tool in calls:
        withheld, shown = seen[""][tool], seen["--allow-transcript-content"][tool]
        # The failing test's output and the assistant's to-do are in the card, shown only
        # with the flag; the card's snapshot and its files are there either way.
        assert "1302 == 1299" in shown and "coupon tests" in shown, tool
        assert "1302 == 1299" not in withheld and "coupon tests" not in withheld, tool
        assert "shop/checkout" in withheld, tool
    assert '"card": {' in seen[""]["recall"] and '"covers_items"' in seen[""]["recall"]


async def test_recall_does_not_match_a_query_against_withheld_fields(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SESSION[:8], "--strategy", "compacted", *LOW, "--yes", "--json"]) == 0
    capsys.readouterr()
    found: dict[bool, Any] = {}
    for allowed in (False, True):
        async with Client(server(*(["--allow-transcript-content"] if allowed else []))) as client:
            found[allowed] = answer(await client.call_tool("recall", {"query": "1302"}))
    assert found[True]["results"] and found[False]["results"] == []  # no oracle by guessing


BAD_LINES = [
    (b"{not json\n", -32700, None),
    (b'\xff\xfe{"jsonrpc": "2.0"}\n', -32700, None),  # not UTF-8
    (b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]\n', -32600, None),  # a batch
    (b"[]\n", -32600, None),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}\n', -32600, None),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\n', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": 12}\n', -32600, 7),
    (b"42\n", -32600, None),
]


def _reply(proc: subprocess.Popen[bytes], timeout: float = 15) -> dict[str, Any]:
    """One line of the server's stdout, within `timeout` seconds (a missing answer fails
    the test instead of hanging it)."""
    assert proc.stdout is not None
    fd, data, deadline = proc.stdout.fileno(), b"", time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        assert ready, f"no answer within {timeout}s (got {data!r})"
        chunk = os.read(fd, 1)
        assert chunk, "the server closed its stdout"
        data += chunk
    reply: dict[str, Any] = json.loads(data)
    return reply


def test_a_line_that_is_no_request_is_answered_and_the_server_reads_on() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "gobtui.cli", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    assert proc.stdin is not None
    try:
        for n, (line, code, request_id) in enumerate(BAD_LINES):
            proc.stdin.write(line)
            proc.stdin.flush()
            error = _reply(proc)
            assert (error["id"], error["error"]["code"]) == (request_id, code), line
            ping = {"jsonrpc": "2.0", "id": 100 + n, "method": "ping"}
            proc.stdin.write(json.dumps(ping).encode() + b"\n")
            proc.stdin.flush()
            assert _reply(proc) == {"jsonrpc": "2.0", "id": 100 + n, "result": {}}, line
        # A client's error response may carry a null id: it is no request, so not answered.
        nothing = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}
        ping = {"jsonrpc": "2.0", "id": 999, "method": "ping"}
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (nothing, ping)))
        proc.stdin.flush()
        assert _reply(proc)["id"] == 999
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_a_line_over_the_bound_is_answered_without_being_held() -> None:
    """A request line over MCP_LINE_MAX_BYTES (a valid request, padded) is refused with -32600
    and read past in bounded pieces; the next line is served as usual."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gobtui.cli", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    assert proc.stdin is not None
    try:
        pad = "x" * (MCP_LINE_MAX_BYTES + 10)
        huge = {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"pad": pad}}
        proc.stdin.write(json.dumps(huge).encode() + b"\n")
        proc.stdin.flush()
        error = _reply(proc, timeout=30)
        assert (error["id"], error["error"]["code"]) == (None, -32600)
        assert "at most" in error["error"]["message"]
        fits = {"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"pad": "x" * 100_000}}
        for request in (fits, {"jsonrpc": "2.0", "id": 7, "method": "ping"}):
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
            assert _reply(proc) == {"jsonrpc": "2.0", "id": request["id"], "result": {}}
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0
