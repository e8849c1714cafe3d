"""`gobtui mcp` as an agent meets it: the real server in a subprocess, the SDK's own client over
stdio, a real fixture in a temporary home. Every tool reads; none writes a transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, TextContent

from gobtui.adapters.config.paths import config_path
from gobtui.cli.dispatch import main
from tests.corpus.spec_config import SPEC_CONFIG
from tests.gobtui.corpus_home import LOW, SESSION, source

__all__ = ["source"]  # a fixture, used by name

READ_TOOLS = {
    "policy_check",
    "list_sessions",
    "recall",
    "history",
    "show",
    "diff",
    "plan",
    "verify",
    "context_pack",
    "delta",
}
CONTENT_TOOLS = {"search_snapshot", "read_snapshot"}


def server(*flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "gobtui.cli", "mcp", *flags], env=dict(os.environ)
    )


def answer(result: CallToolResult) -> Any:
    """The tool's JSON answer (Any: its shape is the tool's)."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(first_text(result))


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return first_text(result)


def first_text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def test_the_tools_are_read_only_and_content_is_opt_in(source: Path) -> None:
    async with Client(server()) as client:
        tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == READ_TOOLS
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools)
    async with Client(server("--allow-transcript-content")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == READ_TOOLS | CONTENT_TOOLS


async def test_sessions_policy_plan_and_verify_answer_and_write_nothing(source: Path) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("[policy]\ntrigger_tokens = 20000\nfloor_tokens = 5000\n")
    original, files = source.read_bytes(), sorted(source.parent.iterdir())
    async with Client(server()) as client:
        sessions = answer(await client.call_tool("list_sessions", {"all_sessions": True}))
        decision = answer(
            await client.call_tool(
                "policy_check",
                {"provider": "claude", "context_tokens": 300_000, "session_active": True},
            )
        )
        planned = answer(
            await client.call_tool("plan", {"session": SESSION[:8], "strategy": "elide"})
        )
        checked = answer(await client.call_tool("verify", {"session": SESSION}))
    (row,) = [s for s in sessions if s["session_id"] == SESSION]
    assert "title" not in row and row["over_trigger"] is True and row["provider"] == "claude"
    assert (decision["action"], decision["control"]) == ("provider_compact", "/compact")
    assert planned["status"] == "plan" and planned["strategy"] == "elide"
    assert planned["context_tokens_after"] < planned["context_tokens_before"]
    assert planned["admitted"] is True and planned["edits"]
    assert checked["errors"] == 0 and checked["records"] > 0
    assert source.read_bytes() == original and sorted(source.parent.iterdir()) == files


async def test_the_vault_tools_after_a_real_apply(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SESSION[:8], "--strategy", "elide", *LOW, "--yes", "--json"]) == 0
    fork_id = orjson.loads(capsys.readouterr().out)["session_id"]
    async with Client(server("--allow-transcript-content")) as client:
        history = answer(await client.call_tool("history", {"session": SESSION[:8]}))
        shown = answer(await client.call_tool("show", {"snapshot": history[0]["sha256"][:12]}))
        found = answer(
            await client.call_tool("search_snapshot", {"snapshot": shown["sha256"], "query": "a"})
        )
        page = answer(
            await client.call_tool("read_snapshot", {"snapshot": shown["sha256"], "record": 0})
        )
    assert [e["session_id"] for e in history] == [SESSION]
    assert shown["sha256"] == history[0]["sha256"] and shown["bytes"] == len(source.read_bytes())
    assert found["matched_records"] > 0 and page["record_index"] == 0 and page["content"]
    assert fork_id != SESSION


async def test_bad_calls_are_tool_errors_and_the_server_carries_on(source: Path) -> None:
    async with Client(server()) as client:
        unknown = await client.call_tool("plan", {"session": "no-such-session"})
        external = await client.call_tool("plan", {"session": SESSION, "strategy": "external"})
        provider = await client.call_tool(
            "policy_check", {"provider": "gemini", "context_tokens": 1}
        )
        short = await client.call_tool("show", {"snapshot": "ab"})
        content = await client.call_tool("read_snapshot", {"snapshot": "abcd", "record": 0})
        still = answer(await client.call_tool("list_sessions", {"all_sessions": True}))
    assert "no-such-session" in error_text(unknown)
    assert "not offered over MCP" in error_text(external)
    assert "unknown provider" in error_text(provider)
    assert "at least 4 characters" in error_text(short)
    assert content.is_error  # not offered without --allow-transcript-content
    assert all("\n" not in error_text(r) for r in (unknown, external, provider, short))
    assert [s["session_id"] for s in still] == [SESSION]


def test_a_malformed_request_gets_a_protocol_error_not_a_crash(source: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    lines = [b"{not json\n", b'{"jsonrpc": "2.0", "id": 7, "method": 12}\n', b"[]\n"]
    lines.append(b'{"jsonrpc": "2.0", "id": 8, "method": "sessions/delete", "params": {}}\n')
    lines.append(json.dumps(initialize).encode() + b"\n")
    done = subprocess.run(
        [sys.executable, "-m", "gobtui.cli", "mcp"],
        input=b"".join(lines),
        capture_output=True,
        timeout=60,
        env=dict(os.environ),
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert any(r.get("id") == 1 and "result" in r for r in replies), done.stderr[-500:]
    assert [r["error"]["code"] for r in replies if r.get("id") == 8] == [-32601]
    assert b"Traceback" not in done.stderr
    assert done.returncode == 0


def test_print_config_names_every_client(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--print-config"]) == 0
    out = capsys.readouterr().out
    assert "claude mcp add gobtui -- gobtui mcp" in out and "[mcp_servers.gobtui]" in out
    assert "devin mcp add -s user gobtui -- gobtui mcp" in out.splitlines()


@pytest.mark.timeout(120)
async def test_policy_check_takes_devin_and_the_reference_s_provider_names() -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_bytes(SPEC_CONFIG.read_bytes())  # [provider.devin] trigger 200k
    async with Client(server()) as client:

        async def check(provider: str, tokens: int) -> Any:
            arguments = {"provider": provider, "context_tokens": tokens}
            return await client.call_tool("policy_check", arguments)

        over = answer(await check("devin", 200_000))
        under = answer(await check("devin", 199_999))
        claude = answer(await check("claude_code", 260_000))
        plain = answer(await check("claude", 260_000))
        unknown = await check("gemini", 1)
    assert (over["action"], over["control"]) == ("provider_compact", "/compact")
    assert over["effective_trigger_tokens"] == 200_000
    assert (under["action"], under["control"]) == ("none", None)
    assert claude == plain and claude["effective_trigger_tokens"] == 250_000
    assert claude["action"] == "transcript_compact"
    assert "'gemini'" in error_text(unknown) and "devin" in error_text(unknown)


async def test_the_reference_s_argument_names_mean_what_they_mean_there(
    source: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["apply", SESSION[:8], "--strategy", "compacted", *LOW, "--yes", "--json"]) == 0
    fork = orjson.loads(capsys.readouterr().out)["session_id"]  # its snapshot holds the card
    check = {"provider": "claude", "context_tokens": 150_000}
    async with Client(server()) as client:
        normal = answer(await client.call_tool("policy_check", check))
        pressed = answer(await client.call_tool("policy_check", check | {"quota_pressure": "high"}))
        spelled = answer(
            await client.call_tool("policy_check", check | {"provider": "claude_code"})
        )
        wide = answer(await client.call_tool("plan", {"session": SESSION, "strategy": "elide"}))
        low = answer(
            await client.call_tool(
                "plan", {"session": SESSION, "strategy": "elide", "trigger": 20_000, "floor": 5_000}
            )
        )
        high = answer(
            await client.call_tool(
                "plan", {"session": SESSION, "strategy": "elide", "trigger": 9_000_000}
            )
        )
        history = answer(await client.call_tool("history", {"session": fork}))
        shas = [entry["sha256"] for entry in history]
        every = answer(await client.call_tool("recall", {"session": fork}))
        elsewhere = answer(await client.call_tool("recall", {"session": SESSION}))
        one = answer(await client.call_tool("recall", {"sha": shas[0][:12]}))
        shown = answer(await client.call_tool("show", {"target": shas[0][:12]}))
        sessions = answer(await client.call_tool("list_sessions", {"all": True}))
        typo = await client.call_tool("plan", {"session": SESSION, "trigerr": 1})
        pressure = await client.call_tool("policy_check", check | {"quota_pressure": "extreme"})
    assert pressed["effective_trigger_tokens"] < normal["effective_trigger_tokens"]
    assert spelled == normal
    assert (
        low["status"] == "plan"
        and high["status"] == "no_plan"
        and wide["status"] in {"plan", "no_plan"}
    )
    assert every["results"] and elsewhere["results"] == []  # `session` narrows, as session_id does
    assert [hit["snapshot_sha256"] for hit in one["results"]] == [shas[0]]
    assert shown["sha256"] == shas[0]
    assert [s["session_id"] for s in sessions if s["session_id"] == SESSION] == [SESSION]
    assert "'trigerr'" in error_text(typo) and "trigger" in error_text(typo)  # never dropped
    assert "quota_pressure" in error_text(pressure)


async def test_mcp_takes_the_home_options_before_and_after_its_verb(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = str(source.parents[2])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nowhere"))
    for argv in (["--claude-home", home, "mcp"], ["mcp", "--claude-home", home]):
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "gobtui.cli", *argv], env=dict(os.environ)
        )
        async with Client(params) as client:
            sessions = answer(await client.call_tool("list_sessions", {"all": True}))
        assert [s["session_id"] for s in sessions] == [SESSION], argv
